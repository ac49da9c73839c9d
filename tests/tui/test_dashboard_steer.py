"""Steering memory in the dashboard, through Pilot: the entry at the cursor is edited (i),
moved to the other section (m) or deleted after a confirmation (x); the file changes on disk
and the panes follow."""

from __future__ import annotations

import pytest
from textual.widgets import Input, Static

from oryxtui.tui.screens.change_entry import ConfirmScreen, EditEntryScreen
from oryxtui.tui.screens.history import HistoryScreen
from oryxtui.workspace import Workspace
from tests.dashboard_support import (
    archival_pane,
    build_workspace,
    core_pane,
    focus_pane,
    make_app,
    wait_for,
)


@pytest.fixture
def demo_workspace(workspace: Workspace) -> Workspace:
    return build_workspace(workspace)


NEWEST = "note on question 59: answer number 59"


async def test_edit_move_and_delete_the_entry_at_the_cursor(demo_workspace: Workspace) -> None:
    memory_file = demo_workspace.memory_file("alpha")
    app = make_app(demo_workspace)
    async with app.run_test(size=(160, 45)) as pilot:
        archival = archival_pane(app)
        await wait_for(pilot, lambda: archival.view.row_count == 60)
        assert NEWEST in archival.view.entry_at_cursor().content  # the cursor follows the newest
        await focus_pane(pilot, archival)
        await pilot.press("i")
        await wait_for(pilot, lambda: isinstance(app.screen, EditEntryScreen))
        field = app.screen.query_one("#edit-text", Input)
        field.value = "the answer to 59 is known"
        await pilot.press("enter")
        await wait_for(pilot, lambda: "] the answer to 59 is known" in memory_file.read_text())
        assert "- [2026-07-21 09:59:00] the answer to 59 is known" in memory_file.read_text()
        await wait_for(pilot, lambda: archival.view.entry_at_cursor().content.startswith("the"))

        await pilot.press("m")  # to core, with its time
        await wait_for(pilot, lambda: core_pane(app).view.row_count == 2)
        assert archival.view.row_count == 59
        text = memory_file.read_text()
        core_part = text.split("## 归档记忆")[0]
        assert "- [2026-07-21 09:59:00] the answer to 59 is known" in core_part

        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("escape")  # kept
        assert archival.view.row_count == 59
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await wait_for(pilot, lambda: archival.view.row_count == 58)
        assert "answer number 58 " not in memory_file.read_text()
        assert app.service.lost("alpha") == []


async def test_a_stale_entry_is_refused_in_the_dialog(demo_workspace: Workspace) -> None:
    memory_file = demo_workspace.memory_file("alpha")
    app = make_app(demo_workspace, watch=False)
    async with app.run_test(size=(160, 45)) as pilot:
        archival = archival_pane(app)
        await wait_for(pilot, lambda: archival.view.row_count == 60)
        await focus_pane(pilot, archival)
        await pilot.press("i")
        await wait_for(pilot, lambda: isinstance(app.screen, EditEntryScreen))
        memory_file.write_text(memory_file.read_text().replace("number 59", "number fifty-nine"))
        app.screen.query_one("#edit-text", Input).value = "mine"
        await pilot.press("enter")
        error = app.screen.query_one("#edit-error")
        await wait_for(pilot, lambda: "since it was shown" in str(error.render()))
        assert "fifty-nine" in memory_file.read_text() and "] mine" not in memory_file.read_text()
        await pilot.press("escape")


async def test_repeated_entries_are_marked_and_removed_with_one_key(
    demo_workspace: Workspace,
) -> None:
    memory_file = demo_workspace.memory_file("alpha")
    with memory_file.open("a", encoding="utf-8") as handle:
        handle.write(
            "- [2026-07-21 10:00:00] Note on question 3:  ANSWER number 3 with enough "
            "words to fill a line of the archival pane\n"
        )
    app = make_app(demo_workspace)
    async with app.run_test(size=(160, 45)) as pilot:
        archival = archival_pane(app)
        await wait_for(pilot, lambda: archival.view.row_count == 61)
        assert archival.view.duplicates == {60}
        assert "= 1 repeated (D removes)" in str(archival.border_title)
        await focus_pane(pilot, archival)
        await pilot.press("D")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await wait_for(pilot, lambda: archival.view.row_count == 60)
        assert "ANSWER" not in memory_file.read_text()
        assert not archival.view.duplicates


async def test_the_history_view_shows_changes_the_memory_then_and_brings_back(
    demo_workspace: Workspace,
) -> None:
    memory_file = demo_workspace.memory_file("alpha")
    app = make_app(demo_workspace)
    async with app.run_test(size=(160, 45)) as pilot:
        archival = archival_pane(app)
        await wait_for(pilot, lambda: archival.view.row_count == 60)
        await focus_pane(pilot, archival)
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await wait_for(pilot, lambda: archival.view.row_count == 59)
        assert NEWEST not in memory_file.read_text()

        await pilot.press("h")
        await wait_for(pilot, lambda: isinstance(app.screen, HistoryScreen))
        history = app.screen
        assert isinstance(history, HistoryScreen)
        await wait_for(pilot, lambda: len(history.shown) == 1)
        title = str(history.query_one("#history-title").render())
        # One change, numbered #2: the title says why (#1 is where the history began).
        assert "1 change " in title and "numbered from #2" in title
        diff = str(history.query_one("#history-diff", Static).render())
        assert "Deleted — deleted by dashboard" in diff and NEWEST in diff
        await wait_for(pilot, lambda: history.then is not None)
        then = str(history.query_one("#history-then", Static).render())
        assert "Memory right after #" in then and "59 archival" in then

        # An outside writer: recorded while the view is open, and shown at once.
        with open(memory_file, "a") as handle:
            handle.write("- [2026-07-21 11:00:00] typed in an editor\n")
        await wait_for(pilot, lambda: len(history.shown) == 2)
        assert history.shown[0].actor == "outside"
        await pilot.press("f")  # who: dashboard only
        assert [r.actor for r in history.shown] == ["dashboard"]
        await wait_for(
            pilot, lambda: "by dashboard" in str(history.query_one("#history-title").render())
        )

        await pilot.press("b")  # the deleted entry comes back, with its time
        await wait_for(pilot, lambda: NEWEST in memory_file.read_text())
        assert f"- [2026-07-21 09:59:00] {NEWEST}" in memory_file.read_text()
        while history.who != "everyone":  # round to everyone
            await pilot.press("f")
        await wait_for(pilot, lambda: len(history.shown) == 3)
        assert history.shown[0].op == "restore"
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, HistoryScreen))
        await wait_for(pilot, lambda: archival.view.row_count == 61)
