"""The history of a database-backed memory, in `oryxtui_memory_history`: one row per record,
written in the transaction of the change it records — so a change is in the history exactly
once, whichever host made it, or not at all. Rows are read incrementally, like a history
file, and each is untrusted input (`parsed`): a bad one is skipped and counted."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any

from oryxtui.memory.files import MISSING
from oryxtui.memory.format import Clock
from oryxtui.memory.history import DEFAULT_KEEP, Lines, Log, Record, Replay, Signature
from oryxtui.memory.history.log import baseline, numbered, pending_records
from oryxtui.memory.history.records import parsed

TABLE = "oryxtui_memory_history"


class TableHistory:
    """Histories of every agent's memory in one table; every write is the caller's, inside
    the transaction that holds the agent's advisory lock."""

    def __init__(self, clock: Clock = datetime.now, keep: int = DEFAULT_KEEP) -> None:
        self.clock = clock
        self.keep = keep
        self._logs: dict[str, Log] = {}
        self._lock = threading.Lock()

    def log(self, connection: Any, agent: str) -> Log:
        """Everything recorded for `agent`; only rows added since the last call are read. A
        history compacted by another process (its first row is no longer the one this log
        started from) is read again whole."""
        with self._lock:
            log = self._logs.get(agent)
        first = connection.execute(
            f"SELECT min(n) FROM {TABLE} WHERE agent_name = %s", (agent,)
        ).fetchone()[0]
        if log is None or (log.records and first != log.records[0].n):
            log = Log(MISSING, 0, [], Replay())
        rows = connection.execute(
            f"SELECT n, record FROM {TABLE} WHERE agent_name = %s AND n > %s ORDER BY n",
            (agent, log.offset),
        ).fetchall()
        for n, raw in rows:
            record = parsed(str(raw), log.last)
            if record is None or record.n != n:
                log.malformed += 1
            else:
                log.records.append(record)
                log.replay.apply(record)
            log.offset = max(log.offset, int(n))
        with self._lock:
            self._logs[agent] = log
        return log

    def commit(
        self,
        connection: Any,
        agent: str,
        made: Record | None,
        made_on: Signature | None,
        now: Signature,
        found: Callable[[], tuple[Lines | None, Signature]],
    ) -> list[Record]:
        """As the file history's `commit`, with the rows inserted on `connection` (inside the
        change's transaction; a rollback takes them back, so the cached log is dropped then)."""
        log = self.log(connection, agent)
        pending = pending_records(log, made, made_on, now, found)
        if not pending:
            return []
        records = numbered(log.last, pending, self.clock)
        with connection.cursor() as cursor:
            cursor.executemany(
                f"INSERT INTO {TABLE} (agent_name, n, record) VALUES (%s, %s, %s)",
                [(agent, r.n, json.dumps(r.stored(), ensure_ascii=False)) for r in records],
            )
        with self._lock:
            # Taken as written, without reading them back (the caller forgets the log if the
            # transaction rolls back).
            for record in records:
                log.records.append(record)
                log.replay.apply(record)
            log.offset = records[-1].n
        if len(log.records) > self.keep + self.keep // 2:
            self._compact(connection, agent)
        return records

    def _compact(self, connection: Any, agent: str) -> None:
        log = self.log(connection, agent)
        folded = log.records[: len(log.records) - self.keep]
        if not folded:
            return
        first = baseline(folded)
        connection.execute(
            f"DELETE FROM {TABLE} WHERE agent_name = %s AND n <= %s", (agent, first.n)
        )
        connection.execute(
            f"INSERT INTO {TABLE} (agent_name, n, record) VALUES (%s, %s, %s)",
            (agent, first.n, json.dumps(first.stored(), ensure_ascii=False)),
        )
        with self._lock:
            self._logs.pop(agent, None)

    def forget(self, agent: str) -> None:
        """Drop the cached log (a transaction that wrote to it rolled back)."""
        with self._lock:
            self._logs.pop(agent, None)
