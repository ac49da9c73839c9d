"""Every call of oryxtui's loop is recorded: the messages and tools the model received are
rebuilt exactly, from parts stored once by hash; upstream's llm_calls row beside each; a
forged or missing part is skipped and counted."""

from __future__ import annotations

import contextlib
import json

from oryxtui.agent.turns import TurnRecorder
from oryxtui.database import Database, connect
from oryxtui.workspace import Workspace
from tests.llm_server import ScriptedLLM
from tests.support import cli
from tests.unit.test_agent_loop import agent_workspace, make_runner, run  # noqa: F401

SESSION = "test:mei:ops"


def test_the_messages_sent_are_rebuilt_byte_for_byte(agent_workspace: Workspace) -> None:  # noqa: F811
    script = [
        {"tool_calls": [("save_memory", {"content": "the pager code is 4711 — 寻呼"})]},
        {"tool_calls": [("recall_memory", {"keyword": "pager"})]},
        {"text": "Noted, and found."},
        {"text": "Second turn answer."},
    ]
    with ScriptedLLM(script) as llm:
        runner = make_runner(agent_workspace, llm.base_url)
        run(runner, "remember the pager code")
        run(runner, "and now?")
        received = list(llm.requests)
    calls = TurnRecorder(Database(agent_workspace.db_path)).calls(SESSION)
    assert [(c.turn, c.call) for c in calls] == [(0, 0), (0, 1), (0, 2), (1, 0)]
    assert len(calls) == len(received)
    for call, request in zip(calls, received, strict=True):
        assert call.messages == request["messages"]
        assert json.dumps(call.messages, ensure_ascii=False) == json.dumps(
            request["messages"], ensure_ascii=False
        )
        assert call.tools == request["tools"] and call.model == "test-model"
    # The system message's parts are stored once, however many calls carried them.
    with contextlib.closing(connect(agent_workspace.db_path)) as db:
        parts = db.execute("SELECT text FROM oryxtui_prompt_parts").fetchall()
        upstream = db.execute(
            "SELECT session_id, provider, model, success, duration_ms, profile_name "
            "FROM llm_calls ORDER BY id"
        ).fetchall()
    identities = [text for (text,) in parts if text.startswith("You are Ops")]
    assert len(identities) == 1
    assert len(upstream) == 4
    assert upstream[0][:4] == (SESSION, "openai", "test-model", 1) and upstream[0][5] == "ops"


def test_a_failed_call_is_recorded_and_upstream_row_says_so(agent_workspace: Workspace) -> None:  # noqa: F811
    runner = make_runner(agent_workspace, "http://127.0.0.1:9/v1")  # nothing listens there
    events = run(runner, "hello?")
    assert events[-1].kind == "error"
    (call,) = TurnRecorder(Database(agent_workspace.db_path)).calls(SESSION)
    assert call.messages[-1] == {"role": "user", "content": "hello?"}
    with contextlib.closing(connect(agent_workspace.db_path)) as db:
        ((success, error),) = db.execute("SELECT success, error_message FROM llm_calls").fetchall()
    assert success == 0 and error


def test_forged_or_missing_parts_are_skipped_and_counted(agent_workspace: Workspace) -> None:  # noqa: F811
    with ScriptedLLM([{"text": "one"}, {"text": "two"}]) as llm:
        runner = make_runner(agent_workspace, llm.base_url)
        run(runner, "first")
        run(runner, "second")
    with contextlib.closing(connect(agent_workspace.db_path)) as db:
        db.execute("UPDATE oryxtui_prompt_parts SET text = 'forged' WHERE text LIKE '%first%'")
        db.execute(
            "INSERT INTO oryxtui_model_calls (session_id, turn, call, provider, model, messages,"
            " tools, created_at) VALUES (?, 5, 0, 'x', 'y', 'not json', 'nope', '2026-01-01')",
            (SESSION,),
        )
    shown = cli(
        "sessions",
        "show",
        SESSION,
        "--turn",
        "1",
        "--prompt",
        "--json",
        "--root",
        str(agent_workspace.root),
    )
    # Its one call carried the forged part: skipped and counted; nothing forged is shown.
    assert shown.code == 2 and "1 model call record" in shown.stderr
    assert "forged" not in shown.stdout
    broken = cli(
        "sessions", "show", SESSION, "--turn", "5", "--prompt", "--root", str(agent_workspace.root)
    )
    assert broken.code == 2 and "could not be read" in broken.stderr  # not json: no traceback


def test_sessions_show_turn_prompt(agent_workspace: Workspace) -> None:  # noqa: F811
    with ScriptedLLM(
        [
            {"tool_calls": [("save_memory", {"content": "tea is green"})]},
            {"text": "Saved."},
            {"tool_calls": [("recall_memory", {"keyword": "tea"})]},
            {"text": "Green."},
        ]
    ) as llm:
        runner = make_runner(agent_workspace, llm.base_url)
        run(runner, "remember tea")
        run(runner, "which tea?")
    root = ("--root", str(agent_workspace.root))
    shown = cli("sessions", "show", SESSION, "--turn", "1", "--prompt", "--json", *root)
    view = json.loads(shown.stdout)
    assert [b["name"] for b in view["calls"][0]["blocks"]] == [
        "identity",
        "time",
        "memory",
        "messages",
        "tools",
    ]
    assert any("tea is green" in line for line in view["calls"][0]["injected"])
    assert "tea is green" in view["calls"][-1]["recalls"][0]
    turn0 = json.loads(
        cli("sessions", "show", SESSION, "--turn", "0", "--prompt", "--json", *root).stdout
    )
    assert turn0["calls"][0]["new"] == []  # nothing to compare the first call with
    assert any("tea is green" in line for line in turn0["calls"][1]["new"])  # the save's
    text = cli("sessions", "show", SESSION, "--turn", "1", "--prompt", *root)
    assert "── memory ·" in text.stdout and "recall results given to the model" in text.stdout
    missing = cli("sessions", "show", SESSION, "--turn", "7", "--prompt", *root)
    assert missing.code == 2 and "No recorded model call" in missing.stderr
    first = json.loads(
        cli("sessions", "show", SESSION, "--turn", "0", "--prompt", "--json", *root).stdout
    )
    assert first["memory_since_previous_turn"] is None
    assert view["memory_since_previous_turn"] == {"added": [], "removed": []} or any(
        "tea is green" in line for line in view["memory_since_previous_turn"]["added"]
    )
