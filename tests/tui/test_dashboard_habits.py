"""What a user expects of a terminal app (issue 14, part 4), through Pilot: focus starts on the
agents, `?` lists the keys as bound now, the chat column hides and resizes, the entry at the
cursor is shown whole, and the mouse clicks agents and entries and scrolls."""

from __future__ import annotations

from typing import Any

import pytest
from textual import events
from textual.widgets import Static

from oryxtui.config import Settings
from oryxtui.tui.screens.change_entry import ConfirmScreen
from oryxtui.tui.screens.help import HelpScreen
from oryxtui.tui.widgets.agent_list import AgentList
from oryxtui.workspace import Workspace
from tests.dashboard_support import (
    agent_list,
    archival_pane,
    build_workspace,
    make_app,
    shown_memory,
    side_column,
    wait_for,
)


@pytest.fixture
def demo_workspace(workspace: Workspace) -> Workspace:
    return build_workspace(workspace)


def showing(app: object, agent: str | None) -> bool:
    shown = shown_memory(app)  # type: ignore[arg-type]
    return shown is not None and shown.summary.name == agent and shown.snapshot is not None


async def test_focus_starts_on_the_agents_so_arrows_change_agent(
    demo_workspace: Workspace,
) -> None:
    app = make_app(demo_workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: showing(app, "alpha"))
        assert isinstance(app.focused, AgentList)
        await pilot.press("down")
        await wait_for(pilot, lambda: showing(app, "beta"))
        await pilot.press("up")
        await wait_for(pilot, lambda: showing(app, "alpha"))
        await pilot.press("tab")  # on to the memory: the focused pane's border stands out
        assert app.focused is not None and not isinstance(app.focused, AgentList)


async def test_help_lists_the_keys_as_bound_now(demo_workspace: Workspace) -> None:
    settings = Settings.model_validate({"tui": {"keymap": {"save": "ctrl+s", "history": "H"}}})
    app = make_app(demo_workspace, settings)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: showing(app, "alpha"))
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen)
        keys = {what: keys for keys, what in help_screen.rows}
        assert keys["Save"] == "^s"  # rebound
        assert keys["History"] == "H"
        assert keys["Recall"] == "r" and keys["Help"] == "?"
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, HelpScreen))


async def test_the_chat_column_hides_and_resizes(demo_workspace: Workspace) -> None:
    app = make_app(demo_workspace)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_for(pilot, lambda: showing(app, "alpha"))
        side = await side_column(pilot, app)
        main = app.dashboard.query_one("#main")
        # Until the chat or the prompt is opened, the memory panes have the width.
        assert not side.display
        wide_main = main.size.width
        await pilot.press("backslash")
        await wait_for(pilot, lambda: side.display and side.size.width > 0)
        await wait_for(pilot, lambda: main.size.width < wide_main - 40)
        narrow_main = main.size.width
        await pilot.press("backslash")
        await wait_for(pilot, lambda: main.size.width == wide_main)
        await pilot.press("backslash")
        await wait_for(pilot, lambda: main.size.width == narrow_main)
        before = side.size.width
        await pilot.press("left_square_bracket")  # wider
        await wait_for(pilot, lambda: side.size.width > before)
        await pilot.press("right_square_bracket", "right_square_bracket")  # narrower
        await wait_for(pilot, lambda: side.size.width < before)


async def test_the_entry_at_the_cursor_is_shown_whole_and_scrolls(
    demo_workspace: Workspace,
) -> None:
    long = " ".join(f"word{i}" for i in range(250))  # ~1,900 characters
    app = make_app(demo_workspace)
    app.service.save("alpha", long, "archival")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: showing(app, "alpha"))
        detail = app.dashboard.query_one("#archival-detail", Static)
        await wait_for(pilot, lambda: "word249" in str(detail.render()))
        holder = detail.parent
        assert holder is not None
        await pilot.press("tab", "tab")  # to the archival pane
        await pilot.press("shift+down", "shift+down")
        await wait_for(pilot, lambda: holder.scroll_y == 2)  # type: ignore[attr-defined]


async def test_the_mouse_picks_agents_and_entries_and_scrolls(demo_workspace: Workspace) -> None:
    app = make_app(demo_workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: showing(app, "alpha"))
        agents = agent_list(app)
        await pilot.click(AgentList, offset=(4, 2))  # the second row: beta
        await wait_for(pilot, lambda: showing(app, "beta"))
        await pilot.click(AgentList, offset=(4, 1))
        await wait_for(pilot, lambda: showing(app, "alpha"))
        view = archival_pane(app).view
        await wait_for(pilot, lambda: view.row_count == 60 and view.max_scroll_y > 0)
        await pilot.click("#archival-view", offset=(10, 2))  # an entry on screen
        assert app.focused is view
        clicked = view.cursor
        assert view.entry_at_cursor() is not None
        assert clicked == int(view.scroll_y) + 2
        top = view.scroll_y
        await pilot._post_mouse_events([events.MouseScrollUp], "#archival-view", (10, 2))
        await wait_for(pilot, lambda: view.scroll_y < top)
        assert agents.highlighted == 0


async def test_g_previews_a_digest_writes_it_and_the_pane_marks_it(
    demo_workspace: Workspace,
) -> None:
    app = make_app(demo_workspace)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(pilot, lambda: showing(app, "alpha"))
        pane = archival_pane(app)
        outside = pane.snapshot.window_start  # type: ignore[union-attr]
        assert outside > 0
        await pilot.press("g")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        said = str(app.screen.query_one(".dialog-detail").render())
        assert f"{outside} entries outside the window are not covered" in said
        await pilot.press("y")
        await wait_for(pilot, lambda: pane.view.row_count == 61)
        snapshot = pane.snapshot
        assert snapshot is not None
        newest = snapshot.archival[-1]
        covered = snapshot.window_start  # with the digest in place: all that is left out
        assert covered > outside  # the digest's own room pushed a few more out
        assert newest.content.startswith("摘要 ") and f"({covered} entries, extractive)" in (
            newest.content
        )
        assert pane.view.digests == frozenset({60})
        assert pane.view.covered == frozenset(range(covered))
        assert f"Σ {covered} covered" in str(pane.border_title)
        detail = app.dashboard.query_one("#archival-detail", Static)
        await wait_for(pilot, lambda: "covers the ~ entries from" in str(detail.render()))
        assert f"(archival entries 1–{covered})" in str(detail.render())
        await pilot.press("g")  # nothing more to digest
        await wait_for(
            pilot,
            lambda: any("Nothing to consolidate" in str(n.message) for n in app._notifications),
        )


async def test_escape_steps_back_one_level_at_a_time(tmp_path) -> None:
    """The sessions view, as a sequence: S, a search, a hit, its past prompt (ctrl+t); then
    each escape is one level back — the prompt, the search, the view — and the next key is a
    dashboard key again, never typed into a search field."""
    from textual.widgets import Input

    from oryxtui.demo import create_demo_workspace
    from oryxtui.tui.screens.dashboard import DashboardScreen
    from oryxtui.tui.screens.review import ReviewScreen
    from oryxtui.tui.screens.sessions import SessionsScreen
    from oryxtui.tui.screens.turn_prompt import TurnPromptScreen

    workspace, _ = create_demo_workspace(tmp_path / "demo")
    app = make_app(workspace, Settings())
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(pilot, lambda: shown_memory(app) is not None)
        app.dashboard.select("ops-bot")  # whose past conversations speak of deploys
        await wait_for(pilot, lambda: showing(app, "ops-bot"))
        await pilot.press("S")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionsScreen))
        sessions = app.screen
        await pilot.press("slash", *"deploy", "enter")
        await wait_for(pilot, lambda: bool(sessions.hits))  # type: ignore[attr-defined]
        await pilot.press("enter", "ctrl+t")
        await wait_for(pilot, lambda: isinstance(app.screen, TurnPromptScreen))
        await pilot.press("escape")  # 1: the past prompt closes
        await wait_for(pilot, lambda: app.screen is sessions)
        await pilot.press("escape")  # 2: the search is cleared, the sessions listed again
        await wait_for(pilot, lambda: not sessions.query_one("#sessions-search", Input).value)
        assert app.screen is sessions and not isinstance(app.focused, Input)
        await pilot.press("escape")  # 3: back on the dashboard
        await wait_for(pilot, lambda: isinstance(app.screen, DashboardScreen))
        await pilot.press("I")  # a dashboard key, not text in a search field
        await wait_for(pilot, lambda: isinstance(app.screen, ReviewScreen))


async def test_help_shows_every_key_the_footer_shows_wherever_the_focus_is(
    demo_workspace: Workspace,
) -> None:
    """From the agent list and from an archival entry: each key the footer shows at that
    moment is in help, the entry's own grouped "On an entry", the rest "Anywhere"."""
    app = make_app(demo_workspace, Settings())
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(pilot, lambda: showing(app, "alpha"))
        for place in ("agents", "archival"):
            if place == "archival":
                archival_pane(app).view.focus()
                await pilot.pause()
            screen = app.screen
            footer = {
                active.binding.description
                for active in screen.active_bindings.values()
                if active.binding.show and active.binding.description
            }
            await pilot.press("question_mark")
            await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
            help_screen = app.screen
            assert isinstance(help_screen, HelpScreen)
            described = {
                what.removesuffix(" (not allowed here now)") for _, what in help_screen.rows
            }
            assert footer <= described, footer - described
            places = [title for title, _ in help_screen.groups]
            assert places[-1] == "Anywhere"
            # Every group is taught wherever you are, the one you are in marked (issue 46).
            assert places[0] == (
                "On an entry — here" if place == "archival" else "In the agent list — here"
            )
            assert {"On an entry", "In the review inbox (I)"} - {
                p.removesuffix(" — here") for p in places
            } == set()
            entry = next(
                rows for title, rows in help_screen.groups if title.startswith("On an entry")
            )
            assert {"Edit", "Replace", "Move", "Delete", "Origin"} <= {what for _, what in entry}
            assert not {"Scroll Left", "Page Left"} & described  # Textual's own, left out
            await pilot.press("escape")
            await wait_for(pilot, lambda: not isinstance(app.screen, HelpScreen))


async def test_an_80_column_footer_still_shows_help_and_quit(demo_workspace: Workspace) -> None:
    """At 80×24 the footer is cut: after the focused place's keys come `? Help` and `q Quit`,
    so they are never the ones cut (on the agent list and on an entry)."""
    from textual.widgets._footer import FooterKey

    app = make_app(demo_workspace, Settings())
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: showing(app, "alpha"))
        for focus in ("agents", "entry"):
            if focus == "entry":
                archival_pane(app).view.focus()
            await pilot.pause()

            def drawn() -> dict[str, Any]:
                keys = app.screen.query(FooterKey)
                return {key.description: key.region for key in keys if key.region.width}

            await wait_for(pilot, lambda: "Help" in drawn())  # on a busy machine, a frame later

            def marker() -> Any:  # made again with the keys when the focus moves
                return app.screen.query_one("#footer-more")

            await wait_for(pilot, lambda: marker().display)  # the rest behind "…more (?)"
            more = marker()
            shown = drawn()
            for wanted in ("Help", "Quit"):
                assert wanted in shown and shown[wanted].right <= 80, (focus, sorted(shown))
            # Whole keys or none (issue 46): none runs into the marker or past the edge.
            for key in app.screen.query(FooterKey):
                if key.display and key.region.width and not key.has_class("-command-palette"):
                    assert key.region.right <= more.region.x, (focus, key.description)
        await pilot.resize_terminal(200, 40)  # room for every key: the marker goes
        await wait_for(pilot, lambda: not app.screen.query_one("#footer-more").display)


async def test_toasts_never_cover_a_pane_border(demo_workspace: Workspace) -> None:
    """A toast sits inside the panes: off the rightmost column (the panes' right border) and
    above the bottom border and the footer."""
    from textual.widgets._toast import Toast

    app = make_app(demo_workspace, Settings())
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await wait_for(pilot, lambda: showing(app, "alpha"))
        app.notify("a toast long enough to reach the right edge of the screen, or nearly")
        await wait_for(pilot, lambda: bool(app.screen.query(Toast)))
        await pilot.pause()
        (toast,) = app.screen.query(Toast)
        width, height = app.size
        assert toast.region.right <= width - 1 and toast.region.bottom <= height - 2, toast.region


async def test_the_background_threads_end_with_the_run_even_without_an_unmount(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index keeper and the listener are told to stop when the dashboard's run ends, even
    if its shutdown never reached Unmount — as `oryxtui web` showed under a full CI run: its
    dashboard, stopped with the server, stayed alive (480 MB) waiting on the index keeper."""
    from oryxtui.tui.app import OryxApp

    build_workspace(workspace)
    monkeypatch.setattr(OryxApp, "on_unmount", lambda self: None)  # Unmount never handled
    app = make_app(workspace)

    async def quit_at_once(pilot: Any) -> None:
        await pilot.press("q")

    await app.run_async(headless=True, size=(120, 40), auto_pilot=quit_at_once)
    assert app._stopping.is_set()
    assert app.return_code == 0  # and no traceback from the column mounted after the first frame
