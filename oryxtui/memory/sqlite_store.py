"""The `sqlite` backend: the upstream `memory_entries` table in `oryxos.db`."""

from __future__ import annotations

import sqlite3
import threading
from datetime import datetime

from oryxtui import database
from oryxtui.errors import MemoryWriteError
from oryxtui.memory.format import (
    TIME_FORMAT,
    EntrySequence,
    MemoryEntry,
    Scope,
    entry_from_line,
    entry_line,
    injected_window,
    render_context,
)
from oryxtui.memory.store import MemorySnapshot
from oryxtui.workspace import Workspace

GLOBAL_AGENT = "__global__"
ARCHIVAL_LOAD_ROWS = 100
_SCOPES = {Scope.CORE: "CORE", Scope.ARCHIVAL: "ARCHIVAL"}


def _time_text(value: object) -> str:
    """created_at as text; upstream's JDBC driver may have stored epoch milliseconds."""
    if isinstance(value, int | float):
        return datetime.fromtimestamp(value / 1000).strftime(TIME_FORMAT)
    return str(value)[:19]


def _like_pattern(keyword: str) -> str:
    escaped = keyword.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


class SqliteMemoryStore:
    name = "sqlite"

    def __init__(self, workspace: Workspace, archival_max_chars: int = 4000) -> None:
        self.workspace = workspace
        self.archival_max_chars = archival_max_chars
        self._local = threading.local()

    def _connection(self) -> sqlite3.Connection:
        connection = getattr(self._local, "connection", None)
        if connection is None:
            try:
                connection = database.connect(self.workspace.db_path)
            except sqlite3.Error as exc:
                raise MemoryWriteError(
                    f"Cannot open {self.workspace.db_path} ({exc}); check the file and its folder."
                ) from None
            self._local.connection = connection
        return connection

    def _lines(self, agent: str | None, scope: Scope, newest: int | None = None) -> list[str]:
        """Entry lines of one scope, oldest first; only the `newest` N rows when given."""
        params: tuple[object, ...] = (agent or GLOBAL_AGENT, _SCOPES[scope])
        selected = (
            "SELECT id, created_at, content FROM memory_entries WHERE agent_name = ? AND scope = ?"
        )
        if newest is not None:
            selected += " ORDER BY id DESC LIMIT ?"
            params = (*params, newest)
        rows = (
            self._connection()
            .execute(f"SELECT created_at, content FROM ({selected}) ORDER BY id", params)
            .fetchall()
        )
        return [entry_line(_time_text(created), content) for created, content in rows]

    def append(self, agent: str | None, time: str, content: str, scope: Scope) -> MemoryEntry:
        connection = self._connection()
        try:
            with database.write_transaction(connection):
                connection.execute(
                    "INSERT INTO memory_entries (agent_name, scope, content, created_at)"
                    " VALUES (?, ?, ?, ?)",
                    (agent or GLOBAL_AGENT, _SCOPES[scope], content, time),
                )
        except sqlite3.Error as exc:
            raise MemoryWriteError(
                f"Could not save to {self.workspace.db_path} ({exc}); nothing was written."
            ) from None
        return entry_from_line(entry_line(time, content), scope)

    def load(self, agent: str | None) -> str:
        core = self._lines(agent, Scope.CORE)
        recent = self._lines(agent, Scope.ARCHIVAL, newest=ARCHIVAL_LOAD_ROWS)
        return render_context(core, injected_window(recent, self.archival_max_chars))

    def recall(self, agent: str | None, keyword: str) -> list[MemoryEntry]:
        if not keyword or "\n" in keyword:
            return []
        rows = (
            self._connection()
            .execute(
                "SELECT created_at, content FROM memory_entries"
                " WHERE agent_name = ? AND scope = 'ARCHIVAL'"
                " AND unicode_lower('- [' || created_at || '] ' || content) LIKE ? ESCAPE '\\'"
                " ORDER BY id",
                (agent or GLOBAL_AGENT, _like_pattern(keyword.lower())),
            )
            .fetchall()
        )
        return [
            entry_from_line(entry_line(_time_text(created), content), Scope.ARCHIVAL)
            for created, content in rows
        ]

    def entries(self, agent: str | None, newest_bytes: int | None = None) -> MemorySnapshot:
        core = self._lines(agent, Scope.CORE)
        archival = self._lines(agent, Scope.ARCHIVAL)
        candidates = len(archival) - min(len(archival), ARCHIVAL_LOAD_ROWS)
        window = injected_window(archival[candidates:], self.archival_max_chars)
        return MemorySnapshot(
            agent=agent,
            backend=self.name,
            core=EntrySequence(core, Scope.CORE),
            archival=EntrySequence(archival, Scope.ARCHIVAL),
            window=type(window)(candidates + window.start, window.lines),
            source=self.workspace.db_path,
        )

    def count_archival(self, agent: str | None) -> int:
        (count,) = (
            self._connection()
            .execute(
                "SELECT count(*) FROM memory_entries WHERE agent_name = ? AND scope = ?",
                (agent or GLOBAL_AGENT, _SCOPES[Scope.ARCHIVAL]),
            )
            .fetchone()
        )
        return int(count)

    def lost(self, agent: str | None) -> list[MemoryEntry]:
        return []  # no outside editor rewrites this store behind oryxtui's back

    def restore(self, agent: str | None) -> list[MemoryEntry]:
        return []
