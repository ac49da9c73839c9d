"""oryxos.db: many connections opening a brand-new database at once all succeed."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

from oryxtui import database

OPEN_AND_WRITE = """
import sys
from pathlib import Path
from oryxtui import database
connection = database.connect(Path(sys.argv[1]))
with database.write_transaction(connection):
    connection.execute(
        "INSERT INTO memory_entries (agent_name, scope, content, created_at)"
        " VALUES ('a', 'ARCHIVAL', ?, '2026-07-22 09:30:00')", (sys.argv[2],)
    )
"""


def test_threads_opening_a_new_database_at_once(tmp_path: Path) -> None:
    # The race is narrow: repeat it on fresh databases (without the retry, ~1 in 10 fails).
    errors: list[str] = []
    for attempt in range(150):
        path = tmp_path / f"oryxos-{attempt}.db"
        start = threading.Barrier(3)

        def open_it(path: Path = path, start: threading.Barrier = start) -> None:
            start.wait()
            try:
                database.connect(path).execute("SELECT count(*) FROM sessions").fetchone()
            except Exception as exc:  # collected and asserted below
                errors.append(repr(exc))

        threads = [threading.Thread(target=open_it) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert errors == []


def test_processes_opening_and_writing_at_once(tmp_path: Path) -> None:
    path = tmp_path / "oryxos.db"
    writers = [
        subprocess.Popen([sys.executable, "-c", OPEN_AND_WRITE, str(path), f"w{n}"])
        for n in range(8)
    ]
    assert [writer.wait(timeout=60) for writer in writers] == [0] * 8
    connection = database.connect(path)
    assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert connection.execute("SELECT count(*) FROM memory_entries").fetchone()[0] == 8
