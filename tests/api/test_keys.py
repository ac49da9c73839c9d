"""Per-user keys: made once and shown once, kept hashed, scoped, limited to agents, refused
at once when revoked, recorded as the actor of their changes, held to a rate."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator

import httpx
import pytest

from oryxtui.api.app import create_api
from oryxtui.api.keys import KeyStore, Scope
from oryxtui.config import ApiSettings, Settings
from oryxtui.database import Database
from oryxtui.workspace import Workspace
from tests.api_server import RunningApi
from tests.support import agents_with_notes, bearer, cli, make_key


@pytest.fixture
def keyed(workspace: Workspace) -> Workspace:
    return agents_with_notes(workspace, "ops", "ops-eu", "atlas")


@pytest.fixture
def server(keyed: Workspace) -> Iterator[httpx.Client]:
    with RunningApi(keyed) as client:
        yield client


def test_a_key_is_shown_once_and_kept_only_as_its_hash(keyed: Workspace) -> None:
    key = make_key(keyed, "alice", "read")
    assert key.startswith("oryx_")
    rows = sqlite3.connect(keyed.db_path).execute("SELECT * FROM oryxtui_api_keys").fetchall()
    stored = " ".join(str(value) for row in rows for value in row)
    assert key not in stored and key.split("_", 2)[2] not in stored  # the secret nowhere
    listed = cli("keys", "list", "--json", "--root", str(keyed.root))
    assert key not in listed.stdout and "alice" in listed.stdout
    plain = cli("keys", "list", "--root", str(keyed.root)).stdout  # when each key was made
    made = json.loads(listed.stdout)["keys"][0]["created_at"].replace("T", " ")[:16]
    assert f"made {made}, never used" in plain and key not in plain
    assert KeyStore(Database(keyed.db_path)).caller(key).name == "alice"


def test_bad_key_requests_are_one_sentence(keyed: Workspace) -> None:
    root = ["--root", str(keyed.root)]
    make_key(keyed, "alice", "read")
    again = cli("keys", "create", "alice", "--scope", "read", *root)
    assert again.code == 2 and "exists already" in again.stderr
    for bad, said in (
        (["../x", "--scope", "read"], "not a key name"),
        (["b", "--scope", "root"], "'root'"),
    ):
        result = cli("keys", "create", *bad, *root)
        assert result.code == 2 and said in result.stderr.splitlines()[-1], result.stderr
    assert cli("keys", "create", "c", "--scope", "read", "--agents", "a/b", *root).code == 2
    assert cli("keys", "revoke", "nobody", *root).code == 2


# Each route, the scope it needs, and a request to it (for the global memory or agent ops).
ROUTES = [
    ("GET", "/api/v1/agents", None, "read"),
    ("GET", "/api/v1/info", None, "read"),
    ("GET", "/api/v1/agents/ops/memory", None, "read"),
    ("GET", "/api/v1/agents/ops/memory/entries", None, "read"),
    ("GET", "/api/v1/agents/ops/memory/history", None, "read"),
    ("GET", "/api/v1/agents/ops/memory/history/1", None, "read"),
    ("GET", "/api/v1/agents/ops/memory/recall?keyword=note", None, "read"),
    ("GET", "/api/v1/agents/ops/memory/index", None, "read"),
    ("GET", "/api/v1/agents/ops/prompt", None, "read"),
    ("GET", "/api/v1/agents/ops/sessions", None, "read"),
    ("GET", "/api/v1/agents/ops/sessions/search?q=x", None, "read"),
    ("GET", "/api/v1/sessions", None, "read"),
    ("GET", "/api/v1/agents/ops/memory/origins", None, "read"),
    ("GET", "/api/v1/agents/ops/memory/review", None, "read"),
    ("GET", "/api/v1/sessions/cli:x:ops/turns/0/prompt", None, "read"),
    ("POST", "/api/v1/agents/ops/memory/review", {"approve": "all"}, "write"),
    ("POST", "/api/v1/agents/ops/memory", {"content": "by key"}, "write"),
    ("PATCH", "/api/v1/agents/ops/memory/entries/0", {"content": "x"}, "write"),
    ("DELETE", "/api/v1/agents/ops/memory/entries/0", None, "write"),
    ("POST", "/api/v1/agents/ops/memory/history/1/bring-back", {}, "write"),
    ("POST", "/api/v1/agents/ops/memory/duplicates/remove", {}, "write"),
    ("POST", "/api/v1/agents/ops/chat", {"message": "hello"}, "write"),
    ("POST", "/api/v1/agents/ops/memory/digest", {"dry_run": True}, "admin"),
]
LEVELS = {"read": 1, "write": 2, "admin": 3}


def test_every_scope_against_every_route(keyed: Workspace, server: httpx.Client) -> None:
    keys = {scope: make_key(keyed, f"k-{scope}", scope) for scope in LEVELS}
    for method, path, body, needed in ROUTES:
        for scope, key in keys.items():
            answer = server.request(method, path, json=body, headers=bearer(key))
            allowed = LEVELS[scope] >= LEVELS[needed]
            if allowed:
                assert answer.status_code not in (401, 403), (method, path, scope, answer.text)
            else:
                assert answer.status_code == 403, (method, path, scope, answer.text)
                refusal = answer.json()
                assert refusal["code"] == 403 and f"needs {needed}" in refusal["message"]
                assert key not in answer.text
        anonymous = server.request(method, path, json=body)
        assert anonymous.status_code == 401 and anonymous.json()["data"] is None


def test_a_key_limited_to_agents_sees_and_changes_only_those(
    keyed: Workspace, server: httpx.Client
) -> None:
    key = make_key(keyed, "eu", "write", "ops-*")
    headers = bearer(key)
    names = [row["name"] for row in server.get("/api/v1/agents", headers=headers).json()["data"]]
    assert names == ["ops-eu"]
    assert server.get("/api/v1/agents/ops-eu/memory", headers=headers).status_code == 200
    for path in (
        "/api/v1/agents/ops/memory",
        "/api/v1/agents/__global__/memory",
        "/api/v1/agents/nobody/memory",
    ):  # no telling which agents exist
        answer = server.get(path, headers=headers)
        assert answer.status_code == 403, path
    saved = server.post("/api/v1/agents/atlas/memory", json={"content": "x"}, headers=headers)
    assert saved.status_code == 403
    assert "note of atlas" in (keyed.agents_dir / "atlas" / "MEMORY.md").read_text()
    assert "x" not in (keyed.agents_dir / "atlas" / "MEMORY.md").read_text().split("\n")[-2]


def test_a_revoked_key_is_refused_at_once(keyed: Workspace, server: httpx.Client) -> None:
    key = make_key(keyed, "bob", "write")
    assert server.get("/api/v1/agents", headers=bearer(key)).status_code == 200
    assert cli("keys", "revoke", "bob", "--root", str(keyed.root)).code == 0
    refused = server.get("/api/v1/agents", headers=bearer(key))
    assert refused.status_code == 401 and "revoked" in refused.json()["message"]
    listed = cli("keys", "list", "--json", "--root", str(keyed.root)).stdout
    assert '"revoked_at": "2' in listed


def test_changes_through_a_key_are_recorded_under_its_name(
    keyed: Workspace, server: httpx.Client
) -> None:
    key = make_key(keyed, "carol", "write")
    saved = server.post(
        "/api/v1/agents/ops/memory", json={"content": "from carol"}, headers=bearer(key)
    )
    assert saved.status_code == 200
    history = server.get("/api/v1/agents/ops/memory/history", headers=bearer(key)).json()
    assert history["data"][0]["actor"] == "api:carol" and history["data"][0]["op"] == "save"
    log = cli("memory", "log", "--agent", "ops", "--root", str(keyed.root)).stdout
    assert "saved by api:carol" in log


def test_the_single_token_keeps_working_beside_keys(keyed: Workspace) -> None:
    key = make_key(keyed, "dave", "read")
    with RunningApi(keyed, token="s3cret") as client:
        assert client.get("/api/v1/agents", headers=bearer("s3cret")).status_code == 200
        assert client.get("/api/v1/agents", headers=bearer(key)).status_code == 200
        assert client.get("/api/v1/agents", headers=bearer("wrong")).status_code == 401
        saved = client.post(
            "/api/v1/agents/ops/memory", json={"content": "t"}, headers=bearer("s3cret")
        )
        assert saved.status_code == 200
        history = client.get("/api/v1/agents/ops/memory/history", headers=bearer(key)).json()
        assert history["data"][0]["actor"] == "api"


def test_a_key_over_its_rate_gets_429_and_others_go_on(keyed: Workspace) -> None:
    fast, other = make_key(keyed, "fast", "read"), make_key(keyed, "other", "read")
    settings = Settings(api=ApiSettings(rate_limit_per_minute=5))
    with RunningApi(keyed, app=create_api(keyed, settings)) as client:
        codes = [client.get("/api/v1/info", headers=bearer(fast)).status_code for _ in range(7)]
        assert codes[:5] == [200] * 5 and codes[5:] == [429, 429]
        refusal = client.get("/api/v1/info", headers=bearer(fast)).json()
        assert "try again in" in refusal["message"] and fast not in refusal["message"]
        assert client.get("/api/v1/info", headers=bearer(other)).status_code == 200


def test_scopes_read_from_the_table_are_untrusted(keyed: Workspace) -> None:
    key = make_key(keyed, "eve", "read")
    with sqlite3.connect(keyed.db_path) as db:
        db.execute("UPDATE oryxtui_api_keys SET scope = 'root', agents = '../x,ops'")
    store = KeyStore(Database(keyed.db_path))
    with pytest.raises(Exception, match="no usable scope"):
        store.caller(key)
    with sqlite3.connect(keyed.db_path) as db:
        db.execute("UPDATE oryxtui_api_keys SET scope = 'read'")
    caller = store.caller(key)
    assert caller.scope is Scope.READ and caller.agents == ("ops",)


def test_no_key_reaches_the_servers_output(keyed: Workspace) -> None:
    """Keys good, revoked and forged, sent to a real `serve`: none appears in what it writes."""
    from tests.serve_process import ServeProcess

    good, gone = make_key(keyed, "good", "write"), make_key(keyed, "gone", "read")
    cli("keys", "revoke", "gone", "--root", str(keyed.root))
    forged = good[:-4] + "AAAA"
    with ServeProcess(keyed.root) as server, server.client() as client:
        for key, status in ((good, 200), (gone, 401), (forged, 401)):
            answer = client.get("/api/v1/agents/ops/memory", headers=bearer(key))
            assert answer.status_code == status and key not in answer.text
        client.post(
            "/api/v1/agents/ops/memory",
            content=b"{",
            headers={**bearer(good), "Content-Type": "application/json"},
        )
    output = server.process.stdout.read() + server.process.stderr.read()  # type: ignore[union-attr]
    for key in (good, gone, forged):
        assert key.encode() not in output and key.split("_", 2)[2].encode() not in output


def test_the_cli_offers_every_scope() -> None:
    from oryxtui.cli.keys import SCOPES

    assert tuple(scope.label for scope in Scope) == SCOPES
