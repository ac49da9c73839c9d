"""The feeds that fill the event log: what the workspace watcher sees, and what the shared
database announces. An announcement is only a hint — anyone who can connect can send one —
so nothing is told before the rows it names are read again, and a flood of hints is read at
most once per beat."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from oryxtui.api.events import EventLog
from oryxtui.config import Settings
from oryxtui.errors import OryxError
from oryxtui.memory import MemoryService
from oryxtui.memory.events import (
    AgentsChange,
    DatabaseWritten,
    Event,
    HistoryWritten,
    IndexProgress,
    KeysChange,
    MemoryChange,
    Reset,
    SessionMoved,
)
from oryxtui.memory.format import Scope
from oryxtui.memory.store import Listened, Recorded
from oryxtui.workspace import Workspace

log = logging.getLogger("oryxtui.api")
WATCH_ARMED_SECONDS = 5.0  # how long running() waits for the watch to be set up


@dataclass(frozen=True)
class Reread:
    """Too many hints to follow one by one: every memory, the sessions and the keys read
    again, and only what differs from what was told is told."""


class Hints:
    """Hints waiting to be read, each once however often it was sent: handled in batches, a
    beat apart; past `cap` waiting, one full re-read (`Reread`) stands for the rest."""

    def __init__(
        self, handle: Callable[[Event | Reread], None], beat: float = 0.05, cap: int = 256
    ) -> None:
        self.handle = handle
        self.beat = beat
        self.cap = cap
        self._waiting: dict[Event | Reread, None] = {}  # in arrival order, each once
        self._ready = threading.Condition()

    def add(self, hint: Event | Reread) -> None:
        with self._ready:
            if hint in self._waiting:
                return
            if len(self._waiting) >= self.cap:
                hint = Reread()  # too many to read one by one: read everything once
                self._waiting.clear()
            self._waiting[hint] = None
            self._ready.notify()

    def run(self, stopped: threading.Event) -> None:
        while not stopped.is_set():
            with self._ready:
                if not self._waiting:
                    self._ready.wait(0.25)
                batch, self._waiting = list(self._waiting), {}
            for hint in batch:
                try:
                    self.handle(hint)
                except OryxError as exc:
                    log.warning("an announcement could not be followed: %s", exc)
            if batch:
                stopped.wait(self.beat)


class EventFeed:
    """Turns what the workspace watcher sees, and what the shared database announces, into
    events: one per history record (save, edit, move, delete, digest, outside change…), a
    plain `memory` event where the backend keeps no history, `agents`, `session`, `index`,
    and `keys` (for the server's own streams: a key was made, revoked or changed)."""

    def __init__(
        self,
        workspace: Workspace,
        settings: Settings,
        memory: MemoryService,
        events: EventLog,
        scrub: Callable[[str], str] = str,
        database: Callable[[], Any] | None = None,
    ) -> None:
        self.workspace = workspace
        self._open_database = database  # the place's database, where sessions are
        self.settings = settings
        self.memory = memory
        self.events = events
        self.scrub = scrub  # what a `problem` says, without the server's paths
        self._seen: dict[str | None, int] = {}  # the newest history record told, per agent
        self._sessions_seen: object = None  # the newest last_active_at told
        self._index_seen: dict[str | None, object] = {}  # the index status told, per agent
        self._keys_seen: str | None = None  # a digest of the keys table's state
        self._lock = threading.Lock()
        self._database: Any = None  # where sessions are: opened on first use
        self._watching: asyncio.Event | None = None  # set once the files are watched
        self._watch: asyncio.Future[None] | None = None  # the watch, while it runs
        self._listener: threading.Thread | None = None  # the shared database's listener
        self._keeper: threading.Thread | None = None  # the index keeper (with an embedder)

    # What the server starts with -----------------------------------------------------------

    def prime(self) -> None:
        """Note where every agent's history and the sessions stand, so only what happens from
        now on is told."""
        for agent in self.workspace.memories():
            with contextlib.suppress(OryxError):
                self._seen[agent] = self._newest(agent)
        with contextlib.suppress(OryxError):
            self._sessions_seen = self._latest_session_time()
        with contextlib.suppress(OryxError):
            self._keys_seen = self._keys_state()

    def _newest(self, agent: str | None) -> int:
        store = self.memory.store
        if not isinstance(store, Recorded):
            return 0
        records = store.changes(agent).records
        return records[-1].n if records else 0

    # Feeding --------------------------------------------------------------------------------

    def memory_changed(self, agent: str | None) -> None:
        """The agent's memory changed: one event per new history record (outside changes are
        recorded first), the last with the memory's counts after it; or one plain event
        without a history."""
        with self._lock:
            store = self.memory.store
            if not isinstance(store, Recorded):
                self.events.publish(MemoryChange(agent))
                return
            try:
                store.reconcile(agent)
                log = store.changes(agent)
            except OryxError as exc:
                self.events.publish(MemoryChange(agent, problem=self.scrub(str(exc))))
                return
            records = log.records
            seen = self._seen.get(agent, 0)
            new = [record for record in records if record.n > seen and record.shown]
            if records:
                self._seen[agent] = max(seen, records[-1].n)
            memory = log.replay.memory
            counts = (
                None
                if memory is None
                else (
                    len(memory[Scope.CORE]),
                    len(memory[Scope.ARCHIVAL]),
                )
            )
            for index, record in enumerate(new):
                last = index == len(new) - 1
                self.events.publish(MemoryChange(agent, record, counts if last else None))
            if records and records[-1].n > seen and not new:
                # Only bookkeeping (a memory first seen): read it again.
                self.events.publish(MemoryChange(agent))
            # Nothing new in the history: the watcher saw the same change twice (an atomic
            # replace can arrive as two batches); it was told already.

    def agents_changed(self) -> None:
        self.events.publish(AgentsChange())

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
                self.events.publish(SessionMoved(agent, session))

    def _latest_session_time(self) -> object:
        rows = self._sessions_database().query("SELECT max(last_active_at) FROM sessions")
        return rows[0][0] if rows else None

    def _sessions_database(self) -> Any:
        if self._database is None:
            if self._open_database is not None:
                self._database = self._open_database()
            else:
                from oryxtui.agent.sessions import open_conversations

                self._database = open_conversations(self.workspace, self.settings)
        return self._database

    def index_changed(self, agent: str | None, status: Any = None) -> None:
        self.events.publish(IndexProgress(agent, status.to_json() if status is not None else None))

    def index_hinted(self, agent: str | None) -> None:
        """Another process says it indexed the agent's entries: told if the index says so."""
        engine = self.memory.engine
        status = engine.status(agent) if engine is not None else None
        told = status.to_json() if status is not None else None
        if told is None or self._index_seen.get(agent) == told:
            return
        if status is not None and status.entries == 0 and agent not in self._index_seen:
            return  # no entries, never told: an agent the database does not hold
        self._index_seen[agent] = told
        self.index_changed(agent, status)

    def keys_changed(self) -> None:
        """A `keys` event (for the server's own streams, which check their key again) when
        a key was made, revoked or changed since the last look."""
        state = self._keys_state()
        if state != self._keys_seen:
            self._keys_seen = state
            self.events.publish(KeysChange())

    def _keys_state(self) -> str:
        from oryxtui.api.keys import KeyStore

        return KeyStore(self._sessions_database()).fingerprint()

    # The feeds ------------------------------------------------------------------------------

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """While it runs, changes are told as they happen (the files watched, the shared
        database listened to), and new entries are indexed as they are written (with an
        embedder)."""
        import anyio.to_thread

        stopped = threading.Event()
        await anyio.to_thread.run_sync(self.prime)
        self._watching = asyncio.Event()
        self._watch = watching = asyncio.ensure_future(self.watch_files())
        self._listener = threading.Thread(target=self.listen, args=(stopped,), daemon=True)
        self._listener.start()
        if self.memory.embeds:
            self._keeper = threading.Thread(target=self._keep_index, args=(stopped,), daemon=True)
            self._keeper.start()
        with contextlib.suppress(TimeoutError):  # a change from now on is seen (not waited
            async with asyncio.timeout(WATCH_ARMED_SECONDS):  # for forever: no folder, say)
                await self._watching.wait()
        try:
            yield
        finally:
            stopped.set()
            watching.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watching

    # How the feeds are doing (what /readyz and the metrics tell) ---------------------------

    def watching(self) -> bool:
        """The workspace watch runs, and has been set up."""
        watch = self._watch
        armed = self._watching is not None and self._watching.is_set()
        return watch is not None and not watch.done() and armed

    def keeping_index(self) -> bool | None:
        """The index keeper runs (None: there is no embedder, so no keeper)."""
        if not self.memory.embeds:
            return None
        return self._keeper is not None and self._keeper.is_alive()

    def listening(self) -> bool | None:
        """The shared database's announcements are heard (None: no shared database)."""
        if not isinstance(self.memory.store, Listened):
            return None
        alive = self._listener is not None and self._listener.is_alive()
        return alive and not self.events.store_down

    def _keep_index(self, stopped: threading.Event) -> None:
        from oryxtui.memory.recall.keeper import keep_index

        keep_index(self.memory, self.workspace.memories, stopped, self.index_changed)

    async def watch_files(self) -> None:
        """The workspace's folders (memory files, agents, oryxos.db), until cancelled."""
        import anyio.to_thread

        from oryxtui.watching import watch_workspace

        database = self.settings.database.url is None  # sessions (and sqlite memory) there
        sqlite_memory = self.memory.backend == "sqlite"
        async for changes in watch_workspace(self.workspace, 10, 30, database=database):
            if self._watching is not None:
                self._watching.set()  # armed (or already seeing changes)
            for event in changes.events():
                match event:
                    case MemoryChange(agent) | HistoryWritten(agent):  # (told once, by record)
                        await anyio.to_thread.run_sync(self.memory_changed, agent)
                    case AgentsChange():
                        self.agents_changed()
                    case DatabaseWritten():
                        await anyio.to_thread.run_sync(self._database_changed, sqlite_memory)

    def _database_changed(self, sqlite_memory: bool) -> None:
        try:
            self.sessions_changed()
            self.keys_changed()
        except OryxError as exc:
            log.warning("sessions could not be read for the event stream: %s", exc)
        if sqlite_memory:  # any agent's rows may have changed: their histories say which
            for agent in self.workspace.memories():
                if self._newest_safely(agent) > self._seen.get(agent, 0):
                    self.memory_changed(agent)

    def _reread(self) -> None:
        """Everything the database holds read again; what is new since it was told, told."""
        agents = dict.fromkeys([*self.workspace.memories(), *self.memory.stored_agents()])
        for agent in agents:
            if self._newest_safely(agent) > self._seen.get(agent, 0):
                self.memory_changed(agent)
        self._database_changed(sqlite_memory=False)

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
        hints = Hints(self._follow)
        threading.Thread(target=hints.run, args=(stopped,), daemon=True).start()

        def lost(sentence: str) -> None:
            log.warning("%s The event stream resumes when it is back.", sentence)
            self.events.store(down=True)

        store.listen(stopped, hints.add, lost)

    def _follow(self, hint: Event | Reread) -> None:
        """One hint, read again before anything is told."""
        match hint:
            case Reset():  # (re)connected: what happened while not listening is unknown
                self.events.store(down=False)
                self.events.publish(Reset())
                self.keys_changed()
            case Reread():
                self._reread()
            case MemoryChange(agent):
                self.memory_changed(agent)
            case SessionMoved():
                self.sessions_changed()
            case IndexProgress(agent):
                self.index_hinted(agent)
            case KeysChange():
                self.keys_changed()
