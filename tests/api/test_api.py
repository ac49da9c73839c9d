"""The REST API through a real uvicorn server on 127.0.0.1 (a free port), on a real workspace."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from oryxtui.api.app import create_api
from oryxtui.config import Settings
from oryxtui.memory import MemoryService
from oryxtui.memory.format import ARCHIVAL_HEADER, CORE_HEADER, Scope, entry_id
from oryxtui.workspace import Workspace
from tests.api_server import RunningApi
from tests.serve_process import ServeProcess
from tests.support import fixed_clock, make_agent, run_oryxtui

CORE_LINE = "- [2026-07-22 09:30:00] prefers tea"


@pytest.fixture
def api_workspace(workspace: Workspace) -> Workspace:
    folder = make_agent(
        workspace,
        "ops",
        "description: On-call helper\ntools: [save_memory]\nprovider:\n  model: qwen\n",
    )
    (folder / "MEMORY.md").write_text(
        f"{CORE_HEADER}\n{CORE_LINE}\n{ARCHIVAL_HEADER}\n"
        "- [2026-07-22 09:31:00] deploy window is Tuesday\n"
    )
    make_agent(workspace, "broken")
    (workspace.agents_dir / "broken" / "AGENT.md").write_text("---\nname: [oops\n---\n")
    return workspace


@pytest.fixture
def client(api_workspace: Workspace) -> Iterator[httpx.Client]:
    with RunningApi(api_workspace) as running:
        yield running


def assert_envelope(body: dict, code: int = 0) -> None:
    assert set(body) == {"code", "message", "data", "timestamp"}
    assert body["code"] == code and isinstance(body["timestamp"], int)
    assert body["timestamp"] > 1_600_000_000_000


def assert_clean(body: dict, workspace: Workspace) -> None:
    text = json.dumps(body)
    assert str(workspace.root) not in text and "/tmp" not in text and "Traceback" not in text


def test_list_agents(client: httpx.Client, api_workspace: Workspace) -> None:
    body = client.get("/api/v1/agents").json()
    assert_envelope(body)
    (ops,) = [a for a in body["data"] if a["name"] == "ops"]
    assert ops == {
        "name": "ops",
        "description": "On-call helper",
        "provider": "offline",
        "model": "qwen",
        "tools": ["save_memory"],
        "has_agent_md": True,
    }
    (broken,) = [a for a in body["data"] if a["name"] == "broken"]
    assert "not valid YAML" in broken["error"]
    assert_clean(body, api_workspace)


def test_memory_is_the_injected_string(client: httpx.Client, api_workspace: Workspace) -> None:
    body = client.get("/api/v1/agents/ops/memory").json()
    assert_envelope(body)
    shown = run_oryxtui("memory", "show", "--root", str(api_workspace.root), "--agent", "ops")
    assert body["data"] == shown.stdout.rstrip("\n")
    assert body["data"].startswith(CORE_HEADER)


def test_entries_save_and_recall(client: httpx.Client) -> None:
    entries = client.get("/api/v1/agents/ops/memory/entries").json()["data"]
    assert entries["core"] == [
        {
            "id": entry_id(Scope.CORE, CORE_LINE),
            "time": "2026-07-22 09:30:00",
            "content": "prefers tea",
        }
    ]
    assert entries["window_start"] == 0
    saved = client.post(
        "/api/v1/agents/ops/memory", json={"content": "line\nbreak", "scope": "core"}
    )
    assert saved.status_code == 200
    assert saved.json()["data"]["content"] == "line break"
    assert saved.json()["data"]["scope"] == "core"
    client.post("/api/v1/agents/ops/memory", json={"content": "Deploy freeze Friday"})
    hits = client.get("/api/v1/agents/ops/memory/recall", params={"keyword": "DEPLOY"}).json()
    assert hits["data"]["mode"] == "hybrid"  # ranked: equal matches, the newer first
    assert [h["content"] for h in hits["data"]["hits"]] == [
        "Deploy freeze Friday",
        "deploy window is Tuesday",
    ]


def test_prompt_is_the_structured_prompt(client: httpx.Client) -> None:
    data = client.get("/api/v1/agents/ops/prompt").json()["data"]
    names = ["identity", "time", "memory", "history", "tools"]
    assert [b["name"] for b in data["blocks"]] == names
    assert "prefers tea" in data["blocks"][2]["text"]


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "fragment"),
    [
        ("GET", "/api/v1/agents/nobody/memory", None, 404, "No agent named 'nobody'"),
        ("GET", "/api/v1/agents/..%2F..%2Fetc/memory", None, 404, ""),
        ("POST", "/api/v1/agents/ops/memory", {"content": "   "}, 400, "empty"),
        ("POST", "/api/v1/agents/ops/memory", {"content": "x", "scope": "episodic"}, 400, "scope"),
        ("POST", "/api/v1/agents/ops/memory", {"content": "x" * 40_000}, 413, "32 KB"),
        ("POST", "/api/v1/agents/ops/memory", {"text": "x"}, 400, "JSON like"),
        ("GET", "/api/v1/agents/ops/memory/recall", None, 400, "keyword"),
        ("GET", "/api/v1/nothing", None, 404, "No such endpoint"),
    ],
)
def test_errors_use_the_envelope_and_leak_nothing(
    client: httpx.Client,
    api_workspace: Workspace,
    method: str,
    path: str,
    body: dict | None,
    status: int,
    fragment: str,
) -> None:
    response = client.request(method, path, json=body)
    assert response.status_code == status
    payload = response.json()
    assert_envelope(payload, status)
    assert fragment in payload["message"]
    assert_clean(payload, api_workspace)


def test_a_refused_write_says_why_without_paths(
    client: httpx.Client, api_workspace: Workspace
) -> None:
    memory_file = api_workspace.agents_dir / "ops" / "MEMORY.md"
    memory_file.write_bytes(memory_file.read_bytes() + b"- \xff\n")
    response = client.post("/api/v1/agents/ops/memory", json={"content": "x"})
    assert response.status_code == 409
    assert "not valid UTF-8" in response.json()["message"]
    assert_clean(response.json(), api_workspace)


def test_a_token_is_required_on_every_request_when_set(api_workspace: Workspace) -> None:
    with RunningApi(api_workspace, token="s3cret") as client:
        refused = client.get("/api/v1/agents")
        assert refused.status_code == 401
        assert_envelope(refused.json(), 401)
        wrong = client.get("/api/v1/agents", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        ok = client.get("/api/v1/agents", headers={"Authorization": "Bearer s3cret"})
        assert ok.status_code == 200


def test_openapi_document(client: httpx.Client) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    assert "/api/v1/agents/{name}/memory" in paths


def test_serve_refuses_a_public_bind_without_a_token(tmp_path: Path) -> None:
    run_oryxtui("init", str(tmp_path))
    result = run_oryxtui("serve", "--root", str(tmp_path), "--host", "0.0.0.0")
    assert result.returncode == 2 and "token" in result.stderr


def test_serve_answers_on_a_demo_workspace(tmp_path: Path) -> None:
    assert run_oryxtui("demo", str(tmp_path / "demo"), "--no-open").returncode == 0
    with ServeProcess(tmp_path / "demo") as server, server.client() as client:
        body = client.get("/api/v1/agents/atlas/memory").json()
    assert_envelope(body)
    assert body["data"].startswith(CORE_HEADER) and "MemGPT" in body["data"]


def test_openapi_documents_every_body(client: httpx.Client) -> None:
    spec = client.get("/openapi.json").json()
    schemas = spec["components"]["schemas"]
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            streams = "text/event-stream" in operation["responses"]["200"]["content"]
            if streams:  # what a stream carries is documented, with an example (issue 46)
                told = operation["responses"]["200"]["content"]["text/event-stream"]
                assert told["schema"] == {"type": "string"} and "data: {" in told["example"]
            for status in ("404", "409") if streams else ("200", "404", "409"):
                body = operation["responses"][status]["content"]["application/json"]["schema"]
                name = body["$ref"].rsplit("/", 1)[1]
                assert set(schemas[name]["properties"]) == {
                    "code",
                    "message",
                    "data",
                    "timestamp",
                    "warnings",
                }
            if method == "post" and path.endswith("/memory"):  # a save; bring-back has none
                schema = operation["requestBody"]["content"]["application/json"]["schema"]
                assert set(schema["properties"]) == {"content", "scope"}, path
    entries = schemas["Envelope_MemoryEntries_"]["properties"]["data"]["anyOf"][0]["$ref"]
    assert entries.endswith("/MemoryEntries")
    assert set(schemas["MemoryEntries"]["properties"]) >= {"core", "archival", "window_start"}


def test_the_services_on_app_state_can_be_replaced(api_workspace: Workspace) -> None:
    """A test (or an embedding program) hands the app its own memory service: here one whose
    clock is fixed, so a save over HTTP gets a known time."""
    app = create_api(api_workspace, Settings())
    app.state.oryx.memory = MemoryService.open(api_workspace, Settings(), clock=fixed_clock)
    with RunningApi(api_workspace, app=app) as client:
        saved = client.post("/api/v1/agents/ops/memory", json={"content": "pinned"}).json()
    stamp = fixed_clock().strftime("%Y-%m-%d %H:%M:%S")
    assert saved["data"] == {
        "scope": "archival",
        "id": entry_id(Scope.ARCHIVAL, f"- [{stamp}] pinned"),
        "time": stamp,
        "content": "pinned",
        "may_update": [],  # always said (issue 56): nothing it may replace here
        "related": [],  # … nor anything about the same thing
    }


def test_recall_explains_its_ranking_and_serve_keeps_the_index_live(
    api_workspace: Workspace,
) -> None:
    settings = Settings.model_validate({"embedding": {"provider": "mock"}})
    app = create_api(api_workspace, settings)
    with RunningApi(api_workspace, app=app) as client:
        url = "/api/v1/agents/ops/memory/recall"
        body = client.get(url, params={"keyword": "deploy", "explain": "true"}).json()["data"]
        assert body["mode"] == "hybrid" and body["semantic"] == "used" and body["notice"] is None
        assert body["index"]["model"] == "mock/deterministic" and body["index"]["meaningless"]
        (hit,) = body["hits"]
        assert hit["content"] == "deploy window is Tuesday"
        assert hit["routes"]["keyword"] == {"rank": 1, "score": None}
        assert hit["routes"]["semantic"]["rank"] == 1 and hit["score"] > 0
        plain = client.get(url, params={"keyword": "deploy"}).json()["data"]["hits"]
        assert [(h["time"], h["content"]) for h in plain] == [
            ("2026-07-22 09:31:00", "deploy window is Tuesday")
        ]
        assert set(plain[0]) == {"id", "time", "content"}
        with api_workspace.memory_file("ops").open("a", encoding="utf-8") as editor:
            editor.write("- [2026-07-22 09:40:00] written by upstream\n")
        deadline = time.monotonic() + 10
        while True:  # serve indexes the outside write by itself
            with sqlite3.connect(api_workspace.db_path) as connection:
                (count,) = connection.execute(
                    "SELECT count(*) FROM memory_vectors WHERE agent_name = 'ops'"
                ).fetchone()
            if count == 2:
                break
            assert time.monotonic() < deadline, "serve never indexed the outside write"
            time.sleep(0.02)
