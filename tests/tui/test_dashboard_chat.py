"""The chat and prompt-preview panes, driven through Pilot with the offline model."""

from __future__ import annotations

import json
import sqlite3

import pytest
from textual.widgets import Collapsible, Input, Markdown, TabbedContent

from oryxtui.tui.app import OryxApp
from oryxtui.tui.widgets.prompt_pane import PromptPane
from oryxtui.workspace import Workspace
from tests.dashboard_support import (
    app_with_llm,
    archival_pane,
    build_workspace,
    chat_pane,
    make_app,
    paste,
    prompts,
    shown_memory,
    wait_for,
)
from tests.llm_server import ScriptedLLM


@pytest.fixture
def demo_workspace(workspace: Workspace) -> Workspace:
    return build_workspace(workspace)


def ready(app: OryxApp) -> bool:
    return (
        shown_memory(app) is not None
        and shown_memory(app).snapshot is not None
        and "alpha" in prompts(app)
    )


async def test_a_chat_turn_saves_streams_and_updates_every_pane(demo_workspace: Workspace) -> None:
    app = make_app(demo_workspace)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(pilot, lambda: ready(app))
        before = prompts(app)["alpha"]
        await pilot.press("c")
        assert isinstance(app.focused, Input) and app.focused.id == "chat-input"
        await paste(pilot, "remember that the pager code is 4711")
        await pilot.press("enter")
        chat = chat_pane(app)
        await wait_for(pilot, lambda: chat.turns_ended == 1)
        replies = [m.source for m in chat.query(Markdown)]
        assert "(offline model) Noted in archival memory." in replies
        (tool,) = chat.query(Collapsible)
        assert "✓ save_memory" in str(tool.title)
        # The entry arrives through the normal watcher path, and no footprint with it.
        await wait_for(pilot, lambda: archival_pane(app).view.row_count == 61)
        rows = [e.content for e in shown_memory(app).snapshot.archival][-2:]
        assert rows[1] == "the pager code is 4711"
        assert "触发" not in rows[0]
        await wait_for(
            pilot, lambda: "pager code is 4711" in prompts(app)["alpha"].block("memory").text
        )
        after = prompts(app)["alpha"]
        assert "user: remember that the pager code" in after.block("history").text
        assert after.block("memory").chars > before.block("memory").chars
        await pilot.press("escape", "p")
        assert app.query_one(TabbedContent).active == "prompt-tab"
        pane = app.query_one(PromptPane)
        await wait_for(
            pilot, lambda: pane.shown is not None and pane.shown == prompts(app)["alpha"]
        )
        # The save and the stored turn may reach the preview as one prompt or as two: the last
        # one changed the memory block, the history block, or both.
        marked = [pane.query_one(f"#block-{name}", Collapsible) for name in ("memory", "history")]
        assert any("changed" in str(b.title) and b.has_class("changed") for b in marked)
        summary = str(pane.query_one("#prompt-summary").render())
        assert "of 8192 tokens" in summary and "memory" in summary
    with sqlite3.connect(demo_workspace.db_path) as connection:
        (messages,) = connection.execute(
            "SELECT messages_json FROM sessions WHERE session_id = 'tui:tester:alpha'"
        ).fetchone()
    assert [m["role"] for m in json.loads(messages)] == ["user", "assistant", "tool", "assistant"]


async def test_the_session_history_comes_back_when_the_agent_is_selected(
    demo_workspace: Workspace,
) -> None:
    app = make_app(demo_workspace)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(pilot, lambda: ready(app))
        await pilot.press("c")
        await paste(pilot, "what do you remember about question 7")
        await pilot.press("enter")
        # Wait for the reply itself: the input can still be enabled before the turn has begun.
        await wait_for(
            pilot,
            lambda: any("answer number 7" in m.source for m in chat_pane(app).query(Markdown)),
        )
        await wait_for(pilot, lambda: chat_pane(app).turns_ended == 1)
    again = make_app(demo_workspace)
    async with again.run_test(size=(160, 45)) as pilot:
        await wait_for(pilot, lambda: ready(again))
        await wait_for(pilot, lambda: len(chat_pane(again).query(".chat-user")) == 1)
        # The reply is drawn after the question: wait for it too, not only the question.
        await wait_for(
            pilot,
            lambda: any("answer number 7" in m.source for m in chat_pane(again).query(Markdown)),
        )


async def test_a_failed_turn_unlocks_the_input_and_keeps_the_text(
    demo_workspace: Workspace,
) -> None:
    with ScriptedLLM([]) as llm:
        dead = llm.base_url
    app = app_with_llm(demo_workspace, dead)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(pilot, lambda: ready(app))
        await pilot.press("c")
        await paste(pilot, "hello [/bold] anyone?")
        await pilot.press("enter")
        chat = chat_pane(app)
        await wait_for(pilot, lambda: chat.query(".chat-error"))
        await wait_for(pilot, lambda: chat.turns_ended == 1)
        assert chat.input.value == "hello [/bold] anyone?"
        assert "Cannot reach the LLM" in str(chat.query_one(".chat-error").render())
        assert app.is_running


async def test_replies_with_markup_render_literally(demo_workspace: Workspace) -> None:
    script = [{"text": "Use [/bold] and [@click=app.quit]this[/] **safely**."}]
    with ScriptedLLM(script) as llm:
        app = app_with_llm(demo_workspace, llm.base_url)
        async with app.run_test(size=(160, 45)) as pilot:
            await wait_for(pilot, lambda: ready(app))
            await pilot.press("c", *"hi", "enter")
            await wait_for(pilot, lambda: chat_pane(app).turns_ended == 1)
            await pilot.pause(0.1)
            assert app.is_running
            assert any("[/bold]" in m.source for m in chat_pane(app).query(Markdown))


async def test_escape_during_a_turn_returns_to_the_panes_and_stays(
    demo_workspace: Workspace,
) -> None:
    with ScriptedLLM([{"text": "a slow reply", "delay": 0.5}]) as llm:
        app = app_with_llm(demo_workspace, llm.base_url)
        async with app.run_test(size=(160, 45)) as pilot:
            await wait_for(pilot, lambda: ready(app))
            await pilot.press("c", *"hi", "enter")
            await wait_for(pilot, lambda: chat_pane(app).turns_begun == 1)
            await pilot.press("escape")
            assert app.focused is not None and app.focused.id == "archival-view"
            await wait_for(pilot, lambda: chat_pane(app).turns_ended == 1)
            await wait_for(pilot, lambda: any(m.source for m in chat_pane(app).query(Markdown)))
            # The end of the turn does not pull the focus back into the chat.
            assert app.focused is not None and app.focused.id == "archival-view"
            await pilot.press("p")
            assert app.query_one(TabbedContent).active == "prompt-tab"


async def test_the_prompt_preview_shows_what_recall_gave_in_the_last_turn(
    demo_workspace: Workspace,
) -> None:
    app = make_app(demo_workspace)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(pilot, lambda: ready(app))
        await pilot.press("c")
        await paste(pilot, "what do you remember about answer number 42")
        await pilot.press("enter")
        chat = chat_pane(app)
        await wait_for(pilot, lambda: chat.turns_ended == 1)
        await wait_for(pilot, lambda: prompts(app)["alpha"].recalls != ())
        (use,) = prompts(app)["alpha"].recalls
        assert use.keyword == "answer number 42" and len(use.entries) == 1
        pane = app.dashboard.query_one(PromptPane)
        await wait_for(pilot, lambda: bool(pane.query("#prompt-recall")))
        shown = str(pane.query_one("#prompt-recall").render())
        assert "recall_memory('answer number 42') → 1 entry" in shown
        assert "note on question 42: answer number 42" in shown
