"""The dashboard attached to real servers (`oryxtui attach`), through Pilot: every action goes
over the REST API, and the panes follow each server's event stream."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack

import pytest
from textual.widgets import Input, OptionList, Static

from oryxtui.memory.format import ARCHIVAL_HEADER, CORE_HEADER
from oryxtui.remote.client import Server
from oryxtui.remote.fleet import Fleet
from oryxtui.tui.app import OryxApp
from oryxtui.tui.screens.change_entry import ConfirmScreen, EditEntryScreen
from oryxtui.tui.screens.history import HistoryScreen
from oryxtui.tui.screens.recall import RecallScreen
from oryxtui.tui.screens.sessions import SessionsScreen
from oryxtui.tui.widgets.agent_list import SERVER_ID
from oryxtui.workspace import init_workspace
from tests.dashboard_support import (
    agent_list,
    archival_pane,
    build_workspace,
    chat_pane,
    core_pane,
    focus_pane,
    paste,
    prompts,
    shown_memory,
    wait_for,
)
from tests.serve_process import ServeProcess
from tests.support import cli, make_agent


@pytest.fixture
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, tuple]]:
    one = build_workspace(init_workspace(tmp_path_factory.mktemp("one")))
    two = init_workspace(tmp_path_factory.mktemp("two"))
    (make_agent(two, "solo") / "MEMORY.md").write_text(
        f"{CORE_HEADER}\n{ARCHIVAL_HEADER}\n- [2026-07-21 09:00:00] solo note\n"
    )
    # Servers in processes of their own: Pilot waits for this process to idle after each key.
    with ExitStack() as stack:
        found, running = {}, []
        for name, workspace in (("one", one), ("two", two)):
            running.append(stack.enter_context(ServeProcess(workspace.root)))
            found[name] = (workspace, running[-1].url)
        yield found
        for server in running:  # both stop at once
            server.process.terminate()


def attached(servers: dict[str, tuple]) -> tuple[OryxApp, Fleet]:
    fleet = Fleet([Server(url, name=name) for name, (_, url) in servers.items()])
    app = OryxApp.attached(fleet, user="tester")
    return app, fleet


def showing(app: OryxApp, agent: str) -> bool:
    shown = shown_memory(app)
    return shown is not None and shown.summary.name == agent and shown.snapshot is not None


NEWEST = "note on question 59: answer number 59"


async def test_the_sidebar_groups_each_servers_agents_and_edits_go_over_the_api(
    servers: dict[str, tuple],
) -> None:
    memory_file = servers["one"][0].memory_file("alpha")
    app, _ = attached(servers)
    async with app.run_test(size=(160, 45)) as pilot:
        agents = agent_list(app)
        await wait_for(
            pilot, lambda: agents.order == ["alpha@one", "beta@one", "@one", "solo@two", "@two"]
        )
        ids = [agents.get_option_at_index(i).id for i in range(agents.option_count)]
        assert ids[0] == SERVER_ID + "one" and ids[4] == SERVER_ID + "two"
        assert agents.get_option_at_index(0).disabled
        await wait_for(pilot, lambda: showing(app, "alpha@one"))
        archival = archival_pane(app)
        await wait_for(pilot, lambda: archival.view.row_count == 60)

        await pilot.press("s")  # save
        await wait_for(pilot, lambda: isinstance(app.focused, Input))
        await paste(pilot, "deploys wait for the canary")
        await pilot.press("enter")
        await wait_for(pilot, lambda: archival.view.row_count == 61)
        assert "] deploys wait for the canary\n" in memory_file.read_text()

        await focus_pane(pilot, archival)
        await pilot.press("i")  # edit the entry at the cursor (the newest)
        await wait_for(pilot, lambda: isinstance(app.screen, EditEntryScreen))
        app.screen.query_one("#edit-text", Input).value = "deploys wait for two canaries"
        await pilot.press("enter")
        await wait_for(pilot, lambda: "] deploys wait for two canaries" in memory_file.read_text())
        await wait_for(pilot, lambda: archival.view.entry_at_cursor().content.endswith("canaries"))
        await pilot.press("m")  # to core
        await wait_for(pilot, lambda: core_pane(app).view.row_count == 2)
        await focus_pane(pilot, archival)
        await wait_for(pilot, lambda: NEWEST in archival.view.entry_at_cursor().content)
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await wait_for(pilot, lambda: archival.view.row_count == 59)
        assert NEWEST not in memory_file.read_text()

        await pilot.press("h")  # the history, from the server: who did it, and bring back
        await wait_for(pilot, lambda: isinstance(app.screen, HistoryScreen))
        history = app.screen
        assert isinstance(history, HistoryScreen)
        await wait_for(pilot, lambda: len(history.shown) == 4)
        assert {record.actor for record in history.shown} == {"api"}
        diff = str(history.query_one("#history-diff", Static).render())
        assert "deleted by api" in diff and NEWEST in diff
        await pilot.press("b")
        await wait_for(pilot, lambda: NEWEST in memory_file.read_text())
        await pilot.press("escape")
        await wait_for(pilot, lambda: archival.view.row_count == 60)

        with memory_file.open("a") as handle:  # an editor on the server's host repeats one
            handle.write(
                "- [2026-07-21 12:00:00] Note on question 3: ANSWER number 3 with "
                "enough words to fill a line of the archival pane\n"
            )
        await wait_for(pilot, lambda: archival.view.duplicates == {60})
        await focus_pane(pilot, archival)
        await pilot.press("D")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await wait_for(pilot, lambda: archival.view.row_count == 60)
        assert "ANSWER" not in memory_file.read_text()


async def test_recall_digest_chat_prompt_and_sessions_over_the_api(
    servers: dict[str, tuple],
) -> None:
    memory_file = servers["one"][0].memory_file("alpha")
    app, _ = attached(servers)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(pilot, lambda: showing(app, "alpha@one"))
        archival = archival_pane(app)
        await wait_for(pilot, lambda: archival.view.row_count == 60)

        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, RecallScreen))
        results = app.screen.query_one("#recall-results", OptionList)
        await pilot.press(*"NUMBER 1")
        await wait_for(pilot, lambda: results.option_count == 11)
        await pilot.press("escape")

        outside = archival.snapshot.window_start  # type: ignore[union-attr]
        await pilot.press("g")  # a digest, planned and written by the server
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        said = str(app.screen.query_one(".dialog-detail").render())
        assert f"{outside} entries outside the window are not covered" in said
        await pilot.press("y")
        await wait_for(pilot, lambda: archival.view.row_count == 61)
        assert "摘要 " in memory_file.read_text()
        await wait_for(pilot, lambda: archival.view.digests == frozenset({60}))

        await pilot.press("c")
        await paste(pilot, "remember that the pager code is 4711")
        await pilot.press("enter")
        chat = chat_pane(app)
        await wait_for(pilot, lambda: chat.turns_ended == 1)
        await wait_for(pilot, lambda: archival.view.row_count == 62)
        assert "] the pager code is 4711" in memory_file.read_text()
        await wait_for(
            pilot, lambda: "pager code is 4711" in prompts(app)["alpha@one"].block("memory").text
        )
        await pilot.press("escape", "S")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionsScreen))
        screen = app.screen
        await wait_for(
            pilot, lambda: any("tui:tester:alpha" in str(s["session"]) for s in screen.sessions)
        )  # type: ignore[attr-defined]


async def test_a_change_on_either_server_shows_at_once(servers: dict[str, tuple]) -> None:
    two = servers["two"][0]
    app, _ = attached(servers)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(pilot, lambda: showing(app, "alpha@one"))
        agents = agent_list(app)
        await wait_for(pilot, lambda: agents.summaries["solo@two"].archival_count == 1)
        assert (
            cli(
                "memory", "save", "from the second host", "--agent", "solo", "--root", str(two.root)
            ).code
            == 0
        )
        await wait_for(pilot, lambda: agents.summaries["solo@two"].archival_count == 2)
        cli("agents", "new", "fresh", "--root", str(two.root))
        await wait_for(pilot, lambda: "fresh@two" in agents.order)


async def test_a_read_only_key_dims_the_changes_and_says_why_before_any_dialog(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Attached with a read key: saving, editing, moving and deleting are dimmed in the
    footer, and their keys (and the palette) say at once, in one sentence that does not show
    the key, that it is read-only — no save dialog opens to refuse only after typing, and
    nothing is written. A write key on another server keeps them."""
    from oryxtui.tui.commands import dashboard_commands
    from oryxtui.tui.screens.dashboard import DashboardScreen
    from oryxtui.tui.screens.save_entry import SaveEntryScreen

    workspace = init_workspace(tmp_path_factory.mktemp("ro"))
    (make_agent(workspace, "ops") / "MEMORY.md").write_text(
        f"{CORE_HEADER}\n{ARCHIVAL_HEADER}\n- [2026-07-21 09:00:00] ops note\n"
    )
    reader = cli("keys", "create", "viewer", "--scope", "read", "--root", str(workspace.root))
    writer = cli("keys", "create", "alice", "--scope", "write", "--root", str(workspace.root))
    memory_file = workspace.memory_file("ops")
    before = memory_file.read_bytes()
    with ServeProcess(workspace.root) as served:
        fleet = Fleet(
            [
                Server(served.url, key=reader.stdout.strip(), name="ro"),
                Server(served.url, key=writer.stdout.strip(), name="rw"),
            ]
        )
        app = OryxApp.attached(fleet, user="tester")
        async with app.run_test(size=(160, 45)) as pilot:
            agents = agent_list(app)
            await wait_for(pilot, lambda: "ops@ro" in agents.order and "ops@rw" in agents.order)
            screen = app.screen
            assert isinstance(screen, DashboardScreen)
            screen.show_agent("ops@ro")
            await wait_for(pilot, lambda: archival_pane(app).view.row_count == 1)
            assert screen.check_action("save_entry", ()) is None  # dimmed: shown, not run
            assert screen.check_action("delete_entry", ()) is None
            assert screen.check_action("recall", ()) is True  # reading is not a change
            footer = {a.binding.action: a.enabled for a in screen.active_bindings.values()}
            assert footer["save_entry"] is False and footer["recall"] is True
            await pilot.press("s")
            await pilot.pause()
            assert not isinstance(app.screen, SaveEntryScreen)
            assert not isinstance(app.focused, Input)
            said = [str(n.message) for n in app._notifications]  # type: ignore[attr-defined]
            assert any("read-only" in text and "write scope" in text for text in said), said
            assert all(reader.stdout.strip() not in text for text in said)
            assert memory_file.read_bytes() == before
            (save,) = [
                (title, why, run)
                for title, why, run in dashboard_commands(screen)
                if title.startswith("Save an entry")
            ]
            assert save[0] == "Save an entry (not allowed)" and "read-only" in save[1]
            save[2]()
            await pilot.pause()
            assert not isinstance(app.screen, SaveEntryScreen)
            screen.show_agent("ops@rw")
            await wait_for(pilot, lambda: screen.check_action("save_entry", ()) is True)
            await pilot.press("s")
            await wait_for(pilot, lambda: isinstance(app.screen, SaveEntryScreen))
