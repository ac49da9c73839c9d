"""Review: what agents (and outside writers) wrote that no person has approved yet, and the
changes held for review (an agent's under `[memory.review] hold`, an MCP client's under
`[mcp] hold`): saves, edits, moves and deletes alike. The state is kept in the history —
`review` (approved), `hold` (a change waiting outside the memory), `discard` (a held change
rejected), `reject` (an entry rejected: removed) — so it survives restarts and is the same
for every process on a workspace or database."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from oryxtui.errors import StaleEntry, UsageError
from oryxtui.memory.format import MemoryEntry, entry_id
from oryxtui.memory.history import Actor, Key, Record, change, is_mcp, origins
from oryxtui.memory.service.base import FROM_CONTEXT, AgentArg, ServiceBase
from oryxtui.memory.store import Recorded

REVIEWED_ACTORS = ("agent", "outside")  # whose changes wait for a person's approval …


def reviewed(actor: str) -> bool:
    """… with every MCP client's (mcp:<name>)."""
    return actor in REVIEWED_ACTORS or is_mcp(actor)


class Approved(list[MemoryEntry]):
    """The entries an approval made (a delete: the entry removed) and, as `not_made`, the
    held changes it could not make once others had landed — (id, why) — which wait on."""

    def __init__(
        self, made: Sequence[MemoryEntry] = (), not_made: Sequence[tuple[str, str]] = ()
    ) -> None:
        super().__init__(made)
        self.not_made = list(not_made)

    def not_made_json(self) -> list[dict[str, str]]:
        return [{"id": held, "reason": why} for held, why in self.not_made]


@dataclass(frozen=True)
class Awaiting:
    """One change awaiting review: an entry written that no person approved (in the memory),
    or a change held outside it — a save, or the edit, move or delete a held writer proposed
    — with the record that wrote or held it (who, when, an agent's session and turn)."""

    entry: MemoryEntry  # as it is, or as it would be (a delete: the entry it removes)
    record: Record
    held: bool = False
    told_id: str | None = None  # a server's id for it (its lines rebuilt here may differ)

    @property
    def proposes(self) -> str:
        """The change: "save" (written, or held), or the held "edit", "move" or "delete"."""
        return self.record.proposes or "save"

    @property
    def was(self) -> MemoryEntry | None:
        """The entry a held edit, move or delete changes, as it was when proposed."""
        return self.record.removed[0] if self.record.proposes else None

    @property
    def id(self) -> str:
        """What approving or rejecting names: the entry's id, or a held change's own."""
        if self.told_id is not None:
            return self.told_id
        if self.was is None:
            return self.entry.id
        return proposal_id(self.record.n, self.was, self.entry)

    def to_json(self, agent: str | None) -> dict[str, object]:
        record = self.record
        found: dict[str, object] = {
            "agent": agent,
            "scope": self.entry.scope.value,
            **self.entry.to_json(),
            "id": self.id,
            "held": self.held,
            "proposes": self.proposes,
            "by": record.actor,
            "op": record.op,
            "change": record.n,
            "at": record.time,
            "session": record.session,
            "turn": record.turn,
        }
        if self.was is not None:
            found["was"] = {"scope": self.was.scope.value, **self.was.to_json()}
        return found


def proposal_id(n: int, was: MemoryEntry, entry: MemoryEntry) -> str:
    """A held change's id: its record's, and what it changes into what."""
    return entry_id(entry.scope, f"{n}\n{was.scope.value}\n{was.line}\n{entry.line}")


def review_state(records: Sequence[Record]) -> tuple[list[Record], dict[Key, int]]:
    """The holds still waiting (oldest first), and when each line was last approved. A review
    or discard names the holds it settles; one from before it did is matched by line."""
    waiting: dict[int, Record] = {}
    approved: dict[Key, int] = {}
    for record in records:
        if record.op == "hold":
            waiting[record.n] = record
        elif record.op in ("discard", "review"):
            for n in record.settles:
                waiting.pop(n, None)
            if not record.settles:
                lines = record.before if record.op == "discard" else record.after
                for key in lines:
                    saves = (n for n, r in waiting.items() if not r.proposes and r.after == (key,))
                    first = next(saves, None)
                    if first is not None:
                        del waiting[first]
            if record.op == "review":
                for key in record.after:
                    approved[key] = record.n
    return list(waiting.values()), approved


def held_items(holds: Sequence[Record]) -> list[Awaiting]:
    return [
        Awaiting((hold.added or hold.removed)[0], hold, held=True)
        for hold in holds
        if hold.after or hold.before
    ]


class Reviewing(ServiceBase):
    def _reviewed_store(self) -> Recorded:
        return self._recorded(", so nothing to review is known; its server has its own")

    def awaiting_review(self, agent: AgentArg = FROM_CONTEXT) -> list[Awaiting]:
        """What agents and outside writers wrote into this memory that no one approved, and
        the changes held for review; newest first."""
        store = self._reviewed_store()
        name = self.resolve_agent(agent)
        store.reconcile(name)
        records = store.changes(name).records
        holds, approved = review_state(records)
        snapshot = self.snapshot(name)
        writers = origins(records)
        waiting: list[Awaiting] = []
        for entry in [*snapshot.core, *snapshot.archival]:
            writer = writers.get((entry.scope, entry.line))
            if writer is None or not reviewed(writer.actor):
                continue
            if approved.get((entry.scope, entry.line), -1) < writer.n:
                waiting.append(Awaiting(entry, writer))
        waiting += held_items(holds)
        waiting.sort(key=lambda item: item.record.n, reverse=True)
        return waiting

    def held(self, agent: AgentArg = FROM_CONTEXT) -> list[Awaiting]:
        """The changes held for review: never in the memory, nor in any prompt, until
        approved."""
        store = self.store
        if not isinstance(store, Recorded):
            return []
        return held_items(review_state(store.changes(self.resolve_agent(agent)).records)[0])

    def _chosen(self, agent: str | None, ids: Sequence[str] | None) -> list[Awaiting]:
        waiting = self.awaiting_review(agent)
        if ids is None:
            return waiting
        by_id = {item.id: item for item in waiting}
        unknown = [i for i in ids if i not in by_id]
        if unknown:
            raise StaleEntry(
                f"Nothing awaiting review has the id {', '.join(unknown)} (approved, rejected or "
                "changed since it was listed); nothing was done — list them again."
            )
        return [by_id[i] for i in dict.fromkeys(ids)]

    def approve(self, agent: AgentArg, ids: Sequence[str] | None = None) -> Approved:
        """Approve these (None: everything awaiting review of the agent). A held change is
        made now, as its writer's (a save with its time kept; an edit, move or delete only if
        the entry is still as it was when proposed — else nothing is done); then one `review`
        record marks them all. Returns the approved entries (a delete: the entry removed), and
        the held changes that could not be made once an earlier one was (they wait on)."""
        store = self._reviewed_store()
        name = self.resolve_agent(agent)
        chosen = self._chosen(name, ids)
        if not chosen:
            return Approved()
        self._still_as_proposed(name, chosen)
        made: list[Awaiting] = []
        not_made: list[tuple[str, str]] = []
        for item in chosen:
            try:
                if item.held:
                    self._apply(store, name, item)
            except StaleEntry as exc:  # one made before it took its entry (two held replaces)
                not_made.append((item.id, str(exc)))
                continue
            made.append(item)
        if not made:
            raise StaleEntry(not_made[0][1])  # nothing landed: a refusal
        kept = [item.entry for item in made if item.proposes != "delete"]
        settles = tuple(item.record.n for item in made if item.held)
        store.note(name, replace(change("review", self.by, after=kept), settles=settles))
        return Approved([item.entry for item in made], not_made)

    def _still_as_proposed(self, name: str | None, chosen: Sequence[Awaiting]) -> None:
        """Compare before set: every held edit, move or delete approved finds its entry as it
        was proposed, or none is made (one sentence says which changed)."""
        proposed = [item for item in chosen if item.held and item.was is not None]
        if not proposed:
            return
        snapshot = self.snapshot(name)
        present = {entry.id for entry in [*snapshot.core, *snapshot.archival]}
        for item in proposed:
            assert item.was is not None
            if item.was.id not in present:
                raise StaleEntry(
                    f"The held {item.proposes} {item.id} is of an entry that changed since it "
                    f"was proposed ({item.was.content[:60]!r}); nothing was approved — reject "
                    "it, and make the change again if it is still wanted."
                )

    def _apply(self, store: Recorded, name: str | None, item: Awaiting) -> None:
        """A held change made, as its writer's, through the one entry path."""
        hold = item.record
        writer = Actor(hold.actor, hold.session, hold.turn, hold.via)
        what = f"the held {item.proposes}"
        if item.was is None:
            admitted = self.admission.entries([item.entry], what)
            store.bring_back(name, admitted, writer, "save")
            return
        new = None if item.proposes == "delete" else self.admission.entries([item.entry], what)[0]
        was = item.was
        try:
            self._editable().replace(name, was.id, lambda old: new, item.proposes, writer)
        except StaleEntry:
            raise StaleEntry(
                f"The held {item.proposes} {item.id} is of an entry that changed since it was "
                "proposed; it was not made — reject it, and make the change again if it is "
                "still wanted."
            ) from None

    def reject(self, agent: AgentArg, ids: Sequence[str]) -> list[MemoryEntry]:
        """Reject these: an entry in the memory is removed (recorded as `reject`); a held
        change is discarded (never made). Returns the rejected entries."""
        store = self._reviewed_store()
        name = self.resolve_agent(agent)
        if not ids:
            raise UsageError("Name the entries to reject (their ids from `memory review`).")
        chosen = self._chosen(name, ids)
        held = [item for item in chosen if item.held]
        if held:
            discard = change("discard", self.by, before=[item.entry for item in held])
            store.note(name, replace(discard, settles=tuple(item.record.n for item in held)))
        for item in chosen:
            if not item.held:
                self._remove_reviewed(name, item.entry.id)
        return [item.entry for item in chosen]

    def _remove_reviewed(self, name: str | None, entry_id: str) -> None:
        self._editable().replace(name, entry_id, lambda old: None, "reject", self.by)
