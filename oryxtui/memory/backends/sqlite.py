"""The `sqlite` backend: the upstream `memory_entries` table in `oryxos.db`, its history in a
file beside where the agent's MEMORY.md would be, written under that file's lock."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from oryxtui import database
from oryxtui.errors import MemoryWriteError
from oryxtui.memory.backends.table import Body, Result, TableStore
from oryxtui.memory.files import file_lock
from oryxtui.memory.format import Clock
from oryxtui.memory.history import History, Log, Record, unrecorded
from oryxtui.memory.store import Watch
from oryxtui.notices import notice
from oryxtui.workspace import Workspace

log = logging.getLogger(__name__)
HISTORY_FILE = "memory_entries.journal"  # beside where the agent's MEMORY.md would be


class SqliteMemoryStore(TableStore):
    name = "sqlite"
    watch = Watch.DATABASE

    def __init__(
        self,
        workspace: Workspace,
        lock_timeout: float = 15.0,
        clock: Clock = datetime.now,
        block: str = "rows",
    ) -> None:
        self.windowed = block == "markdown"
        self.workspace = workspace
        self.database = database.Database(workspace.db_path)
        self.lock_timeout = lock_timeout
        self.history = History(workspace, clock)

    def _fetch(self, sql: str, params: Sequence[object]) -> list[tuple[Any, ...]]:
        return self.database.query(sql, tuple(params))

    def _write(self, agent: str | None, body: Body[Result]) -> Result:
        """`body` in one write transaction under the history's lock; the change it returns is
        recorded once the transaction has committed."""
        path = self._history_file(agent)
        with file_lock(self.workspace, path, self.lock_timeout):
            try:
                known = self.history.log(path).signature
                problem: Exception | None = None
            except Exception as exc:  # the change is made all the same; recorded later
                known, problem = None, exc
            connection = self.database.connection()
            try:
                with database.write_transaction(connection):
                    made_on = self._signature(connection, agent)
                    # Changed behind oryxtui's back: the history records it first, as found.
                    found = self._lines(agent) if made_on != known else None
                    result, made = body(connection)
                    now = self._signature(connection, agent)
            except sqlite3.Error as exc:
                raise MemoryWriteError(
                    f"Could not save to {self.workspace.db_path} ({exc}); nothing was written."
                ) from None
            if made is None:
                return result
            try:
                if problem is not None:
                    raise problem
                self.history.commit(
                    path, made, made_on, now, lambda: (found or self._lines(agent), made_on)
                )
            except Exception as exc:  # whatever it is, the change is in the database
                log.debug("recording a change to %s failed", path, exc_info=True)
                notice(unrecorded(self.workspace.db_path, exc))
            return result

    def _history_file(self, agent: str | None) -> Path:
        path = self.workspace.memory_file(agent).with_name(HISTORY_FILE)
        self.workspace.check_read_target(path)
        return path

    def reconcile(self, agent: str | None) -> list[Record]:
        """Record rows another program added or removed since oryxtui last looked."""
        path = self._history_file(agent)
        if not path.parent.is_dir():
            return []  # a look never makes a folder
        with file_lock(self.workspace, path, self.lock_timeout, create=False):
            known = self.history.log(path).signature
            connection = self.database.connection()
            with self.database.errors():
                connection.execute("BEGIN")  # the rows and their signature, read as one
                try:
                    now = self._signature(connection, agent)
                    # Rows are read only when someone changed them (the dashboard looks often).
                    lines = self._lines(agent) if now != known else {}
                finally:
                    connection.execute("COMMIT")
            return self.history.commit(path, None, None, now, lambda: (lines, now))

    def changes(self, agent: str | None) -> Log:
        return self.history.log(self._history_file(agent))

    def history_problems(self, agent: str | None) -> str | None:
        return self.history.problems(self._history_file(agent))
