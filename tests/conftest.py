from __future__ import annotations

import gc
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from textual.widgets import Input

from oryxtui.config import Settings
from oryxtui.memory import MemoryService
from oryxtui.workspace import Workspace, init_workspace
from tests.postgres_server import PostgresServer
from tests.support import fixed_clock
from tests.tmux import Terminal

# Property tests never fail on time: on a busy machine an example takes ten times as long as
# on a quiet one, and a deadline would turn that into a red run. In CI (`scripts/test` sets
# HYPOTHESIS_PROFILE=ci) the examples are the same every run, so a failure there is one a person
# reproduces by running the test again.
hypothesis_settings.register_profile(
    "default", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
hypothesis_settings.register_profile(
    "ci", deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


# The garbage collector runs rarer from here (the collection imports and rewrites every test
# module), and what the imports and the collection made is frozen out of its sight: measured
# with `gc.callbacks`, the fast suite spent 62 s of its 230 s of CPU in the collector (about
# 2,600 collections a worker), mostly rescanning those objects; with this, 34 s of 220 (800).
gc.set_threshold(50_000, 20, 20)


def pytest_collection_finish(session: pytest.Session) -> None:
    gc.collect()
    gc.freeze()


@pytest.fixture(autouse=True)
def _isolated_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """No user's workspace, config or editor leaks into a test."""
    for name in list(os.environ):
        if name.startswith("ORYXTUI_") or name == "ORYXOS_ROOT":
            monkeypatch.delenv(name)
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    # Whoever runs the tests: their XDG folders (a user's config.toml with [remotes]) are not
    # the test's; each test's are under its own home, where the XDG defaults put them.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    # The cache is the run's, shared by its tests and workers: what it holds (the `onnx`
    # model quantized, 3 s to make) is derived from installed files alone.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp().parent / "cache"))
    # No blinking cursor: a snapshot must not depend on which half-second it was taken in.
    monkeypatch.setattr(Input, "_toggle_cursor", lambda self: None)


@pytest.fixture
def open_folder() -> Iterator[Path]:
    """A short folder every user may pass through, as a home often is (pytest's own are
    private, and long: a socket kept in a data folder needs a short path)."""
    made = Path(tempfile.mkdtemp(prefix="oryxw"))
    made.chmod(0o755)
    yield made
    shutil.rmtree(made, ignore_errors=True)


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    return init_workspace(tmp_path / "project")


@pytest.fixture
def service(workspace: Workspace) -> MemoryService:
    return MemoryService.open(workspace, Settings(), clock=fixed_clock)


@pytest.fixture
def terminal() -> Iterator[Terminal]:
    """A tmux server of the test's own (the end-to-end tests run the real dashboard in it)."""
    assert shutil.which("tmux"), "tmux is needed for this test (.ci/run installs it)"
    folder = Path(tempfile.mkdtemp(prefix="oryxtui-tmux-"))  # short: a socket path is <108 bytes
    term = Terminal(str(folder / "socket"))
    yield term
    term.tmux("kill-server")
    shutil.rmtree(folder, ignore_errors=True)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests live by layer: the slow ones that need real processes, terminals, browsers or
    installs are in tests/system and marked `system` (so `-m "not system"` is the fast loop)."""
    for item in items:
        placed = item.path.parent.name == "system"
        if placed != (item.get_closest_marker("system") is not None):
            raise pytest.UsageError(
                f"{item.nodeid}: a test in tests/system is marked system, and only those are"
            )


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One real PostgreSQL with pgvector for this test process, started on first use."""
    from tests.postgres_server import postgres_server as started

    with started() as server:
        yield server


@pytest.fixture
def database_url(postgres_server: PostgresServer) -> Iterator[str]:
    """A fresh database with oryxtui's schema, on the real server; the process's pools to it
    closed after the test."""
    from oryxtui.config import DatabaseSettings
    from oryxtui.postgres import Postgres, close_shared

    url = postgres_server.database()
    database = Postgres(DatabaseSettings(url=url))
    database.upgrade()
    database.close()
    yield url
    close_shared()
