"""Facts that change in the dashboard, through Pilot: u replaces the entry at the cursor by what
is true now; a save that may replace an older entry says so, and the review inbox offers the
replacement in one key (u) or keeps both (d), remembered."""

from __future__ import annotations

from textual.widgets import Input, Static

from oryxtui.config import Settings
from oryxtui.memory import MemoryService
from oryxtui.tui.screens.change_entry import EditEntryScreen
from oryxtui.tui.screens.review import MayReplace, ReviewScreen
from oryxtui.workspace import Workspace
from tests.dashboard_support import archival_pane, build_workspace, focus_pane, make_app, wait_for

NEWEST = "note on question 59: answer number 59"


async def test_u_replaces_the_entry_at_the_cursor(workspace: Workspace) -> None:
    build_workspace(workspace)
    memory_file = workspace.memory_file("alpha")
    app = make_app(workspace)
    async with app.run_test(size=(160, 45)) as pilot:
        archival = archival_pane(app)
        await wait_for(pilot, lambda: archival.view.row_count == 60)
        await focus_pane(pilot, archival)
        await pilot.press("up")  # the entry before the newest
        old = archival.view.entry_at_cursor()
        assert "question 58" in old.content
        await pilot.press("u")
        await wait_for(pilot, lambda: isinstance(app.screen, EditEntryScreen))
        title = str(app.screen.query_one(".dialog-title").render())
        assert "Replace the archival entry" in title
        app.screen.query_one("#edit-text", Input).value = "question 58 is answered: 42"
        await pilot.press("enter")
        await wait_for(pilot, lambda: "question 58 is answered: 42" in memory_file.read_text())
        text = memory_file.read_text()
        assert old.line not in text  # left the memory …
        assert text.rstrip("\n").endswith("question 58 is answered: 42")  # … the newest now
        await wait_for(pilot, lambda: archival.view.row_count == 60)
    service = MemoryService.open(workspace, Settings())
    (version,) = service.replaced_versions("alpha")
    assert version.entry == old and version.actor == "dashboard"


async def test_the_inbox_offers_what_a_save_may_replace(workspace: Workspace) -> None:
    build_workspace(workspace)
    service = MemoryService.open(workspace, Settings())
    first_old = service.save("alpha", "Staging host for ledger is stg-11.internal.")
    second_old = service.save("alpha", "Primary region for ledger is eu-west-1.")
    first = service.save_checked("alpha", "Staging host for ledger is now stg-14.internal.")
    second = service.save_checked("alpha", "Primary region for ledger is now us-east-2.")
    assert [u.entry for u in first.may_update] == [first_old]
    assert [u.entry for u in second.may_update] == [second_old]
    memory_file = workspace.memory_file("alpha")
    app = make_app(workspace)
    async with app.run_test(size=(160, 45), notifications=True) as pilot:
        archival = archival_pane(app)
        await wait_for(pilot, lambda: archival.view.row_count == 64)
        await focus_pane(pilot, archival)  # the newest entry: o says what it may replace
        await pilot.press("o")

        def said() -> list[str]:
            return [str(n.message) for n in app._notifications]  # type: ignore[attr-defined]

        await wait_for(pilot, lambda: any("This entry may replace" in m for m in said()))
        assert any("Primary region for ledger is eu-west-1." in m for m in said())
        await pilot.press("I")
        await wait_for(pilot, lambda: isinstance(app.screen, ReviewScreen))
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        await wait_for(pilot, lambda: len(screen.items) == 2)
        assert all(isinstance(item, MayReplace) for item in screen.items)
        title = str(screen.query_one("#review-title").render())
        assert "2 may replace an older entry" in title
        detail = screen.query_one("#review-text", Static)
        await wait_for(pilot, lambda: "older: " in str(detail.render()))
        newest = screen.items[0]
        assert isinstance(newest, MayReplace) and newest.new == second.entry
        await pilot.press("d")  # keep both: not suggested again
        await wait_for(pilot, lambda: len(screen.items) == 1)
        await pilot.press("u")  # the older staging host leaves the memory
        await wait_for(pilot, lambda: len(screen.items) == 0)
        assert first_old.line not in memory_file.read_text()
        assert second_old.line in memory_file.read_text()
    assert service.suggestions("alpha") == []
    assert [v.successor for v in service.replaced_versions("alpha")] == [first.entry]


def footer_offers(screen: ReviewScreen) -> set[str]:
    return {
        active.binding.description
        for active in screen.active_bindings.values()
        if active.binding.show and active.enabled
    }


async def test_the_inbox_offers_u_and_d_only_on_what_may_replace(workspace: Workspace) -> None:
    """Issue 58: on a held save, u and d do nothing, so the footer does not offer them."""
    build_workspace(workspace)
    workspace.config_path.write_text('[memory.review]\nhold_agents = ["beta"]\n')
    service = MemoryService.open(workspace, Settings())
    service.save("alpha", "Staging host for ledger is stg-11.internal.")
    service.save_checked("alpha", "Staging host for ledger is now stg-14.internal.")
    from oryxtui.config import load_settings
    from oryxtui.memory.history import Actor, current_actor

    held = MemoryService.open(workspace, load_settings(workspace.config_path))
    acting = current_actor.set(Actor("agent"))
    try:
        held.save("beta", "beta's note waits for a person")
    finally:
        current_actor.reset(acting)
    app = make_app(workspace, load_settings(workspace.config_path))
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("I")
        await wait_for(pilot, lambda: isinstance(app.screen, ReviewScreen))
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        await wait_for(pilot, lambda: len(screen.items) == 2)
        kinds = {}
        for _ in range(4):
            await pilot.pause()
            item = screen.highlighted
            if item is not None:
                kinds[type(item).__name__] = footer_offers(screen)
            await pilot.press("down")
        assert {"Replace older", "Keep both"} <= kinds["MayReplace"]
        assert not {"Replace older", "Keep both"} & kinds["Item"]
        assert "Approve" in kinds["Item"]


async def test_the_inbox_shows_a_held_pair_and_u_lands_the_newest_only(
    workspace: Workspace,
) -> None:
    from oryxtui.memory.history import Actor, current_actor

    build_workspace(workspace)
    workspace.config_path.write_text('[memory.review]\nhold_agents = ["alpha"]\n')
    held = {"memory": {"review": {"hold_agents": ["alpha"]}}}
    agent = MemoryService.open(workspace, Settings.model_validate(held))
    token = current_actor.set(Actor("agent"))
    try:
        old = agent.save_checked("alpha", "Staging host for ledger is stg-11.internal.").entry
        new = agent.save_checked("alpha", "Staging host for ledger is now stg-14.internal.")
    finally:
        current_actor.reset(token)
    assert [(u.entry, u.held) for u in new.may_update] == [(old, True)]
    memory_file = workspace.memory_file("alpha")
    app = make_app(workspace)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(pilot, lambda: archival_pane(app).view.row_count == 60)
        await pilot.press("I")
        await wait_for(pilot, lambda: isinstance(app.screen, ReviewScreen))
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        await wait_for(pilot, lambda: any(isinstance(i, MayReplace) for i in screen.items))
        pair = screen.items[0]
        assert isinstance(pair, MayReplace) and pair.held and pair.old == old
        detail = screen.query_one("#review-text", Static)
        await wait_for(pilot, lambda: "wait for review as a pair" in str(detail.render()))
        await pilot.press("u")  # approves the two and replaces the older
        await wait_for(pilot, lambda: "stg-14.internal" in memory_file.read_text())
        await wait_for(pilot, lambda: len(screen.items) == 0)
    text = memory_file.read_text()
    assert "stg-11.internal" not in text
    service = MemoryService.open(workspace, Settings())
    [version] = service.replaced_versions("alpha")
    assert version.entry.content == old.content and version.successor == new.entry
