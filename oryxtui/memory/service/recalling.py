"""Recall: the agent's tool, the dashboard's search across agents, and the vector index."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from oryxtui.errors import UsageError
from oryxtui.memory.admission import searchable
from oryxtui.memory.format import MemoryEntry
from oryxtui.memory.service.base import FROM_CONTEXT, AgentArg, ServiceBase

if TYPE_CHECKING:
    from oryxtui.memory.recall.results import IndexStatus, Recall


class Recalling(ServiceBase):
    """Finding what a memory holds."""

    def recall(self, agent: AgentArg, keyword: str, semantic: bool = True) -> Recall:
        """Archival entries for `keyword`: ranked (hybrid), by the store (mem0), or upstream's
        keyword recall. `semantic=False` skips the semantic route (answers as you type)."""
        from oryxtui.memory.recall.results import Hit, Recall

        if not searchable(keyword).strip():
            raise UsageError("Nothing to recall: the keyword is empty.")
        name = self.resolve_agent(agent)
        engine = self.engine
        if engine is not None:
            return engine.recall(name, keyword, semantic)
        found = self.store.search(name, keyword)
        mode = "delegated" if self.store.ranked else "keyword"
        return Recall(keyword, mode, [Hit(entry) for entry in found])

    def find_core(self, agent: AgentArg, query: str) -> list[MemoryEntry]:
        """Core entries holding `query` (any case), or all its words in any order: what the
        dashboard's recall shows beside the archival hits. (Recall itself, the agent's tool,
        never searches core, as upstream: core is always in the prompt.)"""
        from oryxtui.memory.recall.results import core_holding

        return core_holding(self.snapshot(self.resolve_agent(agent)).core, query)

    def recall_across(
        self, agents: Sequence[str | None], keyword: str, semantic: bool = True
    ) -> Recall:
        """Recall from each of `agents` (None: the global memory), every hit labelled with its
        agent: ranked recall merges them best first, keyword recall gives them agent by agent.
        An agent whose memory cannot be read is left out (its notice says why)."""
        from oryxtui.memory.recall.results import recall_across

        top_k = self.recall_setup.settings.top_k if self.recall_setup is not None else None
        return recall_across(self.recall, agents, keyword, semantic, top_k)

    def index_status(self, agent: AgentArg = FROM_CONTEXT) -> IndexStatus | None:
        """How much of the agent's archival memory has vectors (None: no embedder here)."""
        engine = self.engine
        return engine.status(self.resolve_agent(agent)) if engine is not None else None

    def sync_index(
        self,
        agent: AgentArg = FROM_CONTEXT,
        rebuild: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> IndexStatus | None:
        """Embed the entries the index lacks and drop the rows of removed ones."""
        engine = self.engine
        if engine is None:
            return None
        return engine.sync(self.resolve_agent(agent), rebuild, progress)
