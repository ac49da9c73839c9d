"""The `sqlite` backend: the upstream `memory_entries` table in `oryxos.db`."""

from __future__ import annotations

import logging
import sqlite3
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from oryxtui import database
from oryxtui.errors import MemoryWriteError, StaleEntry
from oryxtui.memory.files import file_lock
from oryxtui.memory.format import (
    TIME_FORMAT,
    Clock,
    EntrySequence,
    MemoryEntry,
    Scope,
    clean_entry_line,
    entry_from_line,
    entry_line,
    normalised,
    sanitize_content,
)
from oryxtui.memory.history import (
    CLI,
    Actor,
    History,
    Lines,
    Log,
    Record,
    Signature,
    change,
    replacement,
    unrecorded,
)
from oryxtui.memory.snapshot import Corpus, MemoryRead, Section
from oryxtui.memory.store import Change, Watch
from oryxtui.notices import notice
from oryxtui.workspace import GLOBAL_AGENT, Workspace

log = logging.getLogger(__name__)
Result = TypeVar("Result")
ARCHIVAL_LOAD_ROWS = 100
HISTORY_FILE = "memory_entries.journal"  # beside where the agent's MEMORY.md would be
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

    def __init__(
        self,
        workspace: Workspace,
        lock_timeout: float = 15.0,
        clock: Clock = datetime.now,
    ) -> None:
        self.workspace = workspace
        self.database = database.Database(workspace.db_path)
        self.lock_timeout = lock_timeout
        self.history = History(workspace, clock)

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

    def append(
        self,
        agent: str | None,
        time: str,
        content: str,
        scope: Scope,
        by: Actor = CLI,
        op: str = "save",
    ) -> MemoryEntry:
        entry = entry_from_line(entry_line(time, content), scope)

        def body(connection: sqlite3.Connection) -> tuple[MemoryEntry, Record]:
            self._insert(connection, agent, time, content, scope)
            return entry, change(op, by, after=[entry])

        return self._write(agent, body)

    def _insert(
        self,
        connection: sqlite3.Connection,
        agent: str | None,
        time: str,
        content: str,
        scope: Scope,
    ) -> None:
        connection.execute(
            "INSERT INTO memory_entries (agent_name, scope, content, created_at)"
            " VALUES (?, ?, ?, ?)",
            (agent or GLOBAL_AGENT, _SCOPES[scope], content, time),
        )

    def _write(
        self,
        agent: str | None,
        body: Callable[[sqlite3.Connection], tuple[Result, Record | None]],
    ) -> Result:
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

    def _signature(self, connection: sqlite3.Connection, agent: str | None) -> Signature:
        """Changes when rows are added, removed or rewritten to another length (what
        oryxtui and upstream do; a row rewritten in place to the same length is not seen)."""
        row = connection.execute(
            "SELECT count(*), coalesce(max(id), 0), total(id), total(length(content)),"
            " total(length(scope)) FROM memory_entries WHERE agent_name = ?",
            (agent or GLOBAL_AGENT,),
        ).fetchone()
        return tuple(int(value) for value in row)

    def _lines(self, agent: str | None) -> Lines:
        lines: Lines = {Scope.CORE: [], Scope.ARCHIVAL: []}
        for _, entry in self._entries(agent):
            lines[entry.scope].append(entry.line)
        return lines

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

    def memory_read(self, lines: Lines) -> MemoryRead:
        """A read of a memory that held `lines` (an earlier one, from the history)."""
        core = EntrySequence(lines[Scope.CORE], Scope.CORE)
        archival = EntrySequence(lines[Scope.ARCHIVAL], Scope.ARCHIVAL)
        return MemoryRead(
            core=core,
            archival=archival,
            core_block=Section([_block_line(e.content) for e in core]),
            archival_block=Section(
                [_block_line(e.content) for e in archival[-ARCHIVAL_LOAD_ROWS:]]
            ),
        )

    def history_problems(self, agent: str | None) -> str | None:
        return self.history.problems(self._history_file(agent))

    def bring_back(
        self,
        agent: str | None,
        entries: Sequence[MemoryEntry],
        by: Actor = CLI,
        op: str = "restore",
    ) -> list[MemoryEntry]:
        """Insert `entries` again (with their times) unless a row holds them; returns those
        inserted."""

        def body(connection: sqlite3.Connection) -> tuple[list[MemoryEntry], Record | None]:
            stored = [entry for _, entry in self._entries(agent)]
            there = Counter(entry.line for entry in stored)  # an import counts copies
            present = {(entry.scope, entry.line) for entry in stored}
            missing: list[MemoryEntry] = []
            rows = []
            for entry in entries:
                time = entry.time or datetime.now().strftime(TIME_FORMAT)
                new = entry_from_line(entry_line(time, entry.content), entry.scope)
                if op == "import":
                    if there[new.line] > 0:
                        there[new.line] -= 1
                        continue
                elif (entry.scope, entry.line) in present:
                    continue
                present.add((entry.scope, entry.line))
                rows.append((agent or GLOBAL_AGENT, _SCOPES[entry.scope], entry.content, time))
                missing.append(new)
            connection.executemany(
                "INSERT INTO memory_entries (agent_name, scope, content, created_at)"
                " VALUES (?, ?, ?, ?)",
                rows,
            )
            return missing, change(op, by, after=missing) if missing else None

        return self._write(agent, body)

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

    def _entries(self, agent: str | None) -> list[tuple[object, MemoryEntry]]:
        """(row id, entry) of every core and archival row, oldest first."""
        rows = self.database.query(
            "SELECT id, scope, created_at, content FROM memory_entries WHERE agent_name = ?"
            " ORDER BY id",
            (agent or GLOBAL_AGENT,),
        )
        scopes = {value: scope for scope, value in _SCOPES.items()}
        return [
            (row_id, entry_from_line(_row_line(created, content), scopes[str(value)]))
            for row_id, value, created, content in rows
            if str(value) in scopes
        ]

    def replace(
        self, agent: str | None, entry_id_: str, change_: Change, op: str, by: Actor = CLI
    ) -> tuple[MemoryEntry, MemoryEntry | None]:
        """The row whose entry has this id, changed in place (its `created_at` kept); a move
        is the row inserted again at the end of its new scope, as a file's is."""

        def body(
            connection: sqlite3.Connection,
        ) -> tuple[tuple[MemoryEntry, MemoryEntry | None], Record | None]:
            for row_id, old in self._entries(agent):
                if old.id != entry_id_:
                    continue
                new = change_(old)
                if new is None or new.scope is not old.scope:
                    if new is not None:
                        connection.execute(
                            "INSERT INTO memory_entries (agent_name, scope, content, created_at)"
                            " SELECT agent_name, ?, ?, created_at FROM memory_entries"
                            " WHERE id = ?",
                            (_SCOPES[new.scope], new.content, row_id),
                        )
                    connection.execute("DELETE FROM memory_entries WHERE id = ?", (row_id,))
                elif new != old:
                    connection.execute(
                        "UPDATE memory_entries SET content = ? WHERE id = ?",
                        (new.content, row_id),
                    )
                made = replacement(op, by, old, new) if new != old else None
                return (old, new), made
            raise StaleEntry(
                f"No entry {entry_id_} here: it was edited, moved or removed since it was "
                "shown; nothing was changed — show the memory again for its new id."
            )

        return self._write(agent, body)

    def remove_duplicates(self, agent: str | None, by: Actor = CLI) -> list[MemoryEntry]:
        """Rows whose content repeats an earlier row's of their scope, deleted in one
        transaction."""

        def body(connection: sqlite3.Connection) -> tuple[list[MemoryEntry], Record | None]:
            seen: set[tuple[Scope, str]] = set()
            removed: list[MemoryEntry] = []
            for row_id, entry in self._entries(agent):
                key = (entry.scope, normalised(entry.content))
                if key in seen:
                    connection.execute("DELETE FROM memory_entries WHERE id = ?", (row_id,))
                    removed.append(entry)
                else:
                    seen.add(key)
            return removed, change("dedupe", by, removed) if removed else None

        return self._write(agent, body)
