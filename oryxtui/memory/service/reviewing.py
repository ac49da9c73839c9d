"""Review: what agents (and outside writers) wrote that no person has approved yet, and the
saves held for review when `[memory.review] hold` is on. The state is kept in the history —
`review` (approved), `hold` (a save waiting outside the memory), `discard` (a held save
rejected), `reject` (an entry rejected: removed) — so it survives restarts and is the same
for every process on a workspace or database."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from oryxtui.errors import StaleEntry, UsageError
from oryxtui.memory.format import MemoryEntry, entry_from_line
from oryxtui.memory.history import Actor, Key, Record, change, is_mcp, origins
from oryxtui.memory.service.base import FROM_CONTEXT, AgentArg, ServiceBase
from oryxtui.memory.store import Recorded

REVIEWED_ACTORS = ("agent", "outside")  # whose changes wait for a person's approval …


def reviewed(actor: str) -> bool:
    """… with every MCP client's (mcp:<name>)."""
    return actor in REVIEWED_ACTORS or is_mcp(actor)


@dataclass(frozen=True)
class Awaiting:
    """One entry awaiting review: as it is (a held one is not in the memory), and the change
    that wrote or held it (who, when, an agent's session and turn)."""

    entry: MemoryEntry
    record: Record
    held: bool = False

    def to_json(self, agent: str | None) -> dict[str, object]:
        record = self.record
        return {
            "agent": agent,
            "scope": self.entry.scope.value,
            **self.entry.to_json(),
            "held": self.held,
            "by": record.actor,
            "op": record.op,
            "change": record.n,
            "at": record.time,
            "session": record.session,
            "turn": record.turn,
        }


def review_state(records: Sequence[Record]) -> tuple[dict[Key, list[Record]], dict[Key, int]]:
    """The held saves still waiting (by line), and when each line was last approved."""
    held: dict[Key, list[Record]] = {}
    approved: dict[Key, int] = {}
    for record in records:
        if record.op == "hold":
            for key in record.after:
                held.setdefault(key, []).append(record)
        elif record.op == "discard":
            for key in record.before:
                if held.get(key):
                    held[key].pop(0)
        elif record.op == "review":
            for key in record.after:
                if held.get(key):
                    held[key].pop(0)
                approved[key] = record.n
    return {key: waiting for key, waiting in held.items() if waiting}, approved


class Reviewing(ServiceBase):
    def _reviewed_store(self) -> Recorded:
        store = self.store
        if not isinstance(store, Recorded):
            raise UsageError(
                f"The {self.backend} backend keeps no history, so nothing to review is known; "
                "its server has its own."
            )
        return store

    def awaiting_review(self, agent: AgentArg = FROM_CONTEXT) -> list[Awaiting]:
        """What agents and outside writers wrote into this memory that no one approved, and
        the saves held for review; newest first."""
        store = self._reviewed_store()
        name = self.resolve_agent(agent)
        store.reconcile(name)
        records = store.changes(name).records
        held, approved = review_state(records)
        snapshot = self.snapshot(name)
        writers = origins(records)
        waiting: list[Awaiting] = []
        for entry in [*snapshot.core, *snapshot.archival]:
            writer = writers.get((entry.scope, entry.line))
            if writer is None or not reviewed(writer.actor):
                continue
            if approved.get((entry.scope, entry.line), -1) < writer.n:
                waiting.append(Awaiting(entry, writer))
        for (scope, line), holds in held.items():
            for hold in holds:
                waiting.append(Awaiting(entry_from_line(line, scope), hold, held=True))
        waiting.sort(key=lambda item: item.record.n, reverse=True)
        return waiting

    def held(self, agent: AgentArg = FROM_CONTEXT) -> list[Awaiting]:
        """The saves held for review: never in the memory, nor in any prompt, until approved."""
        store = self.store
        if not isinstance(store, Recorded):
            return []
        held, _ = review_state(store.changes(self.resolve_agent(agent)).records)
        return [
            Awaiting(entry_from_line(line, scope), hold, held=True)
            for (scope, line), holds in held.items()
            for hold in holds
        ]

    def _chosen(self, agent: str | None, ids: Sequence[str] | None) -> list[Awaiting]:
        waiting = self.awaiting_review(agent)
        if ids is None:
            return waiting
        by_id = {item.entry.id: item for item in waiting}
        unknown = [i for i in ids if i not in by_id]
        if unknown:
            raise StaleEntry(
                f"Nothing awaiting review has the id {', '.join(unknown)} (approved, rejected or "
                "changed since it was listed); nothing was done — list them again."
            )
        return [by_id[i] for i in dict.fromkeys(ids)]

    def approve(self, agent: AgentArg, ids: Sequence[str] | None = None) -> list[MemoryEntry]:
        """Approve these (None: everything awaiting review of the agent). A held save is
        written into the memory now, as its agent's save (its time kept); then one `review`
        record marks them all. Returns the approved entries."""
        store = self._reviewed_store()
        name = self.resolve_agent(agent)
        chosen = self._chosen(name, ids)
        if not chosen:
            return []
        for item in chosen:
            if item.held:
                hold = item.record
                writer = Actor(hold.actor, hold.session, hold.turn, hold.via)
                admitted = self.admission.entries([item.entry], "the held entry")
                store.bring_back(name, admitted, writer, "save")
        entries = [item.entry for item in chosen]
        store.note(name, change("review", self.by, after=entries))
        return entries

    def reject(self, agent: AgentArg, ids: Sequence[str]) -> list[MemoryEntry]:
        """Reject these: an entry in the memory is removed (recorded as `reject`); a held save
        is discarded (never written). Returns the rejected entries."""
        store = self._reviewed_store()
        name = self.resolve_agent(agent)
        if not ids:
            raise UsageError("Name the entries to reject (their ids from `memory review`).")
        chosen = self._chosen(name, ids)
        held = [item.entry for item in chosen if item.held]
        if held:
            store.note(name, change("discard", self.by, before=held))
        for item in chosen:
            if not item.held:
                self._remove_reviewed(name, item.entry.id)
        return [item.entry for item in chosen]

    def _remove_reviewed(self, name: str | None, entry_id: str) -> None:
        from oryxtui.memory.store import Editable

        store = self.store
        if not isinstance(store, Editable):
            raise UsageError(f"The {self.backend} backend cannot remove single entries.")
        store.replace(name, entry_id, lambda old: None, "reject", self.by)
