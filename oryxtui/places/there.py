"""There: one oryxtui server (`--remote`) or several attached (`oryxtui attach`) in the place
of a workspace; the only modules that reach `oryxtui.remote`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from oryxtui.errors import OryxError, UsageError

if TYPE_CHECKING:
    from oryxtui.memory.digest import Summariser
    from oryxtui.memory.format import MemoryEntry
    from oryxtui.memory.store import Listened
    from oryxtui.remote.client import Server
    from oryxtui.remote.fleet import Fleet
    from oryxtui.remote.fleet_loop import FleetEpisodes, FleetLoop
    from oryxtui.remote.fleet_memory import FleetMemory
    from oryxtui.remote.memory import RemoteMemory
    from oryxtui.remote.place import RemoteWorkspace
    from oryxtui.remote.talk import RemoteEpisodes, RemoteLoop
    from oryxtui.workspace import AgentName as AgentArg
    from oryxtui.workspace import Workspace


if TYPE_CHECKING:
    from oryxtui.places.protocols import AgentFacts


# There: one server, or several attached -------------------------------------------------------


class _Remote:
    """What one server and attached servers share: agents listed, memory kept, entries'
    origins told and loops run over there, each asked of `source` (the server, or the fleet)."""

    global_memory = True
    lost_title = "Server"
    nearby = False

    def __init__(self, source: RemoteWorkspace | Fleet, memory: RemoteMemory | FleetMemory) -> None:
        from oryxtui.config import Settings

        self.source = source
        self.memory = memory
        self.root = source.root
        self.settings = Settings()  # the server's own apply there; none are read here

    def list_agents(self) -> list[str]:
        return self.source.list_agents()

    def known_agents(self) -> list[str]:
        return self.list_agents()  # the server lists those its database has memory of

    def memories(self) -> list[str | None]:
        return self.source.memories()

    def closest_agents(self, agent: str) -> list[str]:
        return self.source.closest_agents(agent)

    def read_agent(self, agent: str) -> AgentFacts | None:
        return self.source.read_agent(agent)

    def create_agent(self, agent: str) -> None:
        raise UsageError(
            f"Agents are made on the server: run `oryxtui agents new {agent}` there ({self.root})."
        )

    def check_write_target(self, path: Path) -> None:
        raise UsageError("The memory is on a server: it has no file here to open in an editor.")

    def summariser(self, agent: AgentArg) -> tuple[Summariser | None, str, list[str]]:
        return None, "", []  # the server summarises with the agent's model there

    def watched(self) -> Workspace | None:
        return None  # each server's events say what changed

    def hang_up(self) -> None:
        self.source.hang_up()

    def listened(self) -> Listened:
        return self.memory.store  # the servers' event streams

    @property
    def episodes(self) -> RemoteEpisodes | FleetEpisodes:
        return self.source.loop.episodes

    def loop(self) -> RemoteLoop | FleetLoop:
        return self.source.loop

    def turn_view(self, session_id: str, turn: int) -> dict[str, Any] | None:
        return self.source.loop.turn_view(session_id, turn)

    def origins(
        self, agent: AgentArg, entries: Sequence[MemoryEntry] | None = None
    ) -> dict[str, dict[str, Any]]:
        return self.memory.entry_origins(agent)  # the server says it for all its entries


class There(_Remote):
    """One oryxtui server (`--remote`) in the place of a workspace."""

    def __init__(self, server: Server) -> None:
        from oryxtui.remote.place import RemoteWorkspace

        remote = RemoteWorkspace(server)
        super().__init__(remote, remote.memory)
        self.server_memory = remote.memory

    def within_reach(self, agent: str) -> None:
        """With a key limited to some agents: one outside them is said to be out of the key's
        reach (not advised to be made, which the key could not do either)."""
        from fnmatch import fnmatchcase

        try:
            patterns = self.server_memory.info().get("agents")
        except OryxError:
            return  # not known now: the server says so when asked
        if isinstance(patterns, list) and not any(fnmatchcase(agent, str(p)) for p in patterns):
            raise UsageError(
                f"The agent {agent!r} is not within this key's reach (it reaches "
                f"{', '.join(map(str, patterns))} only); ask for a key that reaches it."
            )

    def servers(self) -> tuple[dict[str, str | None], dict[str, list[str]]]:
        return {}, {}

    def awaiting(self, agent: AgentArg) -> list[dict[str, Any]]:
        return list(self.server_memory.awaiting_json(agent))


class Attached(_Remote):
    """Several servers at once (`oryxtui attach`): their agents by qualified name
    (`agent@server`), each server's global memory listed with its agents."""

    global_memory = False

    def __init__(self, fleet: Fleet) -> None:
        super().__init__(fleet, fleet.memory)
        self.fleet = fleet

    def within_reach(self, agent: str) -> None:
        return None  # each server says so when asked

    def servers(self) -> tuple[dict[str, str | None], dict[str, list[str]]]:
        """Each server's state (None: connected, else why not), and which share a database."""
        return self.fleet.state, self.fleet.also

    def awaiting(self, agent: AgentArg) -> list[dict[str, Any]]:
        return []  # the review inbox asks each server through its memory
