"""The `sqlite` backend: the upstream `memory_entries` table in `oryxos.db`."""

from __future__ import annotations

import sqlite3
from collections.abc import Hashable
from datetime import datetime

from oryxtui import database
from oryxtui.errors import MemoryWriteError, StaleEntry
from oryxtui.memory.format import (
    TIME_FORMAT,
    EntrySequence,
    MemoryEntry,
    Scope,
    clean_entry_line,
    entry_from_line,
    entry_line,
    normalised,
    sanitize_content,
)
from oryxtui.memory.store import Change, Corpus, MemoryRead, Section, Watch
from oryxtui.workspace import Workspace

GLOBAL_AGENT = "__global__"
ARCHIVAL_LOAD_ROWS = 100
_SCOPES = {Scope.CORE: "CORE", Scope.ARCHIVAL: "ARCHIVAL"}


def _time_text(value: object) -> str:
    """created_at as text; upstream's JDBC driver may have stored epoch milliseconds."""
    if isinstance(value, int | float):
        try:
            return datetime.fromtimestamp(value / 1000).strftime(TIME_FORMAT)
        except (OverflowError, OSError, ValueError):
            return ""
    return str(value).replace("T", " ", 1)[:19]


def _row_line(created: object, content: object) -> str:
    """A row as an entry line, cleaned exactly as a save is: whatever another program put in
    the table, it cannot add a header or a bare line to the memory block."""
    return clean_entry_line(_time_text(created), str(content))


def _block_line(content: object) -> str:
    """A row as upstream's memory block shows it, `- ` and the content (no time), cleaned as a
    save is so that no row can add a header or a line to the block."""
    return "- " + sanitize_content(str(content))


def _like_pattern(keyword: str) -> str:
    escaped = keyword.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


class SqliteMemoryStore:
    name = "sqlite"
    watch = Watch.DATABASE
    windowed = False  # upstream injects the newest 100 rows, whatever their length
    ranked = False

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self.database = database.Database(workspace.db_path)

    def _rows(
        self, agent: str | None, scope: Scope, newest: int | None = None
    ) -> list[tuple[object, object]]:
        """(created_at, content) of one scope's rows, oldest first; the `newest` N if given."""
        params: tuple[object, ...] = (agent or GLOBAL_AGENT, _SCOPES[scope])
        selected = (
            "SELECT id, created_at, content FROM memory_entries WHERE agent_name = ? AND scope = ?"
        )
        if newest is not None:
            selected += " ORDER BY id DESC LIMIT ?"
            params = (*params, newest)
        rows = self.database.query(
            f"SELECT created_at, content FROM ({selected}) ORDER BY id", params
        )
        return [(created, content) for created, content in rows]

    def append(self, agent: str | None, time: str, content: str, scope: Scope) -> MemoryEntry:
        connection = self.database.connection()
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

    def search(self, agent: str | None, keyword: str) -> list[MemoryEntry]:
        """Rows whose content holds `keyword`, case-insensitively, oldest first: upstream's
        `LOWER(content) LIKE`, with `%` and `_` taken literally."""
        if not keyword or "\n" in keyword:
            return []
        rows = self.database.query(
            "SELECT created_at, content FROM memory_entries"
            " WHERE agent_name = ? AND scope = 'ARCHIVAL'"
            " AND unicode_lower(content) LIKE ? ESCAPE '\\'"
            " ORDER BY id",
            (agent or GLOBAL_AGENT, _like_pattern(keyword.lower())),
        )
        return [
            entry_from_line(_row_line(created, content), Scope.ARCHIVAL)
            for created, content in rows
        ]

    def read(
        self, agent: str | None, newest_bytes: int | None = None, above_bytes: int | None = None
    ) -> MemoryRead:
        """Every row; the block is upstream's: `- content` lines, the newest 100 archival."""
        core = self._rows(agent, Scope.CORE)
        archival = self._rows(agent, Scope.ARCHIVAL)
        return MemoryRead(
            core=EntrySequence([_row_line(*row) for row in core], Scope.CORE),
            archival=EntrySequence([_row_line(*row) for row in archival], Scope.ARCHIVAL),
            core_block=Section([_block_line(content) for _, content in core]),
            archival_block=Section(
                [_block_line(content) for _, content in archival[-ARCHIVAL_LOAD_ROWS:]]
            ),
        )

    def count_archival(self, agent: str | None) -> int:
        ((count,),) = self.database.query(
            "SELECT count(*) FROM memory_entries WHERE agent_name = ? AND scope = ?",
            (agent or GLOBAL_AGENT, _SCOPES[Scope.ARCHIVAL]),
        )
        return int(count)  # type: ignore[call-overload]

    def corpus_version(self, agent: str | None) -> Hashable:
        """Rows added or removed change the count or the ids: read from the index alone, so
        asking often is cheap. (Neither oryxtui nor upstream rewrites a row in place.)"""
        return tuple(
            self.database.query(
                "SELECT count(*), max(id), total(id) FROM memory_entries"
                " WHERE agent_name = ? AND scope = 'ARCHIVAL'",
                (agent or GLOBAL_AGENT,),
            )[0]
        )

    def corpus(self, agent: str | None) -> Corpus:
        """The archival rows; a row's text is its content column, as upstream hashes it."""
        rows = self._rows(agent, Scope.ARCHIVAL)
        return Corpus(
            [str(content) for _, content in rows],
            EntrySequence([_row_line(*row) for row in rows], Scope.ARCHIVAL),
            [_time_text(created) or None for created, _ in rows],
        )

    def _entries(self, agent: str | None) -> list[tuple[object, object, MemoryEntry]]:
        """(row id, content as stored, entry) of every core and archival row, oldest first:
        what a change addresses, and compares with before it writes."""
        rows = self.database.query(
            "SELECT id, scope, created_at, content FROM memory_entries WHERE agent_name = ?"
            " ORDER BY id",
            (agent or GLOBAL_AGENT,),
        )
        scopes = {value: scope for scope, value in _SCOPES.items()}
        return [
            (row_id, content, entry_from_line(_row_line(created, content), scopes[str(value)]))
            for row_id, value, created, content in rows
            if str(value) in scopes
        ]

    def replace(
        self, agent: str | None, entry_id_: str, change: Change
    ) -> tuple[MemoryEntry, MemoryEntry | None]:
        """The row whose entry has this id, changed in place (its `created_at` kept) only if it
        is still as read (compare-and-set on its content)."""
        for row_id, content, old in self._entries(agent):
            if old.id != entry_id_:
                continue
            new = change(old)
            connection = self.database.connection()
            with self.database.errors(), database.write_transaction(connection):
                if new is None:
                    cursor = connection.execute(
                        "DELETE FROM memory_entries WHERE id = ? AND content = ?",
                        (row_id, content),
                    )
                else:
                    cursor = connection.execute(
                        "UPDATE memory_entries SET scope = ?, content = ? WHERE id = ?"
                        " AND content = ?",
                        (_SCOPES[new.scope], new.content, row_id, content),
                    )
            if cursor.rowcount == 1:
                return old, new
            break  # changed since it was read
        raise StaleEntry(
            f"No entry {entry_id_} here: it was edited, moved or removed since it was shown; "
            "nothing was changed — show the memory again for its new id."
        )

    def remove_duplicates(self, agent: str | None) -> list[MemoryEntry]:
        """Rows whose content repeats an earlier row's of their scope, deleted in one
        transaction (each only if it is still as read)."""
        seen: set[tuple[Scope, str]] = set()
        doomed: list[tuple[object, object, MemoryEntry]] = []
        for row_id, content, entry in self._entries(agent):
            key = (entry.scope, normalised(entry.content))
            if key in seen:
                doomed.append((row_id, content, entry))
            else:
                seen.add(key)
        removed = []
        connection = self.database.connection()
        with self.database.errors(), database.write_transaction(connection):
            for row_id, content, entry in doomed:
                cursor = connection.execute(
                    "DELETE FROM memory_entries WHERE id = ? AND content = ?", (row_id, content)
                )
                if cursor.rowcount == 1:
                    removed.append(entry)
        return removed
