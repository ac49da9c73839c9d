"""Snapshots of the main screen and the two modals: fixed size, fixed clock, no real paths.

Update on purpose only: `pytest tests/tui/test_snapshots.py --snapshot-update`, then read the
report.
"""

from __future__ import annotations

from textual.pilot import Pilot

from oryxtui.config import Settings
from oryxtui.tui.screens.history import HistoryScreen
from oryxtui.workspace import Workspace
from tests.dashboard_support import (
    agent_list,
    archival_pane,
    build_workspace,
    chat_pane,
    make_app,
    memory_shown,
    prompts,
    wait_for,
)

SIZE = (160, 40)


async def _loaded(pilot: Pilot) -> None:
    await pilot.pause()
    app = pilot.app
    await wait_for(pilot, lambda: memory_shown(app))
    await wait_for(
        pilot, lambda: all(s.core_count is not None for s in agent_list(app).summaries.values())
    )
    await wait_for(pilot, lambda: "alpha" in prompts(app) and chat_pane(app).model)
    await wait_for(
        pilot, lambda: archival_pane(app).view.scroll_y == archival_pane(app).view.max_scroll_y
    )
    await pilot.pause()


def test_main_screen(snap_compare, workspace: Workspace) -> None:
    app = make_app(build_workspace(workspace), watch=False)
    assert snap_compare(app, terminal_size=SIZE, run_before=_loaded)


def test_save_modal(snap_compare, workspace: Workspace) -> None:
    async def open_modal(pilot: Pilot) -> None:
        await _loaded(pilot)
        await pilot.press("s")
        await wait_for(pilot, lambda: pilot.app.screen.query("#save-text"))
        await pilot.press(*"deploy window is Tuesday 14:00")
        await pilot.pause()

    app = make_app(build_workspace(workspace), watch=False)
    assert snap_compare(app, terminal_size=SIZE, run_before=open_modal)


def test_recall_modal(snap_compare, workspace: Workspace) -> None:
    async def recall(pilot: Pilot) -> None:
        await _loaded(pilot)
        await pilot.press("r")
        await wait_for(pilot, lambda: pilot.app.screen.query("#recall-keyword"))
        await pilot.press(*"question 4")
        results = pilot.app.screen.query_one("#recall-results")
        await wait_for(pilot, lambda: results.option_count == 11)
        await pilot.pause()

    keyword = Settings.model_validate({"memory": {"recall": {"mode": "keyword"}}})
    app = make_app(build_workspace(workspace), keyword, watch=False)
    assert snap_compare(app, terminal_size=SIZE, run_before=recall)


def test_ranked_recall_modal(snap_compare, workspace: Workspace) -> None:
    """Hybrid recall without an embedder: best first, each hit with its routes and ranks."""

    async def recall(pilot: Pilot) -> None:
        await _loaded(pilot)
        await pilot.press("r")
        await wait_for(pilot, lambda: pilot.app.screen.query("#recall-keyword"))
        await pilot.press(*"answer number 4")
        results = pilot.app.screen.query_one("#recall-results")
        # The substring matches (4, 40-49); entries sharing only "answer number" are too weak.
        await wait_for(pilot, lambda: results.option_count == 11)
        await pilot.pause()

    settings = Settings.model_validate({"memory": {"recall": {"mode": "hybrid"}}})
    app = make_app(build_workspace(workspace), settings, watch=False)
    assert snap_compare(app, terminal_size=SIZE, run_before=recall)


def test_chat_pane_after_a_turn(snap_compare, workspace: Workspace) -> None:
    async def chat(pilot: Pilot) -> None:
        await _loaded(pilot)
        await pilot.press("c", *"remember that the pager code is 4711", "enter")
        await wait_for(pilot, lambda: chat_pane(pilot.app).turns_ended == 1)
        await wait_for(pilot, lambda: archival_pane(pilot.app).view.row_count == 61)
        await wait_for(pilot, lambda: not archival_pane(pilot.app).view.fresh)
        await pilot.pause()

    app = make_app(build_workspace(workspace), watch=True)
    assert snap_compare(app, terminal_size=SIZE, run_before=chat)


def test_prompt_pane(snap_compare, workspace: Workspace) -> None:
    async def prompt(pilot: Pilot) -> None:
        await _loaded(pilot)
        await pilot.press("p")
        await wait_for(pilot, lambda: pilot.app.dashboard.query("#block-memory"))
        await pilot.pause()

    app = make_app(build_workspace(workspace), watch=False)
    assert snap_compare(app, terminal_size=SIZE, run_before=prompt)


def test_history_view(snap_compare, workspace: Workspace) -> None:
    """An edit, a delete and an outside change; the edit selected, with the memory then."""
    build_workspace(workspace)
    app = make_app(workspace, watch=False)
    service = app.service
    archival = service.snapshot("alpha").archival
    service.edit("alpha", archival[-1].id, "the answer to 59 is known")
    service.delete("alpha", archival[-2].id)
    with open(workspace.memory_file("alpha"), "a", encoding="utf-8") as memory:
        memory.write("- [2026-07-21 11:00:00] typed in an editor\n")

    async def history(pilot: Pilot) -> None:
        await _loaded(pilot)
        await pilot.press("h")
        screen = pilot.app.screen
        await wait_for(pilot, lambda: isinstance(screen, HistoryScreen) and len(screen.shown) == 3)
        await pilot.press("down", "down")  # the edit
        await wait_for(pilot, lambda: screen.then is not None and screen.then.record.op == "edit")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=history)


def test_help_screen(snap_compare, workspace: Workspace) -> None:
    settings = Settings.model_validate({"tui": {"keymap": {"save": "ctrl+s"}}})
    app = make_app(build_workspace(workspace), settings, watch=False)

    async def open_help(pilot: Pilot) -> None:
        await _loaded(pilot)
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: pilot.app.screen.query(".help-keys"))
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=open_help)
