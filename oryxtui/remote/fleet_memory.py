"""The memory of every attached server as one, by qualified name (`agent@server`): each call
goes to the server the name names."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from oryxtui.errors import OryxError
from oryxtui.memory.digest import EXTRACTIVE, Digest, Summariser
from oryxtui.memory.format import MemoryEntry, Scope
from oryxtui.memory.history.records import Record
from oryxtui.memory.recall.results import Recall, recall_across
from oryxtui.memory.service.currency import Saved, Version
from oryxtui.memory.service.reviewing import Approved
from oryxtui.memory.snapshot import MemorySnapshot
from oryxtui.memory.store import Watch
from oryxtui.remote.memory import RemoteMemory, RemoteStore
from oryxtui.remote.names import split

if TYPE_CHECKING:
    from oryxtui.remote.fleet import Fleet


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

    def approve(self, agent: str | None, ids: Sequence[str] | None = None) -> Approved:
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

    # Facts that change ---------------------------------------------------------------------------

    def save_checked(
        self,
        agent: str | None,
        content: str,
        scope: str | Scope | None = "archival",
        related: bool = False,
    ) -> Saved:
        memory, there = self._on(agent)
        return memory.save_checked(there, content, scope, related)

    def replace(
        self, agent: str | None, entry_id: str, content: str
    ) -> tuple[MemoryEntry, MemoryEntry]:
        memory, there = self._on(agent)
        return memory.replace(there, entry_id, content)

    def supersede(self, agent: str | None, old_id: str, new_id: str) -> MemoryEntry:
        memory, there = self._on(agent)
        return memory.supersede(there, old_id, new_id)

    def dismiss(self, agent: str | None, old_id: str, new_id: str) -> None:
        memory, there = self._on(agent)
        memory.dismiss(there, old_id, new_id)

    def suggestions(self, agent: str | None = None) -> list[tuple[MemoryEntry, MemoryEntry, int]]:
        memory, there = self._on(agent)
        return memory.suggestions(there)

    def replaced_versions(self, agent: str | None = None) -> list[Version]:
        memory, there = self._on(agent)
        return memory.replaced_versions(there)

    def as_of_time(self, agent: str | None, moment: datetime) -> tuple[MemorySnapshot, str, int]:
        memory, there = self._on(agent)
        snapshot, block, n = memory.as_of_time(there, moment)
        return replace(snapshot, agent=agent), block, n

    def recall_past(
        self,
        agent: str | None,
        keyword: str,
        as_of: datetime | None = None,
        include_replaced: bool = False,
    ) -> Recall:
        memory, there = self._on(agent)
        return memory.recall_past(there, keyword, as_of, include_replaced)
