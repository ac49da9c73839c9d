"""The review inbox in the dashboard (I): what agents wrote, grouped by agent with its turn;
approve, reject, edit then approve, approve all; enter opens the turn in the sessions view;
held saves are marked in the sidebar."""

from __future__ import annotations

import pytest
from textual.widgets import Input, OptionList, Static

from oryxtui.config import Settings
from oryxtui.memory import MemoryService
from oryxtui.tui.screens.change_entry import ConfirmScreen, EditEntryScreen
from oryxtui.tui.screens.review import ReviewScreen
from oryxtui.tui.screens.sessions import SessionsScreen
from oryxtui.workspace import Workspace
from tests.dashboard_support import agent_list, build_workspace, make_app, wait_for
from tests.support import cli


@pytest.fixture
def reviewed(workspace: Workspace) -> Workspace:
    build_workspace(workspace)
    workspace.config_path.write_text('[memory.review]\nhold_agents = ["beta"]\n')
    root = ("--root", str(workspace.root))
    for message in ("remember that the pager code is 4711", "remember that deploys are Tue"):
        assert cli("chat", "--agent", "alpha", message, *root).code == 0
    assert cli("chat", "--agent", "beta", "remember that beta is held", *root).code == 0
    return workspace


def settings_of(workspace: Workspace) -> Settings:
    from oryxtui.config import load_settings

    return load_settings(workspace.config_path)


async def test_the_inbox_lists_approves_rejects_and_opens_the_turn(reviewed: Workspace) -> None:
    app = make_app(reviewed, settings_of(reviewed))
    memory = reviewed.memory_file("alpha")
    async with app.run_test(size=(160, 45)) as pilot:
        agents = agent_list(app)
        await wait_for(pilot, lambda: agents.summaries["beta"].held_count == 1)
        await pilot.press("I")
        await wait_for(pilot, lambda: isinstance(app.screen, ReviewScreen))
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        await wait_for(pilot, lambda: len(screen.items) == 3)
        listed = screen.query_one(OptionList)
        assert listed.get_option_at_index(0).disabled  # a heading per agent
        contents = [item.awaiting.entry.content for item in screen.items]
        assert contents[:2] == ["deploys are Tue", "the pager code is 4711"]
        detail = screen.query_one("#review-text", Static)
        await wait_for(pilot, lambda: "user: remember that deploys" in str(detail.render()))

        await pilot.press("x")  # reject the newest of alpha: asked first, as on the panes
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("escape")  # kept
        await wait_for(pilot, lambda: app.screen is screen)
        assert "deploys are Tue" in memory.read_text() and len(screen.items) == 3
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")  # then removed from the memory
        await wait_for(pilot, lambda: len(screen.items) == 2)
        assert "deploys are Tue" not in memory.read_text()
        await wait_for(pilot, lambda: screen.selected is not None)
        await pilot.press("i")  # edit the pager entry, then approve
        await wait_for(pilot, lambda: isinstance(app.screen, EditEntryScreen))
        app.screen.query_one("#edit-text", Input).value = "the pager code is 4712"
        await pilot.press("enter")
        await wait_for(pilot, lambda: "] the pager code is 4712" in memory.read_text())
        await wait_for(pilot, lambda: len(screen.items) == 1)
        held = screen.items[0]
        assert held.agent == "beta" and held.awaiting.held
        await pilot.press("enter")  # the turn that held it
        await wait_for(pilot, lambda: isinstance(app.screen, SessionsScreen))
        sessions = app.screen
        await wait_for(
            pilot,
            lambda: "beta is held" in str(sessions.query_one("#sessions-text", Static).render()),
        )
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen)
        await pilot.press("A")  # approve all of beta: the held save is written
        await wait_for(pilot, lambda: len(screen.items) == 0)
    assert "beta is held" in reviewed.memory_file("beta").read_text()
    service = MemoryService.open(reviewed, settings_of(reviewed))
    assert service.awaiting_review("alpha") == [] and service.held("beta") == []


async def test_o_on_an_entry_opens_its_turn_and_p_shows_what_the_model_received(
    reviewed: Workspace,
) -> None:
    from oryxtui.tui.screens.turn_prompt import TurnPromptScreen
    from tests.dashboard_support import archival_pane, focus_pane

    app = make_app(reviewed, settings_of(reviewed))
    async with app.run_test(size=(160, 45)) as pilot:
        archival = archival_pane(app)
        await wait_for(pilot, lambda: archival.view.row_count == 62)
        await focus_pane(pilot, archival)
        assert archival.view.entry_at_cursor().content == "deploys are Tue"
        await pilot.press("o")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionsScreen))
        sessions = app.screen
        text = sessions.query_one("#sessions-text", Static)
        await wait_for(pilot, lambda: "deploys are Tue" in str(text.render()))
        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: isinstance(app.screen, TurnPromptScreen))
        shown = app.screen.query_one("#turn-prompt-text", Static)
        await wait_for(pilot, lambda: "── memory ·" in str(shown.render()))
        body = str(shown.render())
        assert "pager code is 4711" in body  # the entry the turn before saved, injected
        assert "remember that deploys are Tue" in body  # the user's message as sent
        title = str(app.screen.query_one("#turn-prompt-title").render())
        assert "turn 1" in title
        await pilot.press("left_square_bracket")
        await wait_for(
            pilot, lambda: "turn 0" in str(app.screen.query_one("#turn-prompt-title").render())
        )
        await pilot.press("escape", "escape")
        await focus_pane(pilot, archival)
        await pilot.press("home", "o")  # a hand-written line from before the history
        await wait_for(pilot, lambda: any("unknown" in str(n.message) for n in app._notifications))


async def test_a_held_edit_shows_as_before_and_after_and_a_approves_it(
    workspace: Workspace,
) -> None:
    from oryxtui.memory.history import Actor, current_actor

    build_workspace(workspace)
    workspace.config_path.write_text("[memory.review]\nhold = true\n")
    settings = settings_of(workspace)
    person = MemoryService.open(workspace, settings, actor=Actor("dashboard"))
    note = person.save("alpha", "deploys go out on Tuesdays")
    token = current_actor.set(Actor("mcp:cursor"))
    try:
        MemoryService.open(workspace, settings).edit("alpha", note.id, "deploys: Fridays")
    finally:
        current_actor.reset(token)
    app = make_app(workspace, settings)
    memory = workspace.memory_file("alpha")
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("I")
        await wait_for(pilot, lambda: isinstance(app.screen, ReviewScreen))
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        await wait_for(pilot, lambda: any(i.awaiting.proposes == "edit" for i in screen.items))
        index = next(i for i, item in enumerate(screen.items) if item.awaiting.proposes == "edit")
        listed = screen.query_one(OptionList)
        listed.highlighted = listed.get_option_index(f"item-{index}")
        detail = screen.query_one("#review-text", Static)
        await wait_for(pilot, lambda: "Held edit" in str(detail.render()))
        shown = str(detail.render())
        assert "− archival: deploys go out on Tuesdays" in shown
        assert "+ archival: deploys: Fridays" in shown
        assert "deploys: Fridays" not in memory.read_text()  # nothing changed yet
        await pilot.press("a")
        await wait_for(pilot, lambda: "] deploys: Fridays" in memory.read_text())
        await wait_for(pilot, lambda: not any(i.awaiting.held for i in screen.items))
    assert "deploys go out on Tuesdays" not in memory.read_text()


async def test_after_a_the_cursor_stays_in_place_and_rows_wrap_under_their_text(
    reviewed: Workspace,
) -> None:
    from rich.console import Console

    from oryxtui.tui.screens.review import item_row

    app = make_app(reviewed, settings_of(reviewed))
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("I")
        await wait_for(pilot, lambda: isinstance(app.screen, ReviewScreen))
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        await wait_for(pilot, lambda: len(screen.items) == 3)
        await pilot.press("down")  # the second of alpha's
        await wait_for(pilot, lambda: screen.selected is screen.items[1])
        await pilot.press("a")
        await wait_for(pilot, lambda: len(screen.items) == 2)
        # The next item (beta's held save) is highlighted, not the top of the list.
        await wait_for(pilot, lambda: screen.selected is not None)
        assert screen.selected is screen.items[1] and screen.items[1].agent == "beta"
        console = Console(width=40, record=True, color_system=None)
        console.print(item_row(screen.items[0]))  # type: ignore[arg-type]
        lines = console.export_text().rstrip("\n").split("\n")
        assert len(lines) > 2 and all(line.startswith("      ") for line in lines[1:])
