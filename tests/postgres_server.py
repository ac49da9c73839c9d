"""A real PostgreSQL 16 with pgvector for the tests, from the `pgserver` wheel: one server per
test process (xdist worker) in a short temporary folder, and a fresh database per test."""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import tempfile
import time
import uuid
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit


class PostgresServer:
    """A running server; `database()` makes a new empty database and gives its url."""

    def __init__(self) -> None:
        import pgserver

        # The server's socket lives in its folder: keep the path short (sun_path is 108 bytes).
        self.folder = Path(tempfile.mkdtemp(prefix="oryxpg"))
        with warnings.catch_warnings():  # platformdirs: no XDG_RUNTIME_DIR on a CI machine
            warnings.simplefilter("ignore")
            self.server: Any = pgserver.get_server(self.folder, cleanup_mode="stop")
        self.url = self.server.get_uri()  # postgresql://postgres:@/postgres?host=FOLDER

    def url_of(self, database: str) -> str:
        parts = urlsplit(self.url)
        return urlunsplit(parts._replace(netloc="postgres@", path=f"/{database}"))

    def database(self) -> str:
        name = "t_" + uuid.uuid4().hex[:12]
        self.server.psql(f"CREATE DATABASE {name};")
        return self.url_of(name)

    def kill(self) -> None:
        """kill -9 of the postmaster, as a crash or the OOM killer would."""
        pid = int((self.folder / "postmaster.pid").read_text().split()[0])
        os.kill(pid, signal.SIGKILL)

    def restart(self, timeout: float = 60.0) -> None:
        """Start it again on the same folder (crash recovery runs); the backends of a killed
        postmaster may take a moment to go, so try until the deadline."""
        import pgserver
        from pgserver.postgres_server import PostgresServer as Handle

        atexit.unregister(self.server._cleanup)  # a handle to the dead server
        Handle._instances.pop(self.folder.resolve(), None)
        # Where nobody reaps the killed postmaster it stays a zombie, which looks alive to
        # pg_ctl and to a new postmaster: its lock file goes once its backends have gone.
        deadline = time.monotonic() + timeout
        while _backends_alive(self.folder) and time.monotonic() < deadline:
            time.sleep(0.05)
        for lock in [self.folder / "postmaster.pid", *self.folder.glob(".s.PGSQL.*.lock")]:
            lock.unlink(missing_ok=True)
        deadline = time.monotonic() + timeout
        while True:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    self.server = pgserver.get_server(self.folder, cleanup_mode="stop")
                return
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def stop(self) -> None:
        """Stopped at once (`-m immediate`: no checkpoint of data about to be deleted; pgserver's
        own stop took 2-4 s a worker at the suite's end), its handle dropped, its folder gone."""
        from pgserver._commands import pg_ctl
        from pgserver.postgres_server import PostgresServer as Handle

        try:
            pg_ctl(
                ["-w", "-m", "immediate", "stop"],
                pgdata=self.server.pgdata,
                user=self.server.system_user,
            )
        except Exception:  # not running (killed by a test): pgserver's cleanup sees to it
            self.server.cleanup()
            return
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)
        atexit.unregister(self.server._cleanup)  # stopped: nothing for pgserver to stop
        Handle._instances.pop(self.folder.resolve(), None)


def _backends_alive(folder: Path) -> bool:
    """Whether any live (not zombie) postgres process still serves `folder`."""
    import psutil

    for process in psutil.process_iter(attrs=["name", "status", "cmdline", "cwd"]):
        info = process.info
        if info["name"] == "postgres" and info["status"] != psutil.STATUS_ZOMBIE:
            try:
                if str(folder) in " ".join(info["cmdline"] or []) or info["cwd"] == str(folder):
                    return True
            except TypeError:
                continue
    return False


@contextmanager
def postgres_server() -> Iterator[PostgresServer]:
    server = PostgresServer()
    try:
        yield server
    finally:
        server.stop()
