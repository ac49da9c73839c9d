"""What changed, as a numbered stream: the log every `/api/v1/events` connection reads, and
the feeds that fill it (the workspace watcher; the shared database's announcements).

Ids are `<stream>.<n>`: `stream` is new each time the server starts, `n` counts up. A client
that reconnects with the last id it saw (`Last-Event-ID`, or `?since=`) gets every event after
it — nothing missed — while the server still holds them (the newest `KEEP`). An id from an
earlier run of the server, or older than what is held, is answered with a `reset` event:
reload everything, then follow on. So a client never silently misses a change."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import threading
from collections import deque
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from oryxtui.config import Settings
from oryxtui.errors import OryxError
from oryxtui.memory import MemoryService
from oryxtui.memory.store import Listened, Recorded
from oryxtui.workspace import Workspace

KEEP = 10_000
log = logging.getLogger("oryxtui.api")


@dataclass(frozen=True)
class Event:
    n: int
    data: dict[str, Any]  # kind, agent, … ; what the client receives as JSON

    @property
    def agent(self) -> str | None:
        return self.data.get("agent")


class EventLog:
    """The newest KEEP events of this server, numbered; thread-safe to publish into, and
    awaited by each stream on its own event loop."""

    def __init__(self, keep: int = KEEP) -> None:
        self.stream = secrets.token_hex(4)
        self._events: deque[Event] = deque(maxlen=keep)
        self._last = 0
        self._lock = threading.Lock()
        self._waiters: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()

    @property
    def last(self) -> int:
        return self._last

    def id_of(self, n: int) -> str:
        return f"{self.stream}.{n}"

    def publish(self, kind: str, **fields: Any) -> None:
        data = {"kind": kind, **fields, "time": datetime.now().isoformat(timespec="milliseconds")}
        with self._lock:
            self._last += 1
            self._events.append(Event(self._last, data))
            waiters = list(self._waiters)
        for loop, ready in waiters:
            with contextlib.suppress(RuntimeError):  # that stream's loop has closed
                loop.call_soon_threadsafe(ready.set)

    def position(self, last_seen: str | None) -> int | None:
        """Where a client resumes: the n after which it has seen everything, or None when it
        must reload (an id of another run, malformed, or older than what is held)."""
        if not last_seen:
            return None
        stream, _, number = last_seen.strip().partition(".")
        if stream != self.stream or not number.isdigit():
            return None
        n = int(number)
        with self._lock:
            oldest = self._events[0].n if self._events else self._last + 1
            if n > self._last or n < oldest - 1:
                return None
        return n

    def after(self, n: int) -> list[Event] | None:
        """The events after n, or None when some of them are no longer held."""
        with self._lock:
            if n >= self._last:
                return []
            if not self._events or self._events[0].n > n + 1:
                return None
            start = n + 1 - self._events[0].n
            return [self._events[i] for i in range(start, len(self._events))]

    async def wait(self, n: int, timeout: float) -> bool:
        """True when there is an event after n (at once or within `timeout` seconds)."""
        ready = asyncio.Event()
        waiter = (asyncio.get_running_loop(), ready)
        with self._lock:
            if self._last > n:
                return True
            self._waiters.add(waiter)
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(ready.wait(), timeout)
            return self._last > n
        finally:
            with self._lock:
                self._waiters.discard(waiter)


class EventFeed:
    """Turns what the workspace watcher sees, and what the shared database announces, into
    events: one per history record (save, edit, move, delete, digest, outside change…), a
    plain `memory` event where the backend keeps no history, `agents`, `session`, `index`."""

    def __init__(
        self, workspace: Workspace, settings: Settings, memory: MemoryService, events: EventLog
    ) -> None:
        self.workspace = workspace
        self.settings = settings
        self.memory = memory
        self.events = events
        self._seen: dict[str | None, int] = {}  # the newest history record told, per agent
        self._sessions_seen: object = None  # the newest last_active_at told (oryxos.db)
        self._lock = threading.Lock()
        self._database: Any = None  # where sessions are: opened on first use

    # What the server starts with -----------------------------------------------------------

    def prime(self) -> None:
        """Note where every agent's history and the sessions stand, so only what happens from
        now on is told."""
        for agent in self.workspace.memories():
            with contextlib.suppress(OryxError):
                self._seen[agent] = self._newest(agent)
        with contextlib.suppress(OryxError):
            self._sessions_seen = self._latest_session_time()

    def _newest(self, agent: str | None) -> int:
        store = self.memory.store
        if not isinstance(store, Recorded):
            return 0
        records = store.changes(agent).records
        return records[-1].n if records else 0

    # Feeding --------------------------------------------------------------------------------

    def memory_changed(self, agent: str | None) -> None:
        """The agent's memory changed: one event per new history record (outside changes are
        recorded first), or one `memory` event without a history."""
        with self._lock:
            store = self.memory.store
            if not isinstance(store, Recorded):
                self.events.publish("memory", agent=agent)
                return
            try:
                store.reconcile(agent)
                records = store.changes(agent).records
            except OryxError as exc:
                self.events.publish("memory", agent=agent, problem=str(exc))
                return
            seen = self._seen.get(agent, 0)
            new = [record for record in records if record.n > seen]
            if records:
                self._seen[agent] = max(seen, records[-1].n)
            told = False
            for record in new:
                if not record.shown:
                    continue
                told = True
                self.events.publish(
                    "memory",
                    agent=agent,
                    change={
                        "n": record.n,
                        "op": record.op,
                        "actor": record.actor,
                        "session": record.session,
                        "time": record.time,
                        "added": len(record.after),
                        "removed": len(record.before),
                    },
                )
            if new and not told:  # only bookkeeping (a memory first seen): read it again
                self.events.publish("memory", agent=agent)
            # Nothing new in the history: the watcher saw the same change twice (an atomic
            # replace can arrive as two batches); it was told already.

    def agents_changed(self) -> None:
        self.events.publish("agents")

    def sessions_changed(self) -> None:
        """oryxos.db changed: a `session` event for each session that moved on since."""
        with self._lock:
            rows = self._sessions_database().query(
                "SELECT session_id, profile_name, last_active_at FROM sessions "
                + ("WHERE last_active_at > ? " if self._sessions_seen is not None else "")
                + "ORDER BY last_active_at",
                () if self._sessions_seen is None else (self._sessions_seen,),
            )
            for session, agent, when in rows:
                self._sessions_seen = when
                self.events.publish("session", agent=agent, session=session)

    def _latest_session_time(self) -> object:
        rows = self._sessions_database().query("SELECT max(last_active_at) FROM sessions")
        return rows[0][0] if rows else None

    def _sessions_database(self) -> Any:
        if self._database is None:
            from oryxtui.agent.sessions import open_conversations

            self._database = open_conversations(self.workspace, self.settings)
        return self._database

    def index_changed(self, agent: str | None, status: Any = None) -> None:
        self.events.publish(
            "index", agent=agent, **({"status": status.to_json()} if status is not None else {})
        )

    # The feeds ------------------------------------------------------------------------------

    async def watch_files(self) -> None:
        """The workspace's folders (memory files, agents, oryxos.db), until cancelled."""
        import anyio.to_thread

        from oryxtui.watching import watch_workspace

        database = self.settings.database.url is None  # sessions (and sqlite memory) there
        sqlite_memory = self.memory.backend == "sqlite"
        async for changes in watch_workspace(self.workspace, 10, 30, database=database):
            for agent in sorted(changes.memory, key=lambda a: a or ""):
                await anyio.to_thread.run_sync(self.memory_changed, agent)
            if changes.agents_changed:
                self.agents_changed()
            if changes.database:
                await anyio.to_thread.run_sync(self._database_changed, sqlite_memory)

    def _database_changed(self, sqlite_memory: bool) -> None:
        try:
            self.sessions_changed()
        except OryxError as exc:
            log.warning("sessions could not be read for the event stream: %s", exc)
        if sqlite_memory:  # any agent's rows may have changed: their histories say which
            for agent in self.workspace.memories():
                if self._newest_safely(agent) > self._seen.get(agent, 0):
                    self.memory_changed(agent)

    def _newest_safely(self, agent: str | None) -> int:
        try:
            return self._newest(agent)
        except OryxError:
            return 0

    def listen(self, stopped: threading.Event) -> None:
        """The shared database's announcements (every host's changes), until `stopped`."""
        store = self.memory.store
        if not isinstance(store, Listened):
            return

        def heard(news: tuple[str, str | None] | None) -> None:
            if news is None:  # the connection came back: what happened meanwhile is unknown
                self.events.publish("reset")
                return
            kind, agent = news
            if kind == "memory":
                self.memory_changed(agent)
            elif kind == "session":
                self.events.publish("session", agent=agent)
            elif kind == "index":
                self.index_changed(agent)

        def lost(sentence: str) -> None:
            log.warning("%s The event stream resumes when it is back.", sentence)

        store.listen(stopped, heard, lost)
