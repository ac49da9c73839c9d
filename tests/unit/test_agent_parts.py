"""Tools, the executor's audit, history windows, the prompt builder, sessions, the offline model."""

from __future__ import annotations

import json
import sqlite3

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oryxtui.agent.loop import AgentLoop, footprint
from oryxtui.agent.messages import Message, ToolCall, last_turns
from oryxtui.agent.prompt import RecallUse, recalls_of_last_turn
from oryxtui.agent.providers.offline import OfflineModel
from oryxtui.agent.sessions import SessionStore
from oryxtui.config import PromptSettings, Settings
from oryxtui.errors import SessionConflict
from oryxtui.memory import MemoryService
from oryxtui.memory.format import ARCHIVAL_HEADER, CORE_HEADER
from oryxtui.workspace import Workspace
from tests.support import fixed_clock, make_agent


@pytest.fixture
def runner(workspace: Workspace) -> AgentLoop:
    make_agent(
        workspace, "ops", "tools: [save_memory, web_search]\nbootstrap: [USER.md, gone.md]\n"
    )
    settings = Settings()
    memory = MemoryService.open(workspace, settings, clock=fixed_clock)
    return AgentLoop(
        workspace, settings, memory, SessionStore(workspace.db_path, clock=fixed_clock)
    )


def audits(workspace: Workspace) -> list[tuple]:
    with sqlite3.connect(workspace.db_path) as connection:
        return connection.execute(
            "SELECT session_id, tool_name, input_json, result_json, success, error_message,"
            " duration_ms FROM tool_invocations ORDER BY id"
        ).fetchall()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (ToolCall("1", "save_memory", "{not json"), "not valid JSON"),
        (ToolCall("2", "save_memory", "[1, 2]"), "JSON object"),
        (ToolCall("3", "launch_rockets", "{}"), "Unknown tool 'launch_rockets'"),
        (ToolCall("4", "save_memory", '{"content": "x", "scope": "episodic"}'), "scope"),
        (ToolCall("5", "save_memory", '{"content": "   "}'), "empty"),
        (ToolCall("6", "recall_memory", "{}"), "keyword"),
        (ToolCall("7", "save_memory", '{"content": "x", "extra": 1}'), "extra"),
    ],
)
def test_bad_tool_calls_fail_cleanly_store_nothing_and_are_audited(
    runner: AgentLoop, workspace: Workspace, call: ToolCall, message: str
) -> None:
    result = runner.executor.execute(call, "ops", "s1")
    assert result.success is False and message in (result.error or "")
    assert json.loads(result.content) == {"error": result.error}
    assert not (workspace.agents_dir / "ops" / "MEMORY.md").exists()
    (row,) = audits(workspace)
    assert row[:3] == ("s1", call.name, call.arguments_json)
    assert row[3] is None and row[4] == 0 and message in row[5] and row[6] >= 0


def test_a_tool_that_raises_is_a_failed_result(runner: AgentLoop, workspace: Workspace) -> None:
    class Broken(type(runner.tools["recall_memory"])):  # type: ignore[misc]
        def run(self, arguments):
            raise RuntimeError("disk on fire")

    runner.executor.tools["recall_memory"] = Broken(runner.memory)
    result = runner.executor.execute(
        ToolCall("1", "recall_memory", '{"keyword": "x"}'), "ops", None
    )
    assert result.success is False and "RuntimeError: disk on fire" in result.error
    assert audits(workspace)[0][4] == 0


def test_tools_write_to_the_agent_of_the_call(runner: AgentLoop, workspace: Workspace) -> None:
    make_agent(workspace, "other")
    runner.executor.execute(ToolCall("1", "save_memory", '{"content": "for ops"}'), "ops", "a")
    runner.executor.execute(ToolCall("2", "save_memory", '{"content": "for other"}'), "other", "b")
    assert "for ops" in (workspace.agents_dir / "ops" / "MEMORY.md").read_text()
    assert "for ops" not in (workspace.agents_dir / "other" / "MEMORY.md").read_text()
    success = audits(workspace)
    assert [row[4] for row in success] == [1, 1]
    assert json.loads(success[0][3])["saved"] is True


def test_tool_schemas_come_from_the_input_models(runner: AgentLoop) -> None:
    schema = runner.tools["save_memory"].schema()["function"]
    assert schema["name"] == "save_memory"
    assert schema["parameters"]["properties"]["scope"]["enum"] == ["core", "archival"]
    assert schema["parameters"]["required"] == ["content"]


def _turns(count: int) -> list[Message]:
    messages: list[Message] = []
    for index in range(count):
        call = ToolCall(f"c{index}", "recall_memory", "{}")
        messages += [
            Message("user", f"q{index}"),
            Message("assistant", "", tool_calls=(call,)),
            Message("tool", "{}", tool_name="recall_memory", tool_call_id=f"c{index}"),
            Message("assistant", f"a{index}"),
        ]
    return messages


def test_history_keeps_the_last_whole_turns_with_their_tool_messages() -> None:
    kept = last_turns(_turns(25), 20)
    assert len(kept) == 80
    assert kept[0] == Message("user", "q5")
    assert [m.role for m in kept[:4]] == ["user", "assistant", "tool", "assistant"]
    assert last_turns(_turns(3), 20) == _turns(3)


def test_prompt_blocks_in_order_with_sizes_and_warnings(
    runner: AgentLoop, workspace: Workspace
) -> None:
    (workspace.root / "USER.md").write_text("User: Mei")
    runner.memory.save("ops", "likes tea", "core")
    prompt = runner.prompts.build("ops", [Message("user", "hi")])
    assert [b.name for b in prompt.blocks] == ["identity", "time", "memory", "history", "tools"]
    identity = prompt.block("identity").text
    assert identity.index("Body of ops.") < identity.index("User: Mei")
    assert "likes tea" in prompt.block("memory").text
    assert prompt.block("history").text == "user: hi"
    assert all(b.chars == len(b.text) and b.tokens > 0 for b in prompt.blocks)
    assert prompt.warnings == ("Bootstrap file gone.md is missing; skipped.",)
    # web_search is declared but does not exist; the memory tools are always there.
    assert [t["function"]["name"] for t in prompt.tools] == [
        "save_memory",
        "recall_memory",
        "update_memory",
        "search_conversations",
    ]
    # As upstream's PromptBuilder: the date-time line, then the memory block and a line break.
    assert prompt.block("time").text == "当前日期时间：2026-07-22 09:30"
    assert prompt.messages[0]["content"] == (
        f"{identity}\n\n当前日期时间：2026-07-22 09:30\n{prompt.block('memory').text}\n"
    )


def test_the_current_time_line_can_be_turned_off(workspace: Workspace) -> None:
    make_agent(workspace, "ops")
    settings = Settings(prompt=PromptSettings(current_time=False))
    memory = MemoryService.open(workspace, settings, clock=fixed_clock)
    runner = AgentLoop(
        workspace, settings, memory, SessionStore(workspace.db_path, clock=fixed_clock)
    )
    prompt = runner.prompts.build("ops", [])
    assert [b.name for b in prompt.blocks] == ["identity", "memory", "history", "tools"]
    identity = prompt.block("identity").text
    assert prompt.messages[0]["content"] == (
        f"{identity}\n\n{CORE_HEADER}\n\n{ARCHIVAL_HEADER}\n\n"  # upstream's empty sections
    )


def test_prompt_rereads_files_on_every_build(runner: AgentLoop, workspace: Workspace) -> None:
    agent_file = workspace.agents_dir / "ops" / "AGENT.md"
    first = runner.prompts.build("ops", [])
    agent_file.write_text(agent_file.read_text().replace("Body of ops.", "A new body."))
    (workspace.root / "USER.md").write_text("changed user file")
    second = runner.prompts.build("ops", [])
    assert "Body of ops." in first.block("identity").text
    assert "A new body." in second.block("identity").text
    assert "changed user file" in second.block("identity").text


def test_bootstrap_paths_cannot_leave_the_workspace(
    runner: AgentLoop, workspace: Workspace
) -> None:
    folder = workspace.agents_dir / "ops"
    (folder / "AGENT.md").write_text("---\nbootstrap: [../../secret.txt]\n---\n")
    (workspace.root.parent.parent / "secret.txt").write_text("secret")
    prompt = runner.prompts.build("ops", [])
    assert "secret" not in prompt.block("identity").text
    assert "outside the workspace" in prompt.warnings[0]


def test_agent_history_setting_overrides_the_config(
    runner: AgentLoop, workspace: Workspace
) -> None:
    folder = workspace.agents_dir / "ops"
    (folder / "AGENT.md").write_text("---\nsettings:\n  max_history_turns: 2\n---\n")
    prompt = runner.prompts.build("ops", _turns(5))
    assert prompt.messages[1] == {"role": "user", "content": "q3"}


def test_sessions_are_compare_and_set(workspace: Workspace) -> None:
    first, second = SessionStore(workspace.db_path), SessionStore(workspace.db_path)
    mine = first.load("tui:mei:ops", "ops", "tui", "mei")
    first.append(mine, Message("user", "one"))
    theirs = second.load("tui:mei:ops", "ops", "tui", "mei")
    second.append(theirs, Message("user", "two from another process"))
    stale = list(mine.messages)
    mine.messages = [*stale, Message("user", "three")]
    with pytest.raises(SessionConflict):
        first.save(mine)
    mine.messages = stale
    first.append(mine, Message("user", "three"))  # reloads, then adds: nothing overwritten
    final = first.load("tui:mei:ops", "ops", "tui", "mei")
    assert [m.content for m in final.messages] == ["one", "two from another process", "three"]


def test_messages_round_trip_in_the_upstream_shape() -> None:
    message = Message("assistant", "x", tool_calls=(ToolCall("c1", "save_memory", '{"a":1}'),))
    data = message.to_json()
    assert data == {
        "role": "assistant",
        "content": "x",
        "toolName": None,
        "toolCallId": None,
        "toolCalls": [{"id": "c1", "name": "save_memory", "argumentsJson": '{"a":1}'}],
    }
    assert Message.from_json(data) == message


def test_footprint_is_one_line_and_bounded() -> None:
    line = footprint("what\nis " + "x" * 300, "an answer\r\nin two lines")
    assert line.startswith("触发「what is xxx") and "\n" not in line
    assert line.endswith("」⇒ an answer in two lines")
    assert len(line.split("」⇒")[0]) <= len("触发「") + 201


def test_offline_model_drives_the_real_tools(runner: AgentLoop, workspace: Workspace) -> None:
    events = list(runner.run("ops", "remember in core that Mei is on call this week", "t", "u"))
    assert [e.kind for e in events if e.kind not in ("text", "warning")] == [
        "tool_call",
        "tool_result",
        "final",
    ]
    assert events[-1].text.startswith("(offline model)")
    memory = runner.memory.snapshot("ops")
    assert memory.core[-1].content == "Mei is on call this week"
    assert len(memory.archival) == 0  # no footprint (upstream's default since 86b6bab)
    events = list(runner.run("ops", "what do you remember about on call?", "t", "u"))
    assert "09:30:00] Mei is on call" not in events[-1].text  # core is never recalled
    assert "I don't remember anything about on call" in events[-1].text
    list(runner.run("ops", "remember that the pager code is 4711", "t", "u"))
    events = list(runner.run("ops", "What do you remember about pager?", "t", "u"))
    assert "pager code is 4711" in events[-1].text


def test_offline_model_answers_from_memory_without_tools() -> None:
    system = {
        "role": "system",
        "content": "id\n\n## 核心记忆\n- [t] deploys on Tuesday\n## 归档记忆",
    }
    turn = list(OfflineModel().stream([system, {"role": "user", "content": "when deploys?"}], []))
    assert "deploys on Tuesday" in turn[-1].text and not turn[-1].tool_calls


def test_the_prompt_knows_what_recall_gave_in_the_last_turn_only() -> None:
    calls = (
        ToolCall("c1", "recall_memory", '{"keyword": "deploy"}'),
        ToolCall("c2", "recall_memory", '{"keyword": "tea"}'),
        ToolCall("c3", "save_memory", '{"content": "x"}'),
    )
    result = {"keyword": "deploy", "count": 1, "entries": ["- [t] deploy"], "notice": "（…）"}
    history = [
        Message("user", "earlier"),
        Message("assistant", "", tool_calls=(ToolCall("c0", "recall_memory", "{}"),)),
        Message("tool", json.dumps({"keyword": "old", "entries": []}), "recall_memory", "c0"),
        Message("user", "now"),
        Message("assistant", "", tool_calls=calls),
        Message("tool", json.dumps(result), "recall_memory", "c1"),
        Message("tool", "Invalid input: keyword", "recall_memory", "c2"),
        Message("tool", '{"saved": true}', "save_memory", "c3"),
        Message("assistant", "done"),
    ]
    assert recalls_of_last_turn(history) == (
        RecallUse("deploy", ("- [t] deploy",), "（…）"),
        RecallUse("tea", (), "Invalid input: keyword"),
    )
    assert recalls_of_last_turn(history[:3]) == (RecallUse("old", ()),)


@given(st.text())
def test_a_token_estimate_counts_four_ascii_characters_or_one_other_a_token(text: str) -> None:
    from oryxtui.agent.prompt import estimate_tokens

    ascii_chars = sum(1 for char in text if ord(char) < 128)
    assert estimate_tokens(text) == -(-ascii_chars // 4) + len(text) - ascii_chars
