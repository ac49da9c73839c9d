"""The loop against a real OpenAI-compatible server on 127.0.0.1 (SSE and plain JSON)."""

from __future__ import annotations

import json
import sqlite3

import pytest

from oryxtui.agent.loop import AgentLoop, LoopEvent
from oryxtui.agent.sessions import SessionStore, session_id_for
from oryxtui.config import LlmSettings, MemorySettings, Settings
from oryxtui.memory import MemoryService
from oryxtui.memory.format import CORE_HEADER
from oryxtui.memory.recall.results import NOTHING_FOUND
from oryxtui.workspace import Workspace
from tests.llm_server import ScriptedLLM
from tests.support import fixed_clock, make_agent


@pytest.fixture
def agent_workspace(workspace: Workspace) -> Workspace:
    folder = make_agent(
        workspace,
        "ops",
        "identity:\n  prompt: You are Ops, the on-call helper.\n"
        "bootstrap: [USER.md, missing.md]\nsettings:\n  max_iterations: 4\n",
    )
    (workspace.root / "USER.md").write_text("The user is Mei.")
    MemoryService.open(workspace, Settings(), clock=fixed_clock).save("ops", "prefers tea", "core")
    assert folder.exists()
    return workspace


def make_runner(
    workspace: Workspace, base_url: str, stream: bool = True, footprint: bool = False
) -> AgentLoop:
    settings = Settings(
        llm=LlmSettings(base_url=base_url, model="test-model", stream=stream),
        memory=MemorySettings(footprint=footprint),
    )
    memory = MemoryService.open(workspace, settings, clock=fixed_clock)
    return AgentLoop(
        workspace, settings, memory, SessionStore(workspace.db_path, clock=fixed_clock)
    )


def run(runner: AgentLoop, message: str, agent: str | None = "ops") -> list[LoopEvent]:
    return list(runner.run(agent, message, "test", "mei"))


def stored_messages(workspace: Workspace, agent: str = "ops") -> list[dict]:
    with sqlite3.connect(workspace.db_path) as connection:
        row = connection.execute(
            "SELECT messages_json FROM sessions WHERE session_id = ?",
            (session_id_for("test", "mei", agent),),
        ).fetchone()
    return json.loads(row[0])


def audit_rows(workspace: Workspace) -> list[tuple]:
    with sqlite3.connect(workspace.db_path) as connection:
        return connection.execute(
            "SELECT tool_name, input_json, success, error_message FROM tool_invocations ORDER BY id"
        ).fetchall()


@pytest.mark.parametrize("stream", [True, False])
def test_save_then_recall_then_answer(agent_workspace: Workspace, stream: bool) -> None:
    script = [
        {"tool_calls": [("save_memory", {"content": "deploy window is Tuesday 14:00"})]},
        {"tool_calls": [("recall_memory", {"keyword": "DEPLOY"})]},
        {"text": "Your deploy window is Tuesday 14:00."},
    ]
    with ScriptedLLM(script) as llm:
        events = run(make_runner(agent_workspace, llm.base_url, stream), "when can I deploy?")
    kinds = [e.kind for e in events if e.kind not in ("text", "warning")]
    assert kinds == ["tool_call", "tool_result", "tool_call", "tool_result", "final"]
    assert events[-1].text == "Your deploy window is Tuesday 14:00."
    warnings = [e.text for e in events if e.kind == "warning"]
    assert warnings == ["Bootstrap file missing.md is missing; skipped."]  # once, not per call
    assert "".join(e.text for e in events if e.kind == "text") == events[-1].text
    recall = [e for e in events if e.kind == "tool_result"][1]
    assert "deploy window is Tuesday 14:00" in recall.text and recall.success
    first = llm.requests[0]
    system = first["messages"][0]
    assert system["role"] == "system"
    assert system["content"].startswith("You are Ops, the on-call helper.")
    assert "The user is Mei." in system["content"]
    assert f"{CORE_HEADER}\n- [2026-07-22 09:30:00] prefers tea" in system["content"]
    assert first["messages"][-1] == {"role": "user", "content": "when can I deploy?"}
    assert {t["function"]["name"] for t in first["tools"]} == {
        "save_memory",
        "recall_memory",
        "update_memory",
        "search_conversations",
    }
    assert first["model"] == "test-model" and first.get("stream", False) is stream
    # The third request carries the whole turn: user, assistant+call, tool, assistant+call, tool.
    roles = [m["role"] for m in llm.requests[2]["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "tool"]
    memory = (agent_workspace.agents_dir / "ops" / "MEMORY.md").read_text()
    assert "] deploy window is Tuesday 14:00\n" in memory
    # No footprint by default (upstream stopped writing them in 86b6bab).
    assert "触发" not in memory and "when can I deploy" not in memory
    assert [m["role"] for m in stored_messages(agent_workspace)] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]


def test_a_recall_that_finds_nothing_says_so(agent_workspace: Workspace) -> None:
    script = [
        {"tool_calls": [("recall_memory", {"keyword": "zzzz-no-such"})]},
        {"text": "I have nothing on that."},
    ]
    with ScriptedLLM(script) as llm:
        events = run(make_runner(agent_workspace, llm.base_url, False), "what is zzzz?")
    (result,) = [e for e in events if e.kind == "tool_result"]
    told = json.loads(result.text)
    assert result.success and told["count"] == 0 and told["note"] == NOTHING_FOUND


def test_answer_without_tools_takes_one_call(agent_workspace: Workspace) -> None:
    with ScriptedLLM([{"text": "Hello, Mei."}]) as llm:
        events = run(make_runner(agent_workspace, llm.base_url), "hi")
    assert len(llm.requests) == 1
    assert events[-1] == LoopEvent("final", "Hello, Mei.")
    assert [m["role"] for m in stored_messages(agent_workspace)] == ["user", "assistant"]


def test_several_tool_calls_run_in_order(agent_workspace: Workspace) -> None:
    script = [
        {
            "tool_calls": [
                ("save_memory", {"content": "ops one"}),
                ("save_memory", {"content": "ops two"}),
                ("recall_memory", {"keyword": "ops"}),
            ]
        },
        {"text": "done"},
    ]
    with ScriptedLLM(script) as llm:
        events = run(make_runner(agent_workspace, llm.base_url), "save two things")
    calls = [json.loads(e.arguments) for e in events if e.kind == "tool_call"]
    assert calls == [{"content": "ops one"}, {"content": "ops two"}, {"keyword": "ops"}]
    hits = json.loads([e for e in events if e.kind == "tool_result"][2].text)["entries"]
    # Ranked recall: two equal matches, the newer first.
    assert [h.split("] ", 1)[1] for h in hits] == ["ops two", "ops one"]
    tool_messages = [m for m in llm.requests[1]["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["call_0", "call_1", "call_2"]


def test_a_footprint_is_written_when_asked_for(agent_workspace: Workspace) -> None:
    with ScriptedLLM([{"text": "Your deploy window is Tuesday 14:00."}]) as llm:
        run(make_runner(agent_workspace, llm.base_url, footprint=True), "when can I deploy?")
    memory = (agent_workspace.agents_dir / "ops" / "MEMORY.md").read_text()
    assert "] 触发「when can I deploy?」⇒ Your deploy window is Tuesday 14:00.\n" in memory


def test_the_loop_stops_at_max_iterations(agent_workspace: Workspace) -> None:
    looping = {"tool_calls": [("recall_memory", {"keyword": "x"})]}
    with ScriptedLLM([looping], repeat_last=True) as llm:
        events = run(make_runner(agent_workspace, llm.base_url, footprint=True), "loop forever")
    assert len(llm.requests) == 4  # AGENT.md settings.max_iterations
    assert events[-1].kind == "final" and "Stopped after 4 iterations" in events[-1].text
    memory = (agent_workspace.agents_dir / "ops" / "MEMORY.md").read_text()
    assert "loop forever" not in memory  # no footprint for a trigger that did not finish


def test_a_failed_tool_is_fed_back_and_audited(agent_workspace: Workspace) -> None:
    script = [
        {"tool_calls": [("save_memory", {"content": "x", "scope": "episodic"})]},
        {"text": "Sorry, that scope does not exist."},
    ]
    memory_file = agent_workspace.agents_dir / "ops" / "MEMORY.md"
    before = memory_file.read_text()
    with ScriptedLLM(script) as llm:
        events = run(make_runner(agent_workspace, llm.base_url), "save it")
    result = next(e for e in events if e.kind == "tool_result")
    assert result.success is False and "scope" in result.text
    fed_back = llm.requests[1]["messages"][-1]
    assert fed_back["role"] == "tool" and "scope" in json.loads(fed_back["content"])["error"]
    assert audit_rows(agent_workspace)[-1][2] == 0
    assert memory_file.read_text() == before  # the refused save wrote nothing


def test_provider_down_keeps_the_user_message(agent_workspace: Workspace) -> None:
    with ScriptedLLM([]) as llm:
        dead = llm.base_url
    events = run(make_runner(agent_workspace, dead), "are you there?")
    assert events[-1].kind == "error"
    assert "Cannot reach the LLM" in events[-1].text and "llm.base_url" in events[-1].text
    assert stored_messages(agent_workspace) == [
        {
            "role": "user",
            "content": "are you there?",
            "toolName": None,
            "toolCallId": None,
            "toolCalls": [],
        }
    ]


def test_http_error_is_a_clear_message(agent_workspace: Workspace) -> None:
    with ScriptedLLM([{"status": 500, "text": "model overloaded"}]) as llm:
        events = run(make_runner(agent_workspace, llm.base_url), "hello")
    assert events[-1].kind == "error" and "HTTP 500" in events[-1].text


def test_history_carries_the_last_turns(agent_workspace: Workspace) -> None:
    with ScriptedLLM([{"text": f"answer {i}"} for i in range(3)]) as llm:
        runner = make_runner(agent_workspace, llm.base_url)
        for index in range(3):
            run(runner, f"question {index}")
    last = llm.requests[-1]["messages"]
    assert [m["content"] for m in last[1:]] == [
        "question 0",
        "answer 0",
        "question 1",
        "answer 1",
        "question 2",
    ]


def test_agent_file_provider_settings_override_the_config(agent_workspace: Workspace) -> None:
    agent_file = agent_workspace.agents_dir / "ops" / "AGENT.md"
    agent_file.write_text(
        agent_file.read_text().replace(
            "settings:", "provider:\n  model: ops-special\n  temperature: 0.25\nsettings:"
        )
    )
    with ScriptedLLM([{"text": "ok"}]) as llm:
        run(make_runner(agent_workspace, llm.base_url), "hi")
    assert llm.requests[0]["model"] == "ops-special"
    assert llm.requests[0]["temperature"] == 0.25


def test_a_slow_model_times_out_with_a_clear_message(agent_workspace: Workspace) -> None:
    with ScriptedLLM([{"delay": 2, "text": "too late"}]) as llm:
        settings = Settings(llm=LlmSettings(base_url=llm.base_url, model="m", timeout_seconds=0.3))
        memory = MemoryService.open(agent_workspace, settings, clock=fixed_clock)
        runner = AgentLoop(agent_workspace, settings, memory, SessionStore(agent_workspace.db_path))
        events = run(runner, "hello")
    assert events[-1].kind == "error"
    assert "did not answer within" in events[-1].text and "llm.timeout_seconds" in events[-1].text
