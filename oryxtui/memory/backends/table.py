"""What the two table backends share: memory in upstream's `memory_entries`, read, searched
and changed row by row. Where the rows live (oryxos.db or a shared PostgreSQL), how a write is
locked and where its history goes is each backend's own (`_write`, `_query`, `_stamp`)."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from datetime import datetime
from typing import Any, TypeVar

from oryxtui.memory.backends.rows import (
    ARCHIVAL_LOAD_ROWS,
    SCOPE_OF,
    SCOPES,
    block_line,
    like_pattern,
    row_line,
    time_text,
)
from oryxtui.memory.format import (
    TIME_FORMAT,
    EntrySequence,
    MemoryEntry,
    Scope,
    entry_from_line,
    entry_line,
    normalised,
)
from oryxtui.memory.history import (
    CLI,
    Actor,
    Key,
    Lines,
    Record,
    Signature,
    change,
    replacement,
)
from oryxtui.memory.snapshot import Corpus, MemoryRead, Section
from oryxtui.memory.store import Change, no_entry
from oryxtui.workspace import GLOBAL_AGENT

Result = TypeVar("Result")
Connection = Any  # sqlite3.Connection or psycopg.Connection: both `execute(sql, params)`
Body = Callable[[Connection], tuple[Result, Record | None]]
INSERT = "INSERT INTO memory_entries (agent_name, scope, content, created_at) VALUES (?, ?, ?, ?)"


class TableStore:
    """Rows of `memory_entries`, one agent's by `agent_name`. SQL is written with `?`
    placeholders; a backend whose driver wants others rewrites them in `_query`."""

    # The memory block: upstream's rows (`- content`, the newest 100 archival rows, whatever
    # their length) or, windowed, the MEMORY.md block (`- [time] content`, the newest whole
    # entries within `archival_max_chars`) — what the agents of a workspace moved here saw.
    windowed = False
    ranked = False
    # How a row's content is matched case-insensitively (the pattern is the second `?`).
    contains = "unicode_lower(content) LIKE ? ESCAPE '\\'"

    def _sql(self, sql: str) -> str:
        """`sql` with the driver's placeholders."""
        return sql

    def _fetch(self, sql: str, params: Sequence[object]) -> list[tuple[Any, ...]]:
        """Rows of a query on a connection of the backend's own (driver placeholders)."""
        raise NotImplementedError

    def _query(
        self, sql: str, params: Sequence[object] = (), connection: Connection | None = None
    ) -> list[tuple[Any, ...]]:
        """The rows `sql` selects, on `connection` (inside a write) or the backend's own."""
        if connection is None:
            return self._fetch(self._sql(sql), params)
        return list(connection.execute(self._sql(sql), params).fetchall())

    def _run(self, connection: Connection, sql: str, params: Sequence[object] = ()) -> None:
        """A statement that selects nothing, inside a write."""
        connection.execute(self._sql(sql), params)

    def _write(self, agent: str | None, body: Body[Result]) -> Result:
        raise NotImplementedError

    def _signature(self, connection: Connection, agent: str | None) -> Signature:
        row = connection.execute(self._sql(SIGNATURE), (agent or GLOBAL_AGENT,)).fetchone()
        return tuple(int(value) for value in row)

    def _stamp(self, time: str) -> object:
        """An entry's time as the created_at column takes it."""
        return time

    def _pattern(self, keyword: str) -> str:
        return like_pattern(keyword.lower())

    # Reading.

    def _rows(self, agent: str | None, scope: Scope) -> list[tuple[object, object]]:
        """(created_at, content) of one scope's rows, oldest first."""
        rows = self._query(
            "SELECT created_at, content FROM memory_entries WHERE agent_name = ? AND scope = ?"
            " ORDER BY id",
            (agent or GLOBAL_AGENT, SCOPES[scope]),
        )
        return [(created, content) for created, content in rows]

    def _entries(
        self, agent: str | None, connection: Connection | None = None
    ) -> list[tuple[int, MemoryEntry]]:
        """(row id, entry) of every core and archival row, oldest first."""
        rows = self._query(
            "SELECT id, scope, created_at, content FROM memory_entries WHERE agent_name = ?"
            " ORDER BY id",
            (agent or GLOBAL_AGENT,),
            connection,
        )
        return [
            (int(row_id), entry_from_line(row_line(created, content), SCOPE_OF[str(value)]))
            for row_id, value, created, content in rows
            if str(value) in SCOPE_OF
        ]

    def _lines(self, agent: str | None, connection: Connection | None = None) -> Lines:
        lines: Lines = {Scope.CORE: [], Scope.ARCHIVAL: []}
        for _, entry in self._entries(agent, connection):
            lines[entry.scope].append(entry.line)
        return lines

    def read(
        self, agent: str | None, newest_bytes: int | None = None, above_bytes: int | None = None
    ) -> MemoryRead:
        """Every row, and the block its rendering makes of them (see `windowed`)."""
        core = self._rows(agent, Scope.CORE)
        archival = self._rows(agent, Scope.ARCHIVAL)
        return self.memory_read(
            {
                Scope.CORE: [row_line(*row) for row in core],
                Scope.ARCHIVAL: [row_line(*row) for row in archival],
            }
        )

    def memory_read(self, lines: Lines) -> MemoryRead:
        """A read of a memory that holds `lines` (now, or earlier, from the history)."""
        core = EntrySequence(lines[Scope.CORE], Scope.CORE)
        archival = EntrySequence(lines[Scope.ARCHIVAL], Scope.ARCHIVAL)
        if self.windowed:  # the MEMORY.md block: the lines as a file holds them
            core_block = Section([e.line for e in core])
            archival_block = Section([e.line for e in archival])
        else:
            core_block = Section([block_line(e.content) for e in core])
            archival_block = Section(
                [block_line(e.content) for e in archival[-ARCHIVAL_LOAD_ROWS:]]
            )
        return MemoryRead(core, archival, core_block, archival_block)

    def search(self, agent: str | None, keyword: str) -> list[MemoryEntry]:
        """Rows whose content holds `keyword`, case-insensitively, oldest first: upstream's
        `LOWER(content) LIKE`, with `%` and `_` taken literally."""
        if not keyword or "\n" in keyword:
            return []
        rows = self._query(
            "SELECT created_at, content FROM memory_entries"
            f" WHERE agent_name = ? AND scope = 'ARCHIVAL' AND {self.contains} ORDER BY id",
            (agent or GLOBAL_AGENT, self._pattern(keyword)),
        )
        return [
            entry_from_line(row_line(created, content), Scope.ARCHIVAL) for created, content in rows
        ]

    def count_archival(self, agent: str | None) -> int:
        ((count,),) = self._query(
            "SELECT count(*) FROM memory_entries WHERE agent_name = ? AND scope = 'ARCHIVAL'",
            (agent or GLOBAL_AGENT,),
        )
        return int(count)

    def corpus_version(self, agent: str | None) -> Hashable:
        """Rows added or removed change the count or the ids: read from the index alone, so
        asking often is cheap. (Neither oryxtui nor upstream rewrites a row in place.)"""
        return tuple(
            self._query(
                "SELECT count(*), max(id), sum(id) FROM memory_entries"
                " WHERE agent_name = ? AND scope = 'ARCHIVAL'",
                (agent or GLOBAL_AGENT,),
            )[0]
        )

    def corpus(self, agent: str | None) -> Corpus:
        """The archival rows; a row's text is its content column, as upstream hashes it."""
        rows = self._rows(agent, Scope.ARCHIVAL)
        return Corpus(
            [str(content) for _, content in rows],
            EntrySequence([row_line(*row) for row in rows], Scope.ARCHIVAL),
            [time_text(created) or None for created, _ in rows],
        )

    # Writing: each change is a `body` run by the backend's `_write`.

    def _insert(self, connection: Connection, rows: Sequence[tuple[object, ...]]) -> None:
        if rows:
            connection.cursor().executemany(self._sql(INSERT), rows)

    def append(
        self,
        agent: str | None,
        time: str,
        content: str,
        scope: Scope,
        by: Actor = CLI,
        op: str = "save",
        may_update: Sequence[Key] = (),
    ) -> MemoryEntry:
        entry = entry_from_line(entry_line(time, content), scope)

        def body(connection: Connection) -> tuple[MemoryEntry, Record]:
            name = agent or GLOBAL_AGENT
            self._insert(connection, [(name, SCOPES[scope], content, self._stamp(time))])
            made = change(op, by, after=[entry])
            return entry, dataclasses.replace(made, may_update=tuple(may_update))

        return self._write(agent, body)

    def bring_back(
        self,
        agent: str | None,
        entries: Sequence[MemoryEntry],
        by: Actor = CLI,
        op: str = "restore",
    ) -> list[MemoryEntry]:
        """Insert `entries` again (with their times) unless a row holds them; returns those
        inserted. An import counts copies; an entry without a time is stamped as it comes in,
        so it is known by its text afterwards."""

        def body(connection: Connection) -> tuple[list[MemoryEntry], Record | None]:
            stored = [entry for _, entry in self._entries(agent, connection)]
            there: Counter[object] = Counter(entry.line for entry in stored)
            there.update((entry.scope, entry.content) for entry in stored)
            present = {(entry.scope, entry.line) for entry in stored}
            missing: list[MemoryEntry] = []
            rows = []
            for entry in entries:
                time = entry.time or datetime.now().strftime(TIME_FORMAT)
                new = entry_from_line(entry_line(time, entry.content), entry.scope)
                if op == "import":
                    key: object = new.line if entry.time else (entry.scope, entry.content)
                    if there[key] > 0:
                        there[key] -= 1
                        continue
                elif (entry.scope, entry.line) in present:
                    continue
                present.add((entry.scope, entry.line))
                name = agent or GLOBAL_AGENT
                rows.append((name, SCOPES[entry.scope], entry.content, self._stamp(time)))
                missing.append(new)
            self._insert(connection, rows)
            return missing, change(op, by, after=missing) if missing else None

        return self._write(agent, body)

    def replace(
        self,
        agent: str | None,
        entry_id_: str,
        change_: Change,
        op: str,
        by: Actor = CLI,
        successor: Key | None = None,
    ) -> tuple[MemoryEntry, MemoryEntry | None]:
        """The row whose entry has this id, changed in place (its `created_at` kept); a move
        is the row inserted again at the end of its new scope, as a file's is, and a
        replacement a new row with its own time."""

        def body(
            connection: Connection,
        ) -> tuple[tuple[MemoryEntry, MemoryEntry | None], Record | None]:
            for row_id, old in self._entries(agent, connection):
                if old.id != entry_id_:
                    continue
                new = change_(old)
                if new is not None and op == "replace":
                    self._run(
                        connection,
                        "INSERT INTO memory_entries (agent_name, scope, content, created_at)"
                        " SELECT agent_name, ?, ?, ? FROM memory_entries WHERE id = ?",
                        (SCOPES[new.scope], new.content, self._stamp(new.time or ""), row_id),
                    )
                    self._run(connection, "DELETE FROM memory_entries WHERE id = ?", (row_id,))
                elif new is None or new.scope is not old.scope:
                    if new is not None:
                        self._run(
                            connection,
                            "INSERT INTO memory_entries (agent_name, scope, content, created_at)"
                            " SELECT agent_name, ?, ?, created_at FROM memory_entries"
                            " WHERE id = ?",
                            (SCOPES[new.scope], new.content, row_id),
                        )
                    self._run(connection, "DELETE FROM memory_entries WHERE id = ?", (row_id,))
                elif new != old:
                    self._run(
                        connection,
                        "UPDATE memory_entries SET content = ? WHERE id = ?",
                        (new.content, row_id),
                    )
                made = replacement(op, by, old, new) if new != old else None
                if made is not None and successor is not None:
                    made = dataclasses.replace(made, successor=successor)
                return (old, new), made
            raise no_entry(entry_id_)

        return self._write(agent, body)

    def note(self, agent: str | None, record: Record) -> None:
        """A mark recorded in the history's order, in a write that changes no row."""

        def body(connection: Connection) -> tuple[None, Record]:
            return None, record

        self._write(agent, body)

    def remove_duplicates(self, agent: str | None, by: Actor = CLI) -> list[MemoryEntry]:
        """Rows whose content repeats an earlier row's of their scope, deleted in one
        transaction."""

        def body(connection: Connection) -> tuple[list[MemoryEntry], Record | None]:
            seen: set[tuple[Scope, str]] = set()
            removed: list[MemoryEntry] = []
            for row_id, entry in self._entries(agent, connection):
                key = (entry.scope, normalised(entry.content))
                if key in seen:
                    self._run(connection, "DELETE FROM memory_entries WHERE id = ?", (row_id,))
                    removed.append(entry)
                else:
                    seen.add(key)
            return removed, change("dedupe", by, removed) if removed else None

        return self._write(agent, body)


# The memory's signature: it changes when rows are added, removed or rewritten to another
# length (what oryxtui and upstream do; a row rewritten in place to the same length is not seen).
SIGNATURE = (
    "SELECT count(*), coalesce(max(id), 0), coalesce(sum(id), 0),"
    " coalesce(sum(length(content)), 0), coalesce(sum(length(scope)), 0)"
    " FROM memory_entries WHERE agent_name = ?"
)
