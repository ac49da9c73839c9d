"""History compaction in the prompt (issue 15, part 3): the turns that fall out of the window
are one summary message at the start of the history, made once per conversation and cut, shown
by the prompt preview as its own block."""

from __future__ import annotations

from oryxtui.agent.compaction import split
from oryxtui.agent.loop import AgentLoop
from oryxtui.agent.messages import Message
from oryxtui.agent.sessions import SessionStore
from oryxtui.config import Settings
from oryxtui.memory import MemoryService
from oryxtui.workspace import Workspace
from tests.llm_server import ScriptedLLM
from tests.support import fixed_clock, make_agent


def turns(count: int) -> list[Message]:
    history: list[Message] = []
    for i in range(count):
        history += [Message("user", f"question {i}"), Message("assistant", f"answer {i}")]
    return history


def test_the_cut_moves_every_quarter_of_the_window() -> None:
    assert split(turns(3), 4) == ([], turns(3))
    earlier, window = split(turns(6), 4)  # a step of one turn: the window is exact
    assert earlier == turns(2) and window == turns(6)[4:]
    earlier, window = split(turns(9), 8)  # a step of two: the cut waits for two turns
    assert earlier == [] and len(window) == 18
    earlier, window = split(turns(10), 8)
    assert len(earlier) == 4 and len(window) == 16  # two summarised, eight in the window
    assert split(turns(11), 8)[0] == earlier  # the same summary for one more turn


def runner(workspace: Workspace, llm_url: str | None = None) -> AgentLoop:
    settings = Settings.model_validate(
        {
            "prompt": {"compact_history": True, "max_history_turns": 2},
            "llm": {"base_url": llm_url, "model": "m"} if llm_url else {},
        }
    )
    memory = MemoryService.open(workspace, settings, clock=fixed_clock)
    return AgentLoop(
        workspace, settings, memory, SessionStore(workspace.db_path, clock=fixed_clock)
    )


def test_earlier_turns_become_one_summary_message(workspace: Workspace) -> None:
    make_agent(workspace, "ops")
    agent = runner(workspace)  # the offline model: the extractive summary
    for text in ["the deploy window is Tuesday", "the pager code is 4711", "hello", "thanks"]:
        list(agent.run("ops", text, "test", "mei"))
    prompt = agent.prompt("ops", "test:mei:ops")
    summary = prompt.block("summary")
    assert summary.text.startswith("Summary of the earlier conversation (2 turns, extractive): ")
    assert "deploy window is Tuesday" in summary.text and "4711" in summary.text
    assert "pager code" not in prompt.block("history").text
    assert prompt.messages[1] == {"role": "system", "content": summary.text}
    assert [b.name for b in prompt.blocks].index("summary") == [
        b.name for b in prompt.blocks
    ].index("history") - 1
    assert summary.chars <= 800


def test_the_llm_summary_is_asked_for_once_per_cut(workspace: Workspace) -> None:
    make_agent(workspace, "ops")
    script = [
        {"text": "reply 0"},
        {"text": "reply 1"},
        {"text": "Mei set the deploy window."},  # the summary of turn 0, for turn 2
        {"text": "reply 2"},
        {"text": "Mei set the deploy window and the pager code."},  # of turns 0-1
        {"text": "reply 3"},
    ]
    with ScriptedLLM(script) as llm:
        agent = runner(workspace, llm.base_url)
        for text in ["the deploy window is Tuesday", "the pager code is 4711", "hello", "ok"]:
            list(agent.run("ops", text, "test", "mei"))
        for _ in range(3):  # the preview, built again and again
            prompt = agent.prompt("ops", "test:mei:ops")
    asked = [r for r in llm.requests if "Summarise these" in r["messages"][0]["content"]]
    assert len(asked) == 2  # once per cut, not once per prompt
    assert prompt.block("summary").text.endswith("): Mei set the deploy window and the pager code.")
    assert llm.requests[-1]["messages"][1]["content"] == prompt.block("summary").text
