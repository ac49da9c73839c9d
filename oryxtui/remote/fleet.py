"""Several servers as one place for the dashboard (`oryxtui attach URL…`): every agent is
named `agent@server` (`@server` is that server's global memory), and each call goes to its
server. The dashboard's screens run unchanged over it; the sidebar groups by server.

Each server's event stream is followed in its own thread, resumed from the last event id after
a break (the server replays what was missed, or says `reset` and everything of it is read
again). A server that cannot be reached is marked and keeps what it showed; the others go on."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from oryxtui.errors import Forbidden, OryxError, Unauthenticated, UsageError
from oryxtui.memory.digest import EXTRACTIVE, Digest, Summariser
from oryxtui.memory.format import MemoryEntry, Scope
from oryxtui.memory.history.records import Record
from oryxtui.memory.recall.results import Recall, recall_across
from oryxtui.memory.snapshot import MemorySnapshot
from oryxtui.memory.store import Watch
from oryxtui.remote.client import Server, events
from oryxtui.remote.memory import RemoteMemory, RemoteStore
from oryxtui.remote.place import RemoteAgent, RemoteWorkspace
from oryxtui.remote.talk import RemoteProvider

if TYPE_CHECKING:
    from oryxtui.agent.episodes import Episode
    from oryxtui.agent.loop import LoopEvent
    from oryxtui.agent.prompt import Prompt
    from oryxtui.agent.sessions import Session

SEP = "@"
RECONNECTING = "reconnecting…"
REFUSED = "key refused"
STORE_DOWN = "its database is out of reach"
BACKOFF_SECONDS = (0.2, 0.5, 1.0, 2.0, 5.0)
READ_TIMEOUT_SECONDS = 60.0  # 4 heartbeats: a server gone without a word is noticed by then

Heard = Callable[[tuple[str, str | None] | None], None]


def qualified(server: str, agent: str | None) -> str:
    return f"{agent or ''}{SEP}{server}"


def split(name: str | None) -> tuple[str, str | None]:
    """`agent@server` → (server, agent); `@server` → (server, None)."""
    if name is None or SEP not in name:
        raise UsageError(f"{name!r} names no agent of an attached server.")
    agent, _, server = name.rpartition(SEP)
    return server, agent or None


def shown_name(name: str | None) -> str | None:
    """What the sidebar shows of a qualified name: the agent (None: a global memory)."""
    if name is None or SEP not in name:
        return name
    return split(name)[1]


class Fleet:
    """The attached servers, by name (their `[remotes]` name, else host:port)."""

    global_memory = False  # each server's global memory is listed with its agents

    def __init__(self, servers: Sequence[Server]) -> None:
        names = [server.name for server in servers]
        if len(set(names)) != len(names):
            raise UsageError("Each server is attached once; two of the URLs name the same one.")
        self.places = {server.name: RemoteWorkspace(server) for server in servers}
        self.root = ", ".join(place.root for place in self.places.values())
        self.state: dict[str, str | None] = dict.fromkeys(self.places)  # None: connected
        self._listed: dict[str, list[str]] = {name: [] for name in self.places}
        # Servers on one shared database show one memory: each such server → the one whose
        # agents are listed (the first named); its events are told as that one's.
        self.same_as: dict[str, str] = {}
        self.memory = FleetMemory(self)
        self.loop = FleetLoop(self)

    def place(self, server: str) -> RemoteWorkspace:
        try:
            return self.places[server]
        except KeyError:
            raise UsageError(f"No server {server!r} is attached.") from None

    # The workspace's methods the dashboard calls ---------------------------------------------

    def list_agents(self) -> list[str]:
        """Every server's agents, then its global memory, server by server (a server out of
        reach: what it listed last)."""
        names: list[str] = []
        shown: dict[str, str] = {}  # a shared database's id → the server listing its agents
        for server, place in self.places.items():
            with contextlib.suppress(OryxError):  # out of reach: what it listed last
                self._listed[server] = place.list_agents()
            store = place.memory.store_id
            if store is not None and store in shown:
                self.same_as[server] = shown[store]  # the same memory: listed once
                continue
            self.same_as.pop(server, None)
            if store is not None:
                shown[store] = server
            names += [qualified(server, agent) for agent in self._listed[server]]
            names.append(qualified(server, None))
        return names

    @property
    def also(self) -> dict[str, list[str]]:
        """Each listing server → the other servers on its shared database."""
        found: dict[str, list[str]] = {}
        for server, owner in self.same_as.items():
            found.setdefault(owner, []).append(server)
        return found

    def memories(self) -> list[str | None]:
        return list(self.list_agents())

    def read_agent(self, name: str) -> RemoteAgent | None:
        server, agent = split(name)
        return self.place(server).read_agent(agent) if agent else None

    def closest_agents(self, agent: str) -> list[str]:
        return []

    def check_write_target(self, path: object) -> None:
        raise UsageError("The memory is on a server: it has no file here to open in an editor.")

    # The event streams -----------------------------------------------------------------------

    def listen(self, stop: threading.Event, heard: Heard, lost: Callable[[str], None]) -> None:
        """Follow every server's event stream until `stop` (the app's listening worker)."""
        threads = [
            threading.Thread(target=self.follow, args=(server, stop, heard, lost), daemon=True)
            for server in self.places
        ]
        for thread in threads:
            thread.start()
        stop.wait()
        for place in self.places.values():
            place.server.interrupt()  # a stream waiting for its next event ends now

    def follow(
        self, server: str, stop: threading.Event, heard: Heard, lost: Callable[[str], None]
    ) -> None:
        place = self.places[server]
        last_id: str | None = None
        failures = 0
        while not stop.is_set():
            headers = {"Last-Event-ID": last_id} if last_id else {}
            try:
                with place.server.stream(
                    "GET", "/events", headers=headers, read_timeout=READ_TIMEOUT_SECONDS
                ) as lines:
                    for event_id, data in events(lines):
                        if stop.is_set():
                            return
                        if failures or self.state[server] in (RECONNECTING, REFUSED):
                            failures = 0
                            self._set_state(server, None, heard)
                        last_id = event_id or last_id
                        self._tell(server, data, heard)
                raise OSError("the server closed the event stream")
            except (OryxError, OSError) as exc:
                if stop.is_set():
                    return
                refused = isinstance(exc, (Unauthenticated, Forbidden))
                state = REFUSED if refused else RECONNECTING
                if self.state[server] != state:
                    self._set_state(server, state, heard)
                    lost(str(exc) if str(exc).startswith(server) else f"{server}: {exc}")
                failures += 1
                stop.wait(BACKOFF_SECONDS[min(failures, len(BACKOFF_SECONDS)) - 1])

    def _set_state(self, server: str, state: str | None, heard: Heard) -> None:
        self.state[server] = state
        heard(("server", server))

    def _tell(self, server: str, data: dict[str, Any], heard: Heard) -> None:
        kind = data["kind"]
        if kind in ("memory", "session", "index"):  # on a shared database: the copy shown
            server = self.same_as.get(server, server)
        agent = data.get("agent")
        agent = agent if isinstance(agent, str) else None
        if kind in ("memory", "session", "index"):
            heard((kind, qualified(server, agent)))
        elif kind == "agents":
            heard(("agents", None))
        elif kind == "store":  # the server's shared database went out of reach, or came back
            down = data.get("state") == "down"
            self._set_state(server, STORE_DOWN if down else None, heard)
            if not down:
                heard(None)
        elif kind in ("reset", "hello"):
            if data.get("store") == "down":
                self._set_state(server, STORE_DOWN, heard)
            if kind == "reset":  # what happened since is not known: read everything again
                heard(None)


class FleetMemory:
    """The memory of every attached server, by qualified name."""

    watch = Watch.NOTIFY
    engine = None
    recall_setup = None
    backend = "remote"
    embeds = False

    def __init__(self, fleet: Fleet) -> None:
        self.fleet = fleet
        self.store = RemoteStore(fleet.listen)

    def _on(self, name: str | None) -> tuple[RemoteMemory, str | None]:
        server, agent = split(name)
        return self.fleet.place(server).memory, agent

    @property
    def ranked(self) -> bool:
        ranked = False
        for place in self.fleet.places.values():
            try:
                ranked = ranked or place.memory.ranked
            except OryxError:
                continue
        return ranked

    def refusal(self, agent: str | None, doing: str) -> str | None:
        memory, there = self._on(agent)
        return memory.refusal(there, doing)

    def stored_agents(self) -> list[str]:
        return []

    def snapshot(self, agent: str | None = None, newest_bytes: int | None = None) -> MemorySnapshot:
        memory, there = self._on(agent)
        return replace(memory.snapshot(there), agent=agent)

    def build_context(self, agent: str | None = None) -> str:
        memory, there = self._on(agent)
        return memory.build_context(there)

    def count_archival(self, agent: str | None = None) -> int:
        return len(self.snapshot(agent).archival)

    def lost(self, agent: str | None = None) -> list[MemoryEntry]:
        return []

    def reconcile(self, agent: str | None = None) -> list[Record]:
        return []

    def accept(self, agent: str | None = None) -> list[MemoryEntry]:
        memory, there = self._on(agent)
        return memory.accept(there)

    def restore(self, agent: str | None = None) -> list[MemoryEntry]:
        memory, there = self._on(agent)
        return memory.restore(there)

    def save(
        self,
        agent: str | None,
        content: str,
        scope: str | Scope | None = "archival",
        op: str = "save",
    ) -> MemoryEntry:
        memory, there = self._on(agent)
        return memory.save(there, content, scope, op)

    def edit(self, agent: str | None, entry_id: str, content: str) -> MemoryEntry:
        memory, there = self._on(agent)
        return memory.edit(there, entry_id, content)

    def move(self, agent: str | None, entry_id: str, scope: str | Scope) -> MemoryEntry:
        memory, there = self._on(agent)
        return memory.move(there, entry_id, scope)

    def change(
        self,
        agent: str | None,
        entry_id: str,
        content: str | None = None,
        scope: str | Scope | None = None,
    ) -> MemoryEntry:
        memory, there = self._on(agent)
        return memory.change(there, entry_id, content, scope)

    def delete(self, agent: str | None, entry_id: str) -> MemoryEntry:
        memory, there = self._on(agent)
        return memory.delete(there, entry_id)

    def remove_duplicates(self, agent: str | None) -> list[MemoryEntry]:
        memory, there = self._on(agent)
        return memory.remove_duplicates(there)

    def consolidate(
        self,
        agent: str | None,
        dry_run: bool = False,
        summarise: Summariser | None = None,
        method: str = EXTRACTIVE,
        min_entries: int = 1,
    ) -> Digest | None:
        """A server writes its digests with its own summariser (the one given is not sent)."""
        memory, there = self._on(agent)
        return memory.consolidate(there, dry_run, None, method, min_entries)

    def history(self, agent: str | None = None, since: datetime | None = None) -> list[Record]:
        memory, there = self._on(agent)
        return memory.history(there, since)

    def history_problems(self, agent: str | None = None) -> str | None:
        return None

    def change_record(self, agent: str | None, n: int) -> Record:
        memory, there = self._on(agent)
        return memory.change_record(there, n)

    def as_of(self, agent: str | None, n: int) -> tuple[MemorySnapshot, str] | None:
        memory, there = self._on(agent)
        then = memory.as_of(there, n)
        return None if then is None else (replace(then[0], agent=agent), then[1])

    def bring_back(self, agent: str | None, record: Record | int) -> list[MemoryEntry]:
        memory, there = self._on(agent)
        return memory.bring_back(there, record)

    def recall(self, agent: str | None, keyword: str, semantic: bool = True) -> Recall:
        memory, there = self._on(agent)
        return memory.recall(there, keyword, semantic)

    def recall_across(
        self, agents: Sequence[str | None], keyword: str, semantic: bool = True
    ) -> Recall:
        return recall_across(self.recall, agents, keyword, semantic, None)

    def find_core(self, agent: str | None, query: str) -> list[MemoryEntry]:
        memory, there = self._on(agent)
        return memory.find_core(there, query)

    def awaiting_review(self, agent: str | None = None) -> list[Any]:
        memory, there = self._on(agent)
        return memory.awaiting_review(there)

    def held(self, agent: str | None = None) -> list[Any]:
        memory, there = self._on(agent)
        return memory.held(there)

    def approve(self, agent: str | None, ids: Sequence[str] | None = None) -> list[MemoryEntry]:
        memory, there = self._on(agent)
        return memory.approve(there, ids)

    def reject(self, agent: str | None, ids: Sequence[str]) -> list[MemoryEntry]:
        memory, there = self._on(agent)
        return memory.reject(there, ids)

    def entry_origins(self, agent: str | None) -> dict[str, dict[str, Any]]:
        memory, there = self._on(agent)
        return memory.entry_origins(there)

    def index_status(self, agent: str | None = None) -> Any:
        memory, there = self._on(agent)
        return memory.index_status(there)


class FleetEpisodes:
    """Every attached server's conversations; a session is asked of the server it came
    from."""

    def __init__(self, fleet: Fleet) -> None:
        self.fleet = fleet
        self._from: dict[str, str] = {}  # session id → server, as listed

    def sync(self, agent: str | None = None, every_agent: bool = False) -> int:
        return 0

    def sessions(self, agent: str | None, every_agent: bool = False) -> list[dict[str, Any]]:
        server, there = split(agent)
        found = self.fleet.place(server).loop.episodes.sessions(there, every_agent)
        for session in found:
            self._from[str(session["session"])] = server
        return found

    def session(self, session_id: str) -> list[Episode]:
        servers = [self._from[session_id]] if session_id in self._from else list(self.fleet.places)
        for server in servers:
            turns = self.fleet.place(server).loop.episodes.session(session_id)
            if turns:
                return turns
        return []

    def search(
        self,
        agent: str | None,
        query: str,
        since: str | None = None,
        until: str | None = None,
        limit: int = 5,
    ) -> list[Episode]:
        server, there = split(agent)
        episodes = self.fleet.place(server).loop.episodes
        found = episodes.search(there, query, since, until, limit)
        for turn in found:
            self._from[turn.session_id] = server
        return found


class FleetSessions:
    def __init__(self, fleet: Fleet) -> None:
        self.fleet = fleet

    def load(self, session_id: str, agent: str | None, channel: str, user: str) -> Session:
        server, there = split(agent)
        return self.fleet.place(server).loop.sessions.load(session_id, there, channel, user)


class FleetLoop:
    """Every attached server's agent loop, by qualified name."""

    def __init__(self, fleet: Fleet) -> None:
        self.fleet = fleet
        self.episodes = FleetEpisodes(fleet)
        self.sessions = FleetSessions(fleet)

    def provider(self, agent: str | None) -> RemoteProvider:
        server, there = split(agent)
        return self.fleet.place(server).loop.provider(there)

    def prompt(self, agent: str | None, session_id: str, ask: bool = True) -> Prompt:
        server, there = split(agent)
        return self.fleet.place(server).loop.prompt(there, session_id, ask)

    def turn_view(self, session_id: str, turn: int) -> dict[str, Any] | None:
        known = self.episodes._from.get(session_id)
        for server in [known] if known else list(self.fleet.places):
            view = self.fleet.place(server).loop.turn_view(session_id, turn)
            if view is not None:
                return view
        return None

    def run(self, agent: str | None, message: str, channel: str, user: str) -> Iterator[LoopEvent]:
        server, there = split(agent)
        return self.fleet.place(server).loop.run(there, message, channel, user)
