"""Memory in upstream's `memory_entries` table of a shared PostgreSQL database: what the
`sqlite` backend is on one machine, for many hosts at once.

Every change runs in one transaction that first takes the agent's advisory lock (never a file
lock: the writers are on other hosts), reads the memory's signature, makes the change and
records it in `oryxtui_memory_history` — so a change is recorded exactly once or not at all,
and rows another program (upstream) added or removed are recorded first as an `outside`
change. The triggers of the schema tell every listening process which agent changed."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime
from typing import Any

from oryxtui import notices
from oryxtui.errors import DatabaseError, MemoryWriteError, Unreachable
from oryxtui.memory.backends.postgres.history import TABLE, TableHistory
from oryxtui.memory.backends.rows import SCOPES, like_pattern
from oryxtui.memory.backends.table import INSERT, Body, Connection, Result, TableStore
from oryxtui.memory.events import (
    Event,
    IndexProgress,
    KeysChange,
    MemoryChange,
    Reset,
    SessionMoved,
)
from oryxtui.memory.format import TIME_FORMAT, Clock, MemoryEntry
from oryxtui.memory.history import Log, Record
from oryxtui.memory.store import Watch
from oryxtui.postgres import Postgres
from oryxtui.workspace import GLOBAL_AGENT, is_valid_agent_name


def stamped(time: str) -> datetime:
    """An entry's local time text as the instant it names (TIMESTAMPTZ), so that hosts in
    other time zones read the same moment."""
    for form in (TIME_FORMAT, "%Y-%m-%d %H:%M"):  # upstream's lines may leave out seconds
        try:
            return datetime.strptime(time, form).astimezone()
        except ValueError:
            continue
    return datetime.now().astimezone()


class PostgresMemoryStore(TableStore):
    name = "postgres"
    watch = Watch.NOTIFY
    contains = "lower(content) LIKE lower(?) ESCAPE '\\'"

    def __init__(
        self, database: Postgres, clock: Clock = datetime.now, block: str = "markdown"
    ) -> None:
        self.windowed = block == "markdown"
        self.database = database
        self.history = TableHistory(clock)
        self.where = database.shown  # what messages name as the place of the memory

    def _sql(self, sql: str) -> str:
        return sql.replace("?", "%s")

    def _fetch(self, sql: str, params: Sequence[object]) -> list[tuple[Any, ...]]:
        return self.database.query(sql, params)

    def _stamp(self, time: str) -> object:
        return stamped(time)

    def _pattern(self, keyword: str) -> str:
        return like_pattern(keyword)  # lowered by the server, as the content is

    def _write(self, agent: str | None, body: Body[Result]) -> Result:
        """`body` in one transaction holding the agent's advisory lock; the change it returns
        is recorded in the same transaction."""
        name = agent or GLOBAL_AGENT
        try:
            with self.database.transaction() as connection:
                _lock(connection, name)
                known = self.history.log(connection, name).signature
                made_on = self._signature(connection, agent)
                found = self._lines(agent, connection) if made_on != known else None
                result, made = body(connection)
                if made is not None:
                    now = self._signature(connection, agent)
                    self.history.commit(
                        connection,
                        name,
                        made,
                        made_on,
                        now,
                        lambda: (found or self._lines(agent, connection), made_on),
                    )
                return result
        except Unreachable as exc:
            self.history.forget(name)
            raise Unreachable(f"{exc} Nothing was written.") from None
        except DatabaseError as exc:
            self.history.forget(name)
            raise MemoryWriteError(f"{exc} Nothing was written.") from None
        except BaseException:
            self.history.forget(name)
            raise

    # The history.

    def reconcile(self, agent: str | None) -> list[Record]:
        """Record rows another program added or removed since oryxtui last looked."""
        name = agent or GLOBAL_AGENT
        try:
            with self.database.transaction() as connection:
                # A look that finds nothing new costs one signature and one history read.
                now = self._signature(connection, agent)
                log = self.history.log(connection, name)
                if now == log.signature or (now[0] == 0 and not log.records):
                    return []  # nothing new; or nothing ever: a look never starts a history
                _lock(connection, name)
                now = self._signature(connection, agent)
                lines = self._lines(agent, connection)
                return self.history.commit(connection, name, None, None, now, lambda: (lines, now))
        except BaseException:
            self.history.forget(name)
            raise

    def changes(self, agent: str | None) -> Log:
        with self.database.connection() as connection:
            return self.history.log(connection, agent or GLOBAL_AGENT)

    def history_problems(self, agent: str | None) -> str | None:
        count = self.changes(agent).malformed
        if not count:
            return None
        return (
            f"{count} row{'s' if count != 1 else ''} of the history of "
            f"{agent or 'the global memory'} in {self.where} could not be read and "
            f"{'were' if count != 1 else 'was'} skipped."
        )

    def listen(
        self,
        stop: threading.Event,
        heard: Callable[[Event], None],
        lost: Callable[[str], None],
    ) -> None:
        """Until `stop`: `heard(event)` when another process (on any host) changed an agent's
        memory (`MemoryChange`), moved one of its sessions on (`SessionMoved`), indexed its
        entries (`IndexProgress`) or changed a key (`KeysChange`); `heard(Reset())` when
        everything must be read again (listening started, or came back after
        `lost(sentence)`). An announcement is only a hint: it carries no change."""

        def parsed(payload: dict[str, str] | None) -> None:
            if payload is None:
                heard(Reset())
                return
            name, kind = payload.get("agent", ""), payload.get("kind", "")
            if kind == "keys":
                heard(KeysChange())  # of no agent
                return
            agent = None if name == GLOBAL_AGENT else name
            if agent is not None and not is_valid_agent_name(agent):
                return
            match kind:
                case "memory":
                    heard(MemoryChange(agent))
                case "session":
                    heard(SessionMoved(agent))
                case "index":
                    heard(IndexProgress(agent))

        self.database.listen(stop, parsed, lost)

    @contextmanager
    def exclusive(self, agent: str | None, what: str) -> Iterator[None]:
        """One process at a time, on every host, for `what` of this agent (a digest): a
        session advisory lock, released at the end, or by the server if the process dies."""
        key = f"oryxtui {what} {agent or GLOBAL_AGENT}"
        with self.database.connection() as connection:
            connection.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", (key,))
            try:
                yield
            finally:
                connection.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (key,))

    def agents(self) -> list[str]:
        """Every agent with memory, a history or sessions in the database."""
        rows = self.database.query(
            "SELECT agent_name FROM memory_entries UNION SELECT agent_name FROM"
            " oryxtui_memory_history UNION SELECT profile_name FROM sessions"
        )
        # Names another program wrote are untrusted: one that is no agent name (a path, a
        # control character) is never listed, only counted.
        names = {str(name) for (name,) in rows if name and name != GLOBAL_AGENT}
        agents = sorted(name for name in names if is_valid_agent_name(name))
        notices.skipped(len(names) - len(agents), "agent name", self.where)
        return agents


def adopt(
    store: PostgresMemoryStore,
    agent: str | None,
    entries: Sequence[MemoryEntry],
    records: Sequence[Record],
) -> bool:
    """Take over a memory moved from its files with its history as it is: the entries as
    rows (in their order) and every record of the history with its number, so the log,
    origins, review decisions and digests read as before. Only into an agent the database
    holds neither memory nor history of (False: nothing written)."""
    name = agent or GLOBAL_AGENT
    try:
        with store.database.transaction() as connection:
            _lock(connection, name)
            ((held,),) = connection.execute(
                "SELECT (SELECT count(*) FROM memory_entries WHERE agent_name = %s)"
                f" + (SELECT count(*) FROM {TABLE} WHERE agent_name = %s)",
                (name, name),
            ).fetchall()
            if held:
                return False
            now = datetime.now().astimezone()
            with connection.cursor() as cursor:
                cursor.executemany(
                    store._sql(INSERT),
                    [
                        (name, SCOPES[e.scope], e.content, stamped(e.time) if e.time else now)
                        for e in entries
                    ],
                )
            if records:
                # The last record names the memory as it now is: the rows, not the file.
                last = replace(records[-1], signature=store._signature(connection, agent))
                with connection.cursor() as cursor:
                    cursor.executemany(
                        f"INSERT INTO {TABLE} (agent_name, n, record) VALUES (%s, %s, %s)",
                        [
                            (name, r.n, json.dumps(r.stored(), ensure_ascii=False))
                            for r in [*records[:-1], last]
                        ],
                    )
    finally:
        store.history.forget(name)
    return True


def _lock(connection: Connection, agent: str) -> None:
    """The agent's advisory lock, held until the transaction ends (every host, one writer)."""
    connection.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", ("oryxtui memory " + agent,)
    )
