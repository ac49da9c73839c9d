"""Here: a workspace on this machine, with its settings; its memory, database and loop each
opened once."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from oryxtui.agent.episodes import EpisodeStore
    from oryxtui.agent.loop import AgentLoop
    from oryxtui.agent.sessions import Conversations
    from oryxtui.config import Settings
    from oryxtui.memory.digest import Summariser
    from oryxtui.memory.format import MemoryEntry
    from oryxtui.memory.service import MemoryService
    from oryxtui.memory.store import Listened
    from oryxtui.workspace import AgentName as AgentArg
    from oryxtui.workspace import Workspace


if TYPE_CHECKING:
    from oryxtui.places.protocols import AgentFacts


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

    def hang_up(self) -> None:
        """Nothing to end: a workspace is read here, not over a network."""

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
