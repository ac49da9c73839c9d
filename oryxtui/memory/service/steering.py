"""Steering: entries edited, moved and deleted — by hand, or held for review when the writer's
changes wait for a person — and entries an outside edit lost."""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from oryxtui.errors import UsageError
from oryxtui.memory.format import MemoryEntry, Scope, entry_from_line, entry_line, parse_scope
from oryxtui.memory.history import replacement
from oryxtui.memory.service.base import FROM_CONTEXT, AgentArg, ServiceBase
from oryxtui.memory.store import Change, Restorable, no_entry


class Steering(ServiceBase):
    """Changing single entries, each change one write and one history record."""

    def edit(self, agent: AgentArg, entry_id: str, content: str) -> MemoryEntry:
        """The entry's text replaced (its time and scope kept); returns the entry now."""
        clean = self.admission.text(content)
        entry_id = entry_id.strip()

        def edited(old: MemoryEntry) -> MemoryEntry:
            line = entry_line(old.time, clean) if old.time else f"- {clean}"
            return entry_from_line(line, old.scope)

        new = self._replace(agent, entry_id, edited, "edit")[1]
        assert new is not None
        return new

    def move(self, agent: AgentArg, entry_id: str, scope: str | Scope) -> MemoryEntry:
        """The entry moved to the end of the other section, its line (and time) kept."""
        target = parse_scope(scope)

        def moved(old: MemoryEntry) -> MemoryEntry:
            if old.scope is target:
                raise UsageError(f"The entry is already in {target.value}; nothing was changed.")
            return entry_from_line(old.line, target)

        new = self._replace(agent, entry_id.strip(), moved, "move")[1]
        assert new is not None
        return new

    def change(
        self,
        agent: AgentArg,
        entry_id: str,
        content: str | None = None,
        scope: str | Scope | None = None,
    ) -> MemoryEntry:
        """The entry's text replaced and/or the entry moved to `scope`, in one write (its time
        kept); the whole request is checked before anything changes. Returns the entry now."""
        clean = None if content is None else self.admission.text(content)
        target = None if scope is None else parse_scope(scope)
        if clean is None and target is None:
            raise UsageError("Nothing to change: give the new text, the scope, or both.")

        def changed(old: MemoryEntry) -> MemoryEntry:
            to = target or old.scope
            if clean is None and to is old.scope:
                raise UsageError(f"The entry is already in {to.value}; nothing was changed.")
            text = old.content if clean is None else clean
            line = (
                old.line
                if clean is None
                else (entry_line(old.time, text) if old.time else f"- {text}")
            )
            return entry_from_line(line, to)

        new = self._replace(agent, entry_id.strip(), changed, "edit")[1]
        assert new is not None
        return new

    def delete(self, agent: AgentArg, entry_id: str) -> MemoryEntry:
        """The entry removed; returns it as it was."""
        return self._replace(agent, entry_id.strip(), lambda old: None, "delete")[0]

    def remove_duplicates(self, agent: AgentArg) -> list[MemoryEntry]:
        """Entries that repeat an earlier one of their section (same words, any case or
        spacing) removed, the oldest kept; returns the removed ones."""
        name = self.resolve_agent(agent)
        self._not_held(name, "removing duplicates")
        return self._editable().remove_duplicates(name, self.by)

    def _replace(
        self, agent: AgentArg, entry_id: str, change: Change, op: str
    ) -> tuple[MemoryEntry, MemoryEntry | None]:
        """The change made — or, for a writer whose changes wait for review, held as the
        change it would be (the entry as it is now, and as it would become)."""
        name = self.resolve_agent(agent)
        if self.holds_change(self.by, name):
            return self._propose(name, entry_id, change, op)
        return self._editable().replace(name, entry_id, change, op, self.by)

    def _propose(
        self, name: str | None, entry_id: str, change: Change, op: str
    ) -> tuple[MemoryEntry, MemoryEntry | None]:
        store = self._held_store()
        snapshot = self.snapshot(name)
        old = next((e for e in [*snapshot.core, *snapshot.archival] if e.id == entry_id), None)
        if old is None:
            raise no_entry(entry_id)
        self._editable()  # a change that could never be made is refused now, not at approval
        new = change(old)
        proposed = replacement(op, self.by, old, new)
        store.note(name, replace(proposed, op="hold", proposes=proposed.op))
        return old, new

    def _not_held(self, name: str | None, doing: str) -> None:
        """Changes of many entries at once are a person's: a held writer is refused."""
        if self.holds_change(self.by, name):
            raise UsageError(
                f"{doing.capitalize()} waits for no review here, so a writer whose changes are "
                "reviewed cannot do it; nothing was changed — ask a person."
            )

    def lost(self, agent: AgentArg = FROM_CONTEXT) -> list[MemoryEntry]:
        """Entries oryxtui saved that an outside edit removed (only files have outside editors)."""
        store = self.store
        return store.lost(self.resolve_agent(agent)) if isinstance(store, Restorable) else []

    def restore(self, agent: AgentArg = FROM_CONTEXT) -> list[MemoryEntry]:
        """Save the lost entries again, with their original times; returns what was restored."""
        store = self.store
        if not isinstance(store, Restorable):
            return []
        self._not_held(self.resolve_agent(agent), "restoring lost entries")
        what = "the entries to restore"
        admit = partial(self.admission.entries, what=what)
        return store.restore(self.resolve_agent(agent), admit, self.by)

    def accept(self, agent: AgentArg = FROM_CONTEXT) -> list[MemoryEntry]:
        """Accept an outside removal: the lost entries are forgotten, not restored."""
        store = self.store
        if not isinstance(store, Restorable):
            return []
        self._not_held(self.resolve_agent(agent), "accepting a removal")
        return store.accept(self.resolve_agent(agent), self.by)
