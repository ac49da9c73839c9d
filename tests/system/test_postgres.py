"""The shared database under real processes: many writers on "different hosts" (their own
workspace folders, one database url), and the server killed in the middle of their saves."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from oryxtui.config import DatabaseSettings, Settings
from oryxtui.memory.format import Scope
from oryxtui.memory.history import memory_at
from oryxtui.memory.service import MemoryService
from oryxtui.workspace import init_workspace
from tests.postgres_server import PostgresServer

pytestmark = [pytest.mark.system, pytest.mark.xdist_group("system")]

WRITER = """
import sys
from oryxtui.config import DatabaseSettings, Settings
from oryxtui.errors import OryxError
from oryxtui.memory.service import MemoryService
from oryxtui.workspace import init_workspace

root, url, name, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
settings = Settings(database=DatabaseSettings(url=url, connect_timeout_seconds=2))
settings.memory.backend = "database"
service = MemoryService.open(init_workspace(root), settings)
for i in range(count):
    try:
        service.save("shared", f"{name} note {i}", "archival")
        print("saved", i, flush=True)
    except OryxError as exc:
        print("refused", i, str(exc).replace(chr(10), " "), flush=True)
        break  # the database went away: said once, as a person would be told
"""


def writers(tmp_path: Path, url: str, count: int, each: int) -> list[subprocess.Popen[str]]:
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    return [
        subprocess.Popen(
            [sys.executable, str(script), str(tmp_path / f"host{i}"), url, f"w{i}", str(each)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=Path(__file__).parents[2],
        )
        for i in range(count)
    ]


def service_on(tmp_path: Path, url: str) -> MemoryService:
    settings = Settings(database=DatabaseSettings(url=url))
    settings.memory.backend = "database"
    return MemoryService.open(init_workspace(tmp_path / "reader"), settings)


def test_many_writers_on_many_hosts_lose_nothing(tmp_path: Path, database_url: str) -> None:
    running = writers(tmp_path, database_url, count=6, each=40)
    for process in running:
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
        assert out.count("saved") == 40, out + err
    service = service_on(tmp_path, database_url)
    contents = sorted(e.content for e in service.snapshot("shared").archival)
    assert contents == sorted(f"w{w} note {i}" for w in range(6) for i in range(40))
    records = service._recorded().changes("shared").records
    # The memory as first found (empty), then each save once, none twice, none lost.
    assert [r.op for r in records] == ["baseline"] + ["save"] * 240
    assert [r.n for r in records] == list(range(1, 242))
    replayed = memory_at(records, records[-1].n)
    assert replayed is not None
    assert sorted(replayed[Scope.ARCHIVAL]) == sorted(
        e.line for e in service.snapshot("shared").archival
    )


def test_the_server_killed_mid_save_leaves_nothing_half_written(tmp_path: Path) -> None:
    """kill -9 of the postmaster while writers save: every save a writer was told landed is
    there after the restart, and memory and history agree (each entry recorded once)."""
    server = PostgresServer()
    try:
        url = server.database()
        from oryxtui.postgres import Postgres

        setup = Postgres(DatabaseSettings(url=url))
        setup.upgrade()
        setup.close()
        running = writers(tmp_path, url, count=3, each=400)
        deadline = time.monotonic() + 60
        # Kill once the writers are well under way.
        while time.monotonic() < deadline:
            ((count,),) = _count(url)
            if count >= 60:
                break
        server.kill()
        outputs = [p.communicate(timeout=300)[0] for p in running]
        server.restart()
        told = {
            f"w{w} note {line.split()[1]}"
            for w, out in enumerate(outputs)
            for line in out.splitlines()
            if line.startswith("saved")
        }
        assert any(line.startswith("refused") for out in outputs for line in out.splitlines())
        service = service_on(tmp_path, url)
        there = {e.content for e in service.snapshot("shared").archival}
        assert told <= there  # every save reported done is there
        records = service._recorded().changes("shared").records
        saved = [key for r in records for key in r.added]
        assert len(saved) == len(there)  # no row without its record, no record twice
    finally:
        server.stop()


def _count(url: str) -> list[tuple[int]]:
    import psycopg

    with psycopg.connect(url) as connection:
        return connection.execute("SELECT count(*) FROM memory_entries").fetchall()
