"""Where a command, the dashboard or the API works: a *place*. Here it is a workspace on this
machine; there, an oryxtui server (`--remote`) or several (`attach`) in its place. What a
place offers — its memory, its agents, their conversations and loop, who wrote an entry — is
declared once, below, as typed protocols that both sides implement (mypy holds them to it);
every difference between here and there is decided in this module, and only this module
imports `oryxtui.remote`."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from oryxtui.errors import OryxError, UsageError

if TYPE_CHECKING:
    from oryxtui.agent.episodes import Episode, EpisodeStore
    from oryxtui.agent.loop import AgentLoop, LoopEvent
    from oryxtui.agent.prompt import Prompt
    from oryxtui.agent.sessions import Conversations, Session
    from oryxtui.config import Settings
    from oryxtui.memory.digest import Digest, Summariser
    from oryxtui.memory.format import MemoryEntry, Scope
    from oryxtui.memory.history.records import Record
    from oryxtui.memory.recall.engine import RecallEngine
    from oryxtui.memory.recall.results import IndexStatus, Recall
    from oryxtui.memory.service import MemoryService
    from oryxtui.memory.service.reviewing import Awaiting
    from oryxtui.memory.snapshot import MemorySnapshot
    from oryxtui.memory.store import Listened, Watch
    from oryxtui.remote.client import Server
    from oryxtui.remote.fleet import Fleet, FleetEpisodes, FleetLoop, FleetMemory
    from oryxtui.remote.memory import RemoteMemory
    from oryxtui.remote.place import RemoteWorkspace
    from oryxtui.remote.talk import RemoteEpisodes, RemoteLoop
    from oryxtui.workspace import AgentName as AgentArg
    from oryxtui.workspace import Workspace


class Memory(Protocol):
    """Every agent's memory at a place: read it, change it, recall from it, review it, its
    history. (`MemoryService` here; `RemoteMemory` and `FleetMemory` there.)"""

    @property
    def backend(self) -> str: ...
    @property
    def embeds(self) -> bool: ...
    @property
    def engine(self) -> RecallEngine | None: ...
    @property
    def ranked(self) -> bool: ...
    @property
    def watch(self) -> Watch: ...

    # Reading
    def snapshot(
        self, agent: AgentArg = ..., newest_bytes: int | None = None
    ) -> MemorySnapshot: ...
    def build_context(self, agent: AgentArg = ...) -> str: ...
    def count_archival(self, agent: AgentArg = ...) -> int: ...
    def find_core(self, agent: AgentArg, query: str) -> list[MemoryEntry]: ...
    def stored_agents(self) -> list[str]: ...
    def refusal(self, agent: str | None, doing: str) -> str | None: ...
    def index_status(self, agent: AgentArg = ...) -> IndexStatus | None: ...

    # Recall
    def recall(self, agent: AgentArg, keyword: str, semantic: bool = True) -> Recall: ...
    def recall_across(
        self, agents: Sequence[str | None], keyword: str, semantic: bool = True
    ) -> Recall: ...

    # Changing
    def save(
        self, agent: AgentArg, content: str, scope: str | Scope | None = ..., op: str = "save"
    ) -> MemoryEntry: ...
    def change(
        self,
        agent: AgentArg,
        entry_id: str,
        content: str | None = None,
        scope: str | Scope | None = None,
    ) -> MemoryEntry: ...
    def edit(self, agent: AgentArg, entry_id: str, content: str) -> MemoryEntry: ...
    def move(self, agent: AgentArg, entry_id: str, scope: str | Scope) -> MemoryEntry: ...
    def delete(self, agent: AgentArg, entry_id: str) -> MemoryEntry: ...
    def remove_duplicates(self, agent: AgentArg) -> list[MemoryEntry]: ...
    def consolidate(
        self,
        agent: AgentArg,
        dry_run: bool = False,
        summarise: Summariser | None = None,
        method: str = ...,
        min_entries: int = 1,
    ) -> Digest | None: ...

    # Review
    def awaiting_review(self, agent: AgentArg = ...) -> list[Awaiting]: ...
    def held(self, agent: AgentArg = ...) -> list[Awaiting]: ...
    def accept(self, agent: AgentArg = ...) -> list[MemoryEntry]: ...
    def approve(self, agent: AgentArg, ids: Sequence[str] | None = None) -> list[MemoryEntry]: ...
    def reject(self, agent: AgentArg, ids: Sequence[str]) -> list[MemoryEntry]: ...

    # History
    def history(self, agent: AgentArg = ..., since: datetime | None = None) -> list[Record]: ...
    def history_problems(self, agent: AgentArg = ...) -> str | None: ...
    def change_record(self, agent: AgentArg, n: int) -> Record: ...
    def as_of(self, agent: AgentArg, n: int) -> tuple[MemorySnapshot, str] | None: ...
    def bring_back(self, agent: AgentArg, record: Record | int) -> list[MemoryEntry]: ...
    def lost(self, agent: AgentArg = ...) -> list[MemoryEntry]: ...
    def restore(self, agent: AgentArg = ...) -> list[MemoryEntry]: ...
    def reconcile(self, agent: AgentArg = ...) -> list[Record]: ...


class Episodes(Protocol):
    """The agents' past conversations, turn by turn."""

    def sync(self, agent: AgentArg = None, every_agent: bool = False) -> int: ...
    def sessions(self, agent: AgentArg, every_agent: bool = False) -> list[dict[str, Any]]: ...
    def session(self, session_id: str) -> list[Episode]: ...
    def search(
        self,
        agent: AgentArg,
        query: str,
        since: str | None = None,
        until: str | None = None,
        limit: int = 5,
    ) -> list[Episode]: ...


class Sessions(Protocol):
    def load(self, session_id: str, agent: AgentArg, channel: str, user: str) -> Session: ...


class Provider(Protocol):
    @property
    def label(self) -> str: ...  # the model, as a person reads it


class Loop(Protocol):
    """The memory-aware loop that answers a message, and what it would send a model."""

    @property
    def episodes(self) -> Episodes: ...
    @property
    def sessions(self) -> Sessions: ...
    def provider(self, agent: AgentArg) -> Provider: ...
    def prompt(self, agent: AgentArg, session_id: str, ask: bool = True) -> Prompt: ...
    def turn_view(self, session_id: str, turn: int) -> dict[str, Any] | None: ...
    def run(
        self, agent: AgentArg, message: str, channel: str, user: str
    ) -> Iterator[LoopEvent]: ...


class AgentFacts(Protocol):
    """What a place says of an agent (AGENT.md here, the server's list there)."""

    @property
    def description(self) -> str: ...


class Place(Protocol):
    """A workspace, or servers in its place: what the CLI, the dashboard and the API ask."""

    @property
    def root(self) -> object: ...  # what messages name as the place: a folder, URLs
    @property
    def settings(self) -> Settings: ...
    @property
    def memory(self) -> Memory: ...
    @property
    def global_memory(self) -> bool: ...  # the global memory is one of its memories
    @property
    def lost_title(self) -> str: ...  # what a lost connection is called: Database, Server
    @property
    def nearby(self) -> bool: ...  # read on this machine: quick enough before a first frame

    def list_agents(self) -> list[str]: ...
    def known_agents(self) -> list[str]: ...  # with those only a shared database has memory of
    def memories(self) -> list[str | None]: ...
    def closest_agents(self, agent: str) -> list[str]: ...
    def read_agent(self, agent: str) -> AgentFacts | None: ...
    def create_agent(self, agent: str) -> None: ...
    def within_reach(self, agent: str) -> None: ...  # UsageError: out of this key's reach
    def check_write_target(self, path: Path) -> None: ...
    def servers(self) -> tuple[dict[str, str | None], dict[str, list[str]]]: ...
    def watched(self) -> Workspace | None: ...  # the folder whose files to watch (None: servers)
    def listened(self) -> Listened | None: ...  # what announces changes made elsewhere
    @property
    def episodes(self) -> Episodes: ...
    def loop(self) -> Loop: ...
    def turn_view(self, session_id: str, turn: int) -> dict[str, Any] | None: ...
    def origins(
        self, agent: AgentArg, entries: Sequence[MemoryEntry] | None = None
    ) -> dict[str, dict[str, Any]]: ...
    def awaiting(self, agent: AgentArg) -> list[dict[str, Any]]: ...
    def summariser(self, agent: AgentArg) -> tuple[Summariser | None, str, list[str]]: ...


# Here: a workspace on this machine ---------------------------------------------------------


class Here:
    """A workspace and its settings; its memory, database and loop each opened once."""

    global_memory = True
    lost_title = "Database"
    nearby = True

    def __init__(
        self,
        workspace: Workspace,
        settings: Settings,
        memory: MemoryService | None = None,
        loop: AgentLoop | None = None,
    ) -> None:
        self.workspace = workspace
        self.settings = settings
        self._memory = memory
        self._loop = loop

    @property
    def root(self) -> Path:
        return self.workspace.root

    @property
    def memory(self) -> MemoryService:
        if self._memory is None:
            from oryxtui.memory.service import MemoryService

            self._memory = MemoryService.open(self.workspace, self.settings)
        return self._memory

    @cached_property
    def database(self) -> Conversations:
        """Where its conversations (and the tables beside them) are: oryxos.db or the shared
        database."""
        from oryxtui.agent.sessions import open_conversations

        return open_conversations(self.workspace, self.settings)

    def list_agents(self) -> list[str]:
        return self.workspace.list_agents()

    def known_agents(self) -> list[str]:
        here = self.workspace.list_agents()
        if self.settings.database.url is None:
            return here
        return sorted({*here, *self.memory.stored_agents()})

    def memories(self) -> list[str | None]:
        return self.workspace.memories()

    def closest_agents(self, agent: str) -> list[str]:
        return self.workspace.closest_agents(agent)

    def read_agent(self, agent: str) -> AgentFacts | None:
        return self.workspace.read_agent(agent)

    def create_agent(self, agent: str) -> None:
        self.workspace.create_agent(agent)

    def within_reach(self, agent: str) -> None:
        return None  # a workspace reaches all its agents

    def check_write_target(self, path: Path) -> None:
        self.workspace.check_write_target(path)

    def servers(self) -> tuple[dict[str, str | None], dict[str, list[str]]]:
        return {}, {}

    def watched(self) -> Workspace:
        return self.workspace

    def listened(self) -> Listened | None:
        """A shared database announces every change; files are watched instead."""
        from oryxtui.memory.store import Listened

        store = self.memory.store
        return store if isinstance(store, Listened) else None

    @cached_property
    def episodes(self) -> EpisodeStore:
        """Its past conversations (no loop, model or NumPy loaded to list or search them)."""
        from oryxtui.agent.episodes import episode_store

        return episode_store(self.database, self.settings)

    def loop(self) -> AgentLoop:
        if self._loop is None:
            from oryxtui.agent.loop import AgentLoop
            from oryxtui.agent.sessions import SessionStore

            sessions = SessionStore(self.database)
            self._loop = AgentLoop(self.workspace, self.settings, self.memory, sessions)
        return self._loop

    def turn_view(self, session_id: str, turn: int) -> dict[str, Any] | None:
        """What the model received in a turn of oryxtui's loop (None: none recorded)."""
        from oryxtui.agent.turns import TurnRecorder, turn_view

        return turn_view(TurnRecorder(self.database), session_id, turn)

    def origins(
        self, agent: AgentArg, entries: Sequence[MemoryEntry] | None = None
    ) -> dict[str, dict[str, Any]]:
        """Where each entry of the agent's memory (or those given) came from, by entry id."""
        from oryxtui.agent.provenance import Provenance

        if entries is None:
            snapshot = self.memory.snapshot(agent)
            entries = [*snapshot.core, *snapshot.archival]
        return Provenance(self.memory, self.database).origins(agent, list(entries))

    def awaiting(self, agent: AgentArg) -> list[dict[str, Any]]:
        from oryxtui.agent.provenance import awaiting_json

        return awaiting_json(self.memory, self.episodes, agent)

    def summariser(self, agent: AgentArg) -> tuple[Summariser | None, str, list[str]]:
        from oryxtui.agent.consolidation import summariser_for

        return summariser_for(self.workspace, self.settings, agent)


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
