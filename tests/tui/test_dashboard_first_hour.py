"""The dashboard as a new user met it (issue 23), through Pilot: recall leads to the entry, the
keys that apply are in the footer and the palette, the panes have the width, and no key types
into something hidden."""

from __future__ import annotations

import time

import pytest
from textual.command import CommandPalette
from textual.widgets import Input, OptionList

from oryxtui.memory.format import ARCHIVAL_HEADER, CORE_HEADER
from oryxtui.tui.screens.change_entry import EditEntryScreen
from oryxtui.tui.screens.recall import RecallScreen
from oryxtui.workspace import Workspace
from tests.dashboard_support import (
    archival_pane,
    build_workspace,
    core_pane,
    make_app,
    side_column,
    wait_for,
)
from tests.support import make_agent


@pytest.fixture
def demo_workspace(workspace: Workspace) -> Workspace:
    build_workspace(workspace)
    (make_agent(workspace, "ops") / "MEMORY.md").write_text(
        f"{CORE_HEADER}\n- [2026-07-20 08:00:00] Deploy window is Tuesdays 14:00-16:00\n"
        f"{ARCHIVAL_HEADER}\n- [2026-07-20 09:00:00] the pager rota changed\n"
    )
    return workspace


def footer_keys(app: object) -> list[str]:
    bindings = app.screen.active_bindings  # type: ignore[attr-defined]
    return [key for key, active in bindings.items() if active.binding.show]


async def test_enter_on_a_recall_hit_shows_it_in_its_agent(demo_workspace: Workspace) -> None:
    app = make_app(demo_workspace)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(pilot, lambda: archival_pane(app).view.row_count == 60)  # alpha
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.focused, Input))
        await pilot.press(*"window deploy")  # the words of a core entry, in another order
        screen = app.screen
        assert isinstance(screen, RecallScreen)
        await pilot.press("ctrl+t")  # every agent: ops holds it
        results = screen.query_one("#recall-results", OptionList)
        await wait_for(pilot, lambda: results.option_count >= 1)
        first = str(results.get_option_at_index(0).prompt)
        assert "core" in first and "ops" in first and "Deploy window" in first
        await pilot.press("down", "y")  # y copies the highlighted hit
        assert app.clipboard == "- [2026-07-20 08:00:00] Deploy window is Tuesdays 14:00-16:00"
        await pilot.press("enter")  # shows it: ops selected, the core pane focused, on it
        await wait_for(pilot, lambda: app.dashboard.shown == "ops")
        view = core_pane(app).view
        await wait_for(pilot, lambda: view.has_focus)
        entry = view.entry_at_cursor()
        assert entry is not None and entry.content.startswith("Deploy window")
        await pilot.press("i")  # so the entry keys act on it
        await wait_for(pilot, lambda: isinstance(app.screen, EditEntryScreen))
        await pilot.press("escape")


async def test_the_footer_shows_the_focused_panes_keys(demo_workspace: Workspace) -> None:
    app = make_app(demo_workspace)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(pilot, lambda: archival_pane(app).view.row_count == 60)
        on_agents = footer_keys(app)
        assert {"h", "g", "S", "question_mark"} <= set(on_agents)
        assert "i" not in on_agents  # no entry is the focused pane's
        await pilot.press("tab")
        await pilot.press("tab")
        await wait_for(pilot, lambda: archival_pane(app).view.has_focus)
        keys = footer_keys(app)
        assert keys[:5] == ["i", "u", "m", "x", "D"]  # the pane's own keys first


async def test_the_footer_is_made_again_only_when_its_keys_change(
    demo_workspace: Workspace,
) -> None:
    from textual.widgets._footer import FooterKey

    app = make_app(demo_workspace)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(pilot, lambda: archival_pane(app).view.row_count == 60)
        # The footer drawn and settled (on a busy machine its first keys come a frame later).
        drawn: set[FooterKey] = set()
        deadline = time.monotonic() + 30
        while not drawn or drawn != set(app.screen.query(FooterKey)):
            assert time.monotonic() < deadline, "the footer never settled"
            drawn = set(app.screen.query(FooterKey))
            await pilot.pause(0.1)
        for _ in range(5):  # announced, nothing changed: the same keys stay
            app.dashboard.refresh_bindings()
            await pilot.pause()
        assert set(app.screen.query(FooterKey)) == drawn
        archival_pane(app).view.focus()  # other keys apply: the footer is made again
        await wait_for(pilot, lambda: "i" in {key.key for key in app.screen.query(FooterKey)})
        assert not drawn & set(app.screen.query(FooterKey))


@pytest.mark.parametrize(
    "title", ["History", "Digest", "Sessions", "Remove repeated", "Help", "Hide or show"]
)
async def test_the_palette_lists_every_action(demo_workspace: Workspace, title: str) -> None:
    memory = demo_workspace.memory_file("alpha")
    memory.write_text(memory.read_text() + memory.read_text().splitlines()[-1] + "\n")
    app = make_app(demo_workspace)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(pilot, lambda: archival_pane(app).view.duplicates)
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*title.split()[0].lower()[:4])
        options = app.screen.query_one(OptionList)
        await wait_for(
            pilot,
            lambda: any(
                title in str(options.get_option_at_index(i).prompt)
                for i in range(options.option_count)
            ),
        )


async def test_the_memory_panes_have_the_width_until_chat_opens(
    demo_workspace: Workspace,
) -> None:
    app = make_app(demo_workspace)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(pilot, lambda: archival_pane(app).view.row_count == 60)
        side = await side_column(pilot, app)
        assert not side.display
        assert archival_pane(app).size.width >= 125  # all of it but the agent list
        await pilot.press("c")
        await wait_for(pilot, lambda: side.display and app.dashboard.chat_pane.input.has_focus)


async def test_no_key_types_into_a_hidden_chat(demo_workspace: Workspace) -> None:
    memory = demo_workspace.memory_file("alpha")
    before = memory.read_text()
    app = make_app(demo_workspace)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(pilot, lambda: archival_pane(app).view.row_count == 60)
        side = await side_column(pilot, app)
        prompt = app.dashboard.prompt_pane
        await pilot.press("p")
        await wait_for(pilot, lambda: side.display and prompt.has_focus)
        await pilot.press("backslash")  # hides the column: the focus leaves it for the panes
        await wait_for(pilot, lambda: not side.display and archival_pane(app).view.has_focus)
        await pilot.press("c")  # opens it, on the chat: what is typed is seen
        chat = app.dashboard.chat_pane
        await wait_for(pilot, lambda: side.display and chat.input.has_focus)
        await pilot.press(*"remember that x", "enter")
        await wait_for(pilot, lambda: "] x" in memory.read_text())
        assert memory.read_text() != before
