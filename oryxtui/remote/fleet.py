"""Several servers as one place for the dashboard (`oryxtui attach URL…`): every agent is
named `agent@server` (`@server` is that server's global memory), and each call goes to its
server. The dashboard's screens run unchanged over it; the sidebar groups by server.

Each server's event stream is followed in its own thread, resumed from the last event id after
a break (the server replays what was missed, or says `reset` and everything of it is read
again). A server that cannot be reached is marked and keeps what it showed; the others go on."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from oryxtui import notices
from oryxtui.errors import Forbidden, OryxError, Unauthenticated, UsageError
from oryxtui.memory.events import (
    AgentsChange,
    Event,
    Hello,
    IndexProgress,
    MemoryChange,
    Reset,
    ServerState,
    SessionMoved,
    StoreState,
    from_json,
)
from oryxtui.remote.client import Server, events
from oryxtui.remote.copies import Copies
from oryxtui.remote.fleet_loop import FleetLoop
from oryxtui.remote.fleet_memory import FleetMemory
from oryxtui.remote.names import qualified, split
from oryxtui.remote.place import RemoteAgent, RemoteWorkspace

if TYPE_CHECKING:
    pass

RECONNECTING = "reconnecting…"
REFUSED = "key refused"
STORE_DOWN = "its database is out of reach"
BACKOFF_SECONDS = (0.2, 0.5, 1.0, 2.0, 5.0)
READ_TIMEOUT_SECONDS = 60.0  # 4 heartbeats: a server gone without a word is noticed by then

Heard = Callable[[Event], None]


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

    def hang_up(self) -> None:
        for place in self.places.values():
            place.hang_up()

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
        copies = place.memory.copies = Copies()  # kept current by this stream's changes
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
                copies.forget(every=True)  # changes may be missed: read what is shown again
                refused = isinstance(exc, (Unauthenticated, Forbidden))
                state = REFUSED if refused else RECONNECTING
                if self.state[server] != state:
                    self._set_state(server, state, heard)
                    lost(str(exc) if str(exc).startswith(server) else f"{server}: {exc}")
                failures += 1
                stop.wait(BACKOFF_SECONDS[min(failures, len(BACKOFF_SECONDS)) - 1])

    def _set_state(self, server: str, state: str | None, heard: Heard) -> None:
        self.state[server] = state
        heard(ServerState(server, state))

    def _tell(self, server: str, data: dict[str, Any], heard: Heard) -> None:
        """One event of `server`'s stream, read as untrusted, told as the fleet's: agents by
        qualified name; a memory change applied to the copy of that memory first."""
        event = from_json(data)
        if event is None:
            notices.skipped(1, "event", f"the server {server}")
            return
        # On a shared database, the events of the copy shown (the first server named).
        shown = self.same_as.get(server, server)
        copies = self.places[shown].memory.copies
        match event:
            case MemoryChange(agent):
                if copies is not None:
                    copies.follow(event)
                heard(replace(event, agent=qualified(shown, agent)))
            case SessionMoved(agent) | IndexProgress(agent):
                heard(replace(event, agent=qualified(shown, agent)))
            case AgentsChange():
                heard(event)
            case StoreState(down):  # the server's shared database went out of reach, or back
                self._set_state(server, STORE_DOWN if down else None, heard)
                if not down:
                    self._read_again(server, heard)
            case Hello(store_down) if store_down:
                self._set_state(server, STORE_DOWN, heard)
            case Reset(store_down):  # what happened since is not known: read everything again
                if store_down:
                    self._set_state(server, STORE_DOWN, heard)
                self._read_again(server, heard)

    def _read_again(self, server: str, heard: Heard) -> None:
        copies = self.places[server].memory.copies
        if copies is not None:
            copies.forget(every=True)
        heard(Reset())
