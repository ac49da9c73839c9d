"""Where a command, the dashboard or the API works: a *place*. Here it is a workspace on this
machine; there, an oryxtui server (`--remote`) or several (`attach`) in its place. What a
place offers — its memory, its agents, their conversations and loop, who wrote an entry — is
declared once, below, as typed protocols that both sides implement (mypy holds them to it);
every difference between here and there is decided in this package, and only this package
imports `oryxtui.remote`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from oryxtui.errors import UsageError

if TYPE_CHECKING:
    from oryxtui.agent.episodes import EpisodeStore
    from oryxtui.agent.loop import AgentLoop
    from oryxtui.config import Settings
    from oryxtui.memory.service import MemoryService
    from oryxtui.remote.fleet_loop import FleetEpisodes, FleetLoop
    from oryxtui.remote.fleet_memory import FleetMemory
    from oryxtui.remote.memory import RemoteMemory
    from oryxtui.remote.talk import RemoteEpisodes, RemoteLoop

from oryxtui.places.here import Here
from oryxtui.places.protocols import AgentFacts, Episodes, Loop, Memory, Place, Provider, Sessions
from oryxtui.places.there import Attached, There

__all__ = [
    "AgentFacts",
    "Attached",
    "Episodes",
    "Here",
    "Loop",
    "Memory",
    "Place",
    "Provider",
    "Sessions",
    "There",
    "attach_servers",
    "here_only",
    "server_place",
    "workspace_place",
]

# Opening one -------------------------------------------------------------------------------


def workspace_place(root: str | None, settings: Settings | None = None) -> Here:
    """The workspace at `root` (or found from here), with its settings."""
    from oryxtui.config import load_settings
    from oryxtui.workspace import find_workspace

    workspace = find_workspace(root)
    return Here(workspace, settings or load_settings(workspace.config_path))


def here_only(place: Place, refusal: str) -> Here:
    """The place as a workspace on this machine, for what is done only here; a server in its
    place is told `refusal` (what to run there instead)."""
    if isinstance(place, Here):
        return place
    raise UsageError(refusal)


def server_place(target: str, key_env: str | None = None) -> There:
    """A server by URL or by its name in `[remotes]`, with its key."""
    from oryxtui.remote.place import server_for

    return There(server_for(target, key_env))


def attach_servers(targets: Sequence[str], key_env: str | None = None) -> Attached:
    """Servers attached at once, each by URL or `[remotes]` name."""
    from oryxtui.remote.fleet import Fleet
    from oryxtui.remote.place import server_for

    return Attached(Fleet([server_for(target, key_env) for target in targets]))


if TYPE_CHECKING:  # mypy holds each side to the protocols

    def _each_place_offers_memory(
        here: MemoryService, server: RemoteMemory, servers: FleetMemory
    ) -> list[Memory]:
        return [here, server, servers]

    def _each_place_offers_a_loop(
        here: AgentLoop, server: RemoteLoop, servers: FleetLoop
    ) -> list[Loop]:
        return [here, server, servers]

    def _each_place_offers_episodes(
        here: EpisodeStore, server: RemoteEpisodes, servers: FleetEpisodes
    ) -> list[Episodes]:
        return [here, server, servers]

    def _each_is_a_place(here: Here, server: There, servers: Attached) -> list[Place]:
        return [here, server, servers]
