"""The dashboard on a shared PostgreSQL database: what another process (another host, say)
changes appears without polling, and a database that goes away is said once and survived."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from oryxtui.config import Settings
from oryxtui.errors import OryxError
from oryxtui.memory import MemoryService
from oryxtui.workspace import Workspace, init_workspace
from tests.backends import backend_settings, on_database
from tests.dashboard_support import archival_pane, make_app, wait_for
from tests.support import make_agent, oryxtui_process
from tests.tui.test_dashboard import loaded


def shared(request: pytest.FixtureRequest) -> Settings:
    return backend_settings(request, "postgres")


async def test_a_save_on_another_host_appears_live(
    request: pytest.FixtureRequest, workspace: Workspace, tmp_path: Path
) -> None:
    settings = shared(request)
    make_agent(workspace, "alpha")
    # Another host: its own workspace folder, the same database.
    other = init_workspace(tmp_path / "elsewhere")
    make_agent(other, "alpha")
    env = on_database(str(settings.database.url))
    app = make_app(workspace, settings)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: loaded(app, "alpha"))
        assert archival_pane(app).view.row_count == 0
        saved = oryxtui_process(
            "memory", "save", "--root", str(other.root), "--agent", "alpha", "from afar", env=env
        )
        assert saved.returncode == 0, saved.stderr
        started = time.monotonic()
        await wait_for(pilot, lambda: archival_pane(app).view.row_count == 1)
        assert time.monotonic() - started < 10  # announced, not polled (p95 in the benchmark)


async def test_a_database_that_goes_away_is_said_and_caught_up_on(
    workspace: Workspace, tmp_path: Path
) -> None:
    """The server stops mid-run: the dashboard says so once and keeps what it showed; a save
    is refused with one sentence; when the server is back, what changed meanwhile appears."""
    from oryxtui.config import DatabaseSettings
    from oryxtui.postgres import Postgres, close_shared
    from tests.postgres_server import PostgresServer

    server = PostgresServer()
    try:
        url = server.database()
        setup = Postgres(DatabaseSettings(url=url))
        setup.upgrade()
        setup.close()
        settings = Settings(database=DatabaseSettings(url=url, connect_timeout_seconds=2))
        settings.memory.backend = "database"
        make_agent(workspace, "alpha")
        app = make_app(workspace, settings)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: loaded(app, "alpha"))
            app.service.save("alpha", "before the outage", "archival")
            await wait_for(pilot, lambda: archival_pane(app).view.row_count == 1)
            server.kill()
            await wait_for(pilot, lambda: said(app, "cannot be reached"))
            assert archival_pane(app).view.row_count == 1  # what it showed stays
            with pytest.raises(OryxError, match="cannot be reached"):
                app.service.save("alpha", "during the outage", "archival")
            server.restart()
            other = init_workspace(tmp_path / "elsewhere")
            elsewhere = MemoryService.open(other, settings)
            elsewhere.save("alpha", "written while the dashboard was cut off", "archival")
            await wait_for(pilot, lambda: archival_pane(app).view.row_count == 2, timeout=60)
    finally:
        close_shared()
        server.stop()


def said(app: object, text: str) -> bool:
    return any(text in str(n.message) for n in app._notifications)  # type: ignore[attr-defined]


async def test_an_agent_new_to_the_database_joins_the_sidebar(
    request: pytest.FixtureRequest, workspace: Workspace, tmp_path: Path
) -> None:
    from oryxtui.tui.widgets.agent_list import AgentList

    settings = shared(request)
    make_agent(workspace, "alpha")
    app = make_app(workspace, settings)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: loaded(app, "alpha"))
        elsewhere = MemoryService.open(init_workspace(tmp_path / "elsewhere"), settings)
        elsewhere.save("builder", "only on another host", "archival")
        agents = app.query_one(AgentList)
        await wait_for(pilot, lambda: "builder" in agents.order)


async def test_agents_only_the_database_knows_are_listed_from_the_start(
    request: pytest.FixtureRequest, workspace: Workspace, tmp_path: Path
) -> None:
    """Host A made `builder` (a folder there, memory in the database); host B has no folder
    for it: B's sidebar and palette offer it from the first moment, as `agents list` does."""
    from oryxtui.tui.commands import dashboard_commands
    from oryxtui.tui.widgets.agent_list import AgentList

    settings = shared(request)
    make_agent(workspace, "alpha")
    elsewhere = init_workspace(tmp_path / "elsewhere")
    make_agent(elsewhere, "builder")
    MemoryService.open(elsewhere, settings).save("builder", "made on host A", "archival")
    app = make_app(workspace, settings)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: loaded(app, "alpha"))
        agents = app.query_one(AgentList)
        await wait_for(pilot, lambda: "builder" in agents.order)
        offered = [title for title, _, _ in dashboard_commands(app.screen)]
        assert "Show builder" in offered
        app.screen.show_agent("builder")
        await wait_for(pilot, lambda: loaded(app, "builder"))
        assert archival_pane(app).view.row_count == 1


async def test_a_turn_on_another_host_appears_in_the_open_sessions_view(
    request: pytest.FixtureRequest, workspace: Workspace, tmp_path: Path
) -> None:
    from oryxtui.tui.screens.sessions import SessionsScreen
    from tests.support import run_oryxtui

    settings = shared(request)
    make_agent(workspace, "alpha")
    # Another host: its own workspace folder, the same database.
    other = init_workspace(tmp_path / "elsewhere")
    make_agent(other, "alpha")
    env = on_database(str(settings.database.url))
    app = make_app(workspace, settings)
    async with app.run_test(size=(150, 40)) as pilot:
        await wait_for(pilot, lambda: loaded(app, "alpha"))
        await pilot.press("S")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionsScreen))
        screen = app.screen
        assert isinstance(screen, SessionsScreen)
        listed = screen.query_one("#sessions-list")
        await wait_for(pilot, lambda: str(listed.border_title).endswith("· 0"))  # loaded: none
        said = run_oryxtui("chat", "--root", str(other.root), "--agent", "alpha", "hello", env=env)
        assert said.returncode == 0, said.stderr
        await wait_for(pilot, lambda: len(screen.sessions) == 1)
        assert screen.sessions[0]["turns"] == 1
