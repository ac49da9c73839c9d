"""The conversations and agent loops of every attached server as one, by qualified name: a
session is asked of the server it came from."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from oryxtui.remote.names import split
from oryxtui.remote.talk import RemoteProvider

if TYPE_CHECKING:
    from oryxtui.agent.episodes import Episode
    from oryxtui.agent.loop import LoopEvent
    from oryxtui.agent.prompt import Prompt
    from oryxtui.agent.sessions import Session
    from oryxtui.remote.fleet import Fleet


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
