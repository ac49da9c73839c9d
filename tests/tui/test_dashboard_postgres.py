"""The dashboard on a shared PostgreSQL database: what another process (another host, say)
changes appears without polling, and a database that goes away is said once and survived."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from oryxtui.config import Settings
from oryxtui.workspace import Workspace, init_workspace
from tests.backends import backend_settings
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
    env = {
        "ORYXTUI_DATABASE_URL": str(settings.database.url),
        "ORYXTUI_MEMORY__BACKEND": "database",
    }
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
