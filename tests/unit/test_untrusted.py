"""Everything oryxtui reads back that another program (or a hand) may have written is untrusted:
history lines, session rows, vector rows, an embedder's or a model's answers. A bad record is
skipped and counted, never a traceback or a 500, and a change that landed is never reported as
an error."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from oryxtui import database
from oryxtui.agent.episodes import episode_store
from oryxtui.agent.loop import AgentLoop
from oryxtui.agent.sessions import SessionStore, os_user, session_id_for
from oryxtui.api.app import create_api
from oryxtui.config import Settings, load_settings
from oryxtui.memory import MemoryService
from oryxtui.memory.recall.vectors import encode, entry_hash
from oryxtui.workspace import Workspace
from tests.api_server import RunningApi
from tests.llm_server import ScriptedLLM, concept_vector
from tests.support import cli, fixed_clock, make_agent

FORGED_NUMBERS = [
    '{"n": Infinity, "op": "save", "actor": "cli"}',
    '{"n": 1e999, "op": "save", "actor": "cli"}',
    '{"n": NaN, "op": "save", "actor": "cli"}',
    '{"n": 99, "op": "outside", "actor": "outside",'
    ' "after": [{"scope": "archival", "line": "- x", "at": -1e300}]}',
    '{"n": 100, "op": "outside", "actor": "outside",'
    ' "after": [{"scope": "archival", "line": "- y", "at": 100000000000000000000000}]}',
    '{"n": 101, "op": "save", "signature": [1e400]}',
    '{"n": 101, "op": "save", "actor": "cli"}',
    '{"n": 101, "op": "save", "actor": "cli"}',  # the same number twice
    "[1, 2, 3]",
]


def test_forged_numbers_in_a_history_are_skipped_and_saves_go_on(workspace: Workspace) -> None:
    folder = make_agent(workspace, "ops")
    assert cli("memory", "save", "--root", str(workspace.root), "--agent", "ops", "one").code == 0
    with open(folder / "MEMORY.md.journal", "a") as history:
        history.write("\n".join(FORGED_NUMBERS) + "\n")
    saved = cli("memory", "save", "--root", str(workspace.root), "--agent", "ops", "two")
    assert saved.code == 0 and "Traceback" not in saved.stderr, saved.stderr
    assert "- two" not in (folder / "MEMORY.md").read_text()  # the text is the entry's …
    assert "] two" in (folder / "MEMORY.md").read_text()  # … with its time
    log = cli("memory", "log", "--root", str(workspace.root), "--agent", "ops", "--json")
    assert log.code == 0 and "could not be read" not in log.stdout
    assert "not a change" in log.stderr  # the skipped lines are counted, and said
    changes = [json.loads(line) for line in log.stdout.splitlines()]
    assert [c["op"] for c in changes][:1] == ["save"]
    doctor = cli("memory", "doctor", "--root", str(workspace.root), "--agent", "ops")
    assert doctor.code == 0 and "Nothing lost" in doctor.stdout
    with RunningApi(workspace) as client:
        saved_over_rest = client.post("/api/v1/agents/ops/memory", json={"content": "three"})
        assert saved_over_rest.status_code == 200
        assert client.get("/api/v1/agents/ops/memory/history").status_code == 200


def test_a_history_oryxtui_cannot_write_is_a_warning_after_the_save(
    workspace: Workspace, tmp_path: Path
) -> None:
    folder = make_agent(workspace, "ops")
    elsewhere = workspace.root / "elsewhere.journal"
    elsewhere.write_text("")
    os.symlink(elsewhere, folder / "MEMORY.md.journal")
    saved = cli("memory", "save", "--root", str(workspace.root), "--agent", "ops", "kept")
    assert saved.code == 0, saved.stderr  # the entry landed: success, and a warning
    assert "history could not be recorded" in saved.stderr
    assert "] kept" in (folder / "MEMORY.md").read_text()
    (folder / "MEMORY.md.journal").unlink()  # fixed: the history starts from the file
    again = cli("memory", "save", "--root", str(workspace.root), "--agent", "ops", "later")
    assert again.code == 0 and not again.stderr
    log = cli("memory", "log", "--root", str(workspace.root), "--agent", "ops", "--json")
    (change,) = [json.loads(line) for line in log.stdout.splitlines()]
    assert change["op"] == "save" and change["after"][0]["content"] == "later"


def test_a_forged_history_cannot_make_oryxtui_keep_more(workspace: Workspace) -> None:
    folder = make_agent(workspace, "ops")
    service = MemoryService.open(workspace, Settings(), fixed_clock)
    service.save("ops", "real", "archival")
    big = "- " + "x" * (20 << 20)
    record = {"n": 50, "op": "outside", "actor": "outside"}
    with open(folder / "MEMORY.md.journal", "a") as history:
        for n in range(50, 53):  # each 20 MB: no copy of a memory grows past its bound
            record = {**record, "n": n, "after": [{"scope": "archival", "line": big, "at": 0}]}
            history.write(json.dumps(record) + "\n")
    log = service._recorded().changes("ops")
    kept = log.replay.memory or {}
    assert sum(len(line) for lines in kept.values() for line in lines) < 33 << 20
    service.save("ops", "after", "archival")  # and the history starts over from the file
    log = service._recorded().changes("ops")
    assert log.replay.memory is not None and len(log.replay.memory["archival"]) == 2


def session_row(workspace: Workspace, session_id: str, messages: Any) -> None:
    database.connect(workspace.db_path).close()  # the schema
    raw = messages if isinstance(messages, str) else json.dumps(messages)
    with sqlite3.connect(workspace.db_path) as connection:
        connection.execute(
            "INSERT INTO sessions (session_id, profile_name, channel, user_id, messages_json,"
            " status, created_at, last_active_at) VALUES (?, 'ops', 'web', 'u', ?, 'ACTIVE',"
            " '2026-07-22 09:00:00', '2026-07-22 09:00:00')",
            (session_id, raw),
        )


GOOD_TURN = [
    {"role": "user", "content": "where is the deploy runbook"},
    {"role": "assistant", "content": "In the wiki under deploys."},
]


def test_session_rows_of_any_shape_are_read_around(workspace: Workspace) -> None:
    make_agent(workspace, "ops")
    session_row(workspace, "web:u:ops", [*GOOD_TURN, {"role": "assistant", "toolCalls": ["x"]}])
    session_row(workspace, "web:v:ops", "not json")
    session_row(workspace, "web:w:ops", [{"role": 7, "content": {"a": 1}}, *GOOD_TURN])
    root = str(workspace.root)
    listed = cli("sessions", "list", "--root", root, "--agent", "ops", "--json")
    assert listed.code == 0, listed.stderr
    assert {s["session"] for s in json.loads(listed.stdout)["sessions"]} == {
        "web:u:ops",
        "web:v:ops",
        "web:w:ops",
    }
    assert "could not be read and" in listed.stderr
    found = cli("sessions", "search", "--root", root, "--agent", "ops", "runbook", "--json")
    assert found.code == 0, found.stderr
    turns = json.loads(found.stdout)["turns"]  # the readable turns of each row
    assert {t["session"] for t in turns} == {"web:u:ops", "web:w:ops"}
    # The agent's tool reads the same rows.
    runner = AgentLoop(
        workspace,
        Settings(),
        MemoryService.open(workspace, Settings()),
        SessionStore(workspace.db_path),
    )
    events = list(runner.run("ops", "what did we say about runbook", "cli", "me"))
    result = next(e for e in events if e.kind == "tool_result")
    assert result.success and "wiki" in result.text


def test_continuing_a_session_that_cannot_be_read_leaves_it_alone(workspace: Workspace) -> None:
    make_agent(workspace, "ops")
    mine = session_id_for("cli", os_user(), "ops")
    session_row(workspace, mine, [*GOOD_TURN, {"role": "assistant", "toolCalls": ["x"]}])
    chat = cli("chat", "--root", str(workspace.root), "--agent", "ops", "hello")
    assert chat.code == 1 and "cannot read" in chat.stderr and "Traceback" not in chat.stderr
    with sqlite3.connect(workspace.db_path) as connection:
        (raw,) = connection.execute("SELECT messages_json FROM sessions").fetchone()
    assert json.loads(raw)[-1] == {"role": "assistant", "toolCalls": ["x"]}  # untouched


# Embedders and their vectors ------------------------------------------------------------------


def embedding_config(workspace: Workspace, url: str) -> None:
    (workspace.root / "config.toml").write_text(
        f'[embedding]\nprovider = "openai"\nbase_url = "{url}"\nmodel = "concepts"\n'
    )


BAD_ANSWERS = {
    "a string": lambda body: {"data": [{"index": 0, "embedding": "AAAA"}]},
    "data null": lambda body: {"data": None},
    "not JSON": lambda body: b"<html>oops</html>",
    "NaN": lambda body: b'{"data": [{"index": 0, "embedding": [NaN, 1.0]}]}',
    "too few": lambda body: {"data": []},
    "no index": lambda body: {"data": [{"embedding": [1.0, 2.0]}]},
}


@pytest.mark.parametrize("answer", BAD_ANSWERS)
def test_recall_degrades_on_any_bad_embedder_answer(workspace: Workspace, answer: str) -> None:
    make_agent(workspace, "ops")
    root = str(workspace.root)
    assert cli("memory", "save", "--root", root, "--agent", "ops", "deploy on friday").code == 0
    with ScriptedLLM([], embedding_answer=BAD_ANSWERS[answer]) as server:
        embedding_config(workspace, server.base_url)
        found = cli("memory", "recall", "--root", root, "--agent", "ops", "deploy", "--json")
        assert found.code == 0, found.stderr
        data = json.loads(found.stdout)
        assert data["semantic"] == "failed" and data["notice"] and data["hits"]
        assert "not indexed yet" not in found.stderr  # one notice, the right one
        api = create_api(workspace, load_settings(workspace.config_path))
        with RunningApi(workspace, app=api) as client:
            over_rest = client.get("/api/v1/agents/ops/memory/recall", params={"keyword": "x"})
            assert over_rest.status_code == 200
            assert over_rest.json()["data"]["semantic"] == "failed"
    connection = database.connect(workspace.db_path)
    assert connection.execute("SELECT count(*) FROM memory_vectors").fetchone() == (0,)


FORGED_VECTORS = {
    "five bytes": b"\x00\x01\x02\x03\x04",
    "text": "not a vector",
    "another size": encode(np.ones(3, np.float32)),
    "NaN": encode(np.full(13, np.nan, np.float32)),
}


def test_forged_vector_rows_are_skipped_and_replaced(workspace: Workspace) -> None:
    make_agent(workspace, "ops")
    with ScriptedLLM([]) as server:
        embedding_config(workspace, server.base_url)
        service = MemoryService.open(workspace, load_settings(workspace.config_path), fixed_clock)
        texts = [f"release {index} went out" for index in range(len(FORGED_VECTORS))]
        for text in texts:
            service.save("ops", text, "archival")
        lines = [entry.line for entry in service.snapshot("ops").archival]
        with database.connect(workspace.db_path) as connection:
            for line, blob in zip(lines, FORGED_VECTORS.values(), strict=True):
                connection.execute(
                    "INSERT INTO memory_vectors (entry_hash, agent_name, content, embedding, dim,"
                    " embedding_model, entry_time, created_at) VALUES (?, 'ops', ?, ?, 13,"
                    " 'openai/concepts', NULL, 0)",
                    (entry_hash("ops", line), line, blob),
                )
        found = cli("memory", "recall", "--root", str(workspace.root), "--agent", "ops", "rollout")
        assert found.code == 0, found.stderr
        assert "release" in found.stdout
        status = service.sync_index("ops")
        assert status is not None and status.indexed == len(texts)
        with sqlite3.connect(workspace.db_path) as connection:
            blobs = [row[0] for row in connection.execute("SELECT embedding FROM memory_vectors")]
        expected = len(concept_vector("x")) * 4
        assert all(isinstance(b, bytes) and len(b) == expected for b in blobs)


def test_episode_search_follows_an_embedder_that_changed_size(workspace: Workspace) -> None:
    make_agent(workspace, "ops")
    session_row(workspace, "web:u:ops", GOOD_TURN)
    size = {"n": 13}

    def answer(body: dict[str, Any]) -> dict[str, Any]:
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        return {
            "data": [
                {"index": i, "embedding": (concept_vector(t) * 2)[: size["n"]]}
                for i, t in enumerate(texts)
            ]
        }

    with ScriptedLLM([], embedding_answer=answer) as server:
        settings = Settings.model_validate(
            {"embedding": {"provider": "openai", "base_url": server.base_url, "model": "m"}}
        )
        store = episode_store(workspace.db_path, settings)
        store.sync("ops")
        assert store.search("ops", "deploy runbook")
        with sqlite3.connect(workspace.db_path) as connection:
            connection.execute("UPDATE episode_vectors SET embedding = X'0001'")  # forged too
        size["n"] = 20  # the model now answers another size
        again = episode_store(workspace.db_path, settings)
        assert again.search("ops", "deploy runbook")
        with sqlite3.connect(workspace.db_path) as connection:
            (blob,) = connection.execute("SELECT embedding FROM episode_vectors").fetchone()
        assert len(blob) == 20 * 4
        # `memory index --rebuild` drops them too; the next search makes them again.
        embedding_config(workspace, server.base_url)
        rebuilt = cli(
            "memory", "index", "--root", str(workspace.root), "--agent", "ops", "--rebuild"
        )
        assert rebuilt.code == 0, rebuilt.stderr
        with sqlite3.connect(workspace.db_path) as connection:
            assert connection.execute("SELECT count(*) FROM episode_vectors").fetchone() == (0,)
        assert episode_store(workspace.db_path, settings).search("ops", "deploy runbook")


# Models ---------------------------------------------------------------------------------------

MALFORMED_CHUNKS = {
    "not JSON": ["{not json"],
    "choices not a list": ['{"id": "x", "object": "chat.completion.chunk", "choices": 5}'],
    "delta a string": ['{"id": "x", "choices": [{"index": 0, "delta": "boom"}]}'],
    "tool calls a string": ['{"id": "x", "choices": [{"index": 0, "delta": {"tool_calls": "x"}}]}'],
    "content a number": ['{"id": "x", "choices": [{"index": 0, "delta": {"content": 5}}]}'],
}


@pytest.mark.parametrize("chunk", MALFORMED_CHUNKS)
def test_a_malformed_stream_chunk_is_a_provider_failure(workspace: Workspace, chunk: str) -> None:
    make_agent(workspace, "ops")
    with ScriptedLLM([{"raw_events": MALFORMED_CHUNKS[chunk], "text": "fine"}]) as llm:
        (workspace.root / "config.toml").write_text(
            f'[llm]\nbase_url = "{llm.base_url}"\nmodel = "m"\n'
        )
        chat = cli("chat", "--root", str(workspace.root), "--agent", "ops", "hello")
    assert chat.code == 1, chat.stderr
    assert "Traceback" not in chat.stderr and "oryxtui: error:" in chat.stderr


def test_consolidation_falls_back_when_the_stream_is_malformed(workspace: Workspace) -> None:
    folder = make_agent(workspace, "ops")
    service = MemoryService.open(workspace, Settings(), fixed_clock)
    for index in range(80):
        service.save("ops", f"entry {index} " + "words " * 20, "archival")
    with ScriptedLLM([{"raw_events": ["{broken"]}], repeat_last=True) as llm:
        (workspace.root / "config.toml").write_text(
            f'[llm]\nbase_url = "{llm.base_url}"\nmodel = "m"\n'
        )
        result = cli("memory", "consolidate", "--root", str(workspace.root), "--agent", "ops")
    assert result.code == 0, result.stderr
    assert "extractive" in result.stderr + result.stdout
    assert "entries, extractive)" in (folder / "MEMORY.md").read_text()


def test_a_huge_turn_makes_a_small_tool_result(workspace: Workspace) -> None:
    make_agent(workspace, "ops")
    huge = "deploy " + "x" * 3_000_000
    session_row(workspace, "web:u:ops", [{"role": "user", "content": huge}, GOOD_TURN[1]] * 20)
    settings = Settings()
    runner = AgentLoop(
        workspace,
        settings,
        MemoryService.open(workspace, settings),
        SessionStore(workspace.db_path),
    )
    events = list(runner.run("ops", "what did we say about deploy", "cli", "me"))
    result = next(e for e in events if e.kind == "tool_result")
    assert result.success and len(result.text) <= 16_000
    turns = json.loads(result.text)["turns"]
    assert turns and all(len(turn["user"]) <= 601 for turn in turns)
    stored = SessionStore(workspace.db_path).load("cli:me:ops", "ops", "cli", "me")
    assert len(stored.messages_json()) < 100_000  # the session does not grow by megabytes


async def test_the_dashboard_says_what_it_skipped(workspace: Workspace) -> None:
    from tests.dashboard_support import make_app, wait_for

    make_agent(workspace, "ops")
    session_row(workspace, "web:u:ops", [*GOOD_TURN, {"role": "assistant", "toolCalls": ["x"]}])
    app = make_app(workspace)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("S")
        notes = lambda: [n.message for n in app._notifications]  # noqa: E731
        await wait_for(pilot, lambda: any("could not be read" in m for m in notes()))
        assert sum("could not be read" in m for m in notes()) == 1  # said once


def test_the_api_says_what_went_wrong_beside_a_save(workspace: Workspace) -> None:
    folder = make_agent(workspace, "ops")
    os.symlink(workspace.root / "elsewhere", folder / "MEMORY.md.journal")
    (workspace.root / "elsewhere").write_text("")
    with RunningApi(workspace) as client:
        saved = client.post("/api/v1/agents/ops/memory", json={"content": "kept"})
    assert saved.status_code == 200 and saved.json()["code"] == 0
    (warning,) = saved.json()["warnings"]
    assert "history could not be recorded" in warning and "/tmp/" not in warning
    assert "] kept" in (folder / "MEMORY.md").read_text()


@pytest.mark.parametrize(
    "usage",
    [
        '{"prompt_tokens": "many", "completion_tokens": 3}',
        '{"prompt_tokens": -1}',
        '{"prompt_tokens": true, "completion_tokens": false}',
        '"lots"',
        "[1, 2]",
    ],
)
def test_token_counts_that_are_not_counts_are_left_out(usage: str) -> None:
    """What a server says it used goes into traces only as counts; anything else is no
    usage, never a failed turn."""
    from oryxtui.agent.providers.openai_compatible import OpenAICompatibleProvider

    told = '{"id": "x", "object": "chat.completion.chunk", "choices": [], "usage": ' + usage + "}"
    with ScriptedLLM([{"raw_events": [told], "text": "fine"}]) as llm:
        provider = OpenAICompatibleProvider(llm.base_url, "m", None, None, 10)
        *_, turn = provider.stream([{"role": "user", "content": "hi"}], [])
    assert turn.text == "fine" and turn.usage is None
    with ScriptedLLM([{"text": "fine", "usage": [7, 2]}]) as llm:
        provider = OpenAICompatibleProvider(llm.base_url, "m", None, None, 10)
        *_, turn = provider.stream([{"role": "user", "content": "hi"}], [])
    assert turn.usage == (7, 2)
