"""History: every change to a memory, the memory as of a change, and bringing entries back."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from datetime import datetime

from oryxtui.errors import MemoryWriteError, UsageError
from oryxtui.memory.format import MemoryEntry, entry_id
from oryxtui.memory.history import Record, cleaned
from oryxtui.memory.history import origins as history_origins
from oryxtui.memory.history.timeline import Timeline
from oryxtui.memory.service.base import FROM_CONTEXT, AgentArg, ServiceBase
from oryxtui.memory.snapshot import MemorySnapshot
from oryxtui.memory.store import Recorded
from oryxtui.memory.window import render_context
from oryxtui.phrases import agent_label


class Chronicle(ServiceBase):
    """What changed, when, by whom; and undoing a removal."""

    def newest_change(self, agent: AgentArg = FROM_CONTEXT) -> int | None:
        """The number of the newest record of the agent's history (None: no history)."""
        store = self.store
        if not isinstance(store, Recorded):
            return None
        return store.changes(self.resolve_agent(agent)).last

    def reconcile(self, agent: AgentArg = FROM_CONTEXT) -> list[Record]:
        """Record what another program changed since oryxtui last looked (the watcher calls
        this); returns the records written."""
        store = self.store
        if not isinstance(store, Recorded):
            return []
        return store.reconcile(self.resolve_agent(agent))

    def history(
        self, agent: AgentArg = FROM_CONTEXT, since: datetime | None = None
    ) -> list[Record]:
        """Every change to the agent's memory, newest first (outside changes recorded first);
        with `since`, only those made then or later."""
        store = self._recorded()
        name = self.resolve_agent(agent)
        # A workspace oryxtui may not write to still has a history to read (up to its last
        # record: what changed since cannot be recorded there).
        with contextlib.suppress(MemoryWriteError):
            store.reconcile(name)
        shown = [record for record in store.changes(name).records if record.shown]
        if since is not None:
            floor = since.isoformat(timespec="seconds")
            shown = [r for r in shown if r.time is not None and r.time >= floor]
        return shown[::-1]

    def origins(self, agent: AgentArg = FROM_CONTEXT) -> dict[str, Record]:
        """The change that wrote each entry now in the memory, by the entry's id (entries
        from before the history knew the memory have none). A backend without a history
        (mem0) knows none."""
        store = self.store
        if not isinstance(store, Recorded):
            return {}
        name = self.resolve_agent(agent)
        with contextlib.suppress(MemoryWriteError):
            store.reconcile(name)  # an outside writer's lines are its
        writers = history_origins(store.changes(name).records)
        return {entry_id(scope, line): record for (scope, line), record in writers.items()}

    def as_of(self, agent: AgentArg, n: int) -> tuple[MemorySnapshot, str] | None:
        """The memory right after change `n`, and the memory block it injected (None: from
        before the history knew the memory)."""
        store = self._recorded()
        name = self.resolve_agent(agent)
        timeline = self._timelines.setdefault(name, Timeline())  # one made, whoever races
        lines = timeline.memory_at(store.changes(name).records, n)
        if lines is None:
            return None
        read = store.memory_read(lines)
        window = self.window(read)
        return self._snapshot(name, read), render_context(read.core_block.lines, window)

    def as_of_time(self, agent: AgentArg, moment: datetime) -> tuple[MemorySnapshot, str, int]:
        """The memory as it stood at `moment` (right after the last change made by then), the
        block it injected then, and that change's number."""
        from oryxtui.memory.history.validity import last_change_by

        store = self._recorded()
        name = self.resolve_agent(agent)
        when = moment.isoformat(timespec="seconds")
        records = store.changes(name).records
        n = last_change_by(records, when)
        then = None if n is None else self.as_of(name, n)
        if then is None or n is None:
            first = next((r.time for r in records if r.time is not None), None)
            if first is None:
                raise UsageError(
                    f"The memory of {agent_label(name)} has no history yet (nothing was "
                    "recorded changing it): there is only the memory now, `oryxtui memory show`."
                )
            raise UsageError(
                f"The history of {agent_label(name)} starts at {first.replace('T', ' ')}, after "
                f"{when.replace('T', ' ')}; ask for a moment from then on."
            )
        return *then, n

    def change_record(self, agent: AgentArg, n: int) -> Record:
        """Change `n` of the agent's history (the number `memory log` shows)."""
        name = self.resolve_agent(agent)
        found = next((r for r in self.history(name) if r.n == n), None)
        if found is None:
            raise UsageError(
                f"No change #{n} in the history of {agent_label(name)}; `oryxtui memory log` "
                "lists them."
            )
        return found

    def bring_back(self, agent: AgentArg, record: Record | int) -> list[MemoryEntry]:
        """The entries change `record` removed (or edited away), written again with their
        times, unless they are there; returns those written."""
        store = self._recorded()
        name = self.resolve_agent(agent)
        if isinstance(record, int):
            record = self.change_record(name, record)
        snapshot = self.snapshot(name)
        present = {entry.line for entry in [*snapshot.core, *snapshot.archival]}
        # A moved entry is still there, in its other section: nothing to bring back.
        entries = [cleaned(key) for key in record.before if key[1] not in present]
        admitted = self.admission.entries(entries, f"change #{record.n}")
        return store.bring_back(name, admitted, self.by) if admitted else []

    def import_entries(
        self, agent: AgentArg, entries: Sequence[MemoryEntry], source: str = "the import"
    ) -> tuple[list[MemoryEntry], int]:
        """Entries written into the memory with their scopes and times, in one write, but for
        as many copies of each as are there already (same time and text, either section);
        returns what was written and how many were skipped. One entry the admission refuses
        refuses them all, before anything is written."""
        store = self.store
        if not isinstance(store, Recorded):
            raise UsageError(
                f"The {self.backend} backend cannot take entries with their times; import into "
                "a workspace with the markdown or sqlite backend."
            )
        admitted = self.admission.entries(entries, source)
        name = self.resolve_agent(agent)
        written = store.bring_back(name, admitted, self.by, "import") if admitted else []
        return written, len(entries) - len(written)

    def history_problems(self, agent: AgentArg = FROM_CONTEXT) -> str | None:
        """A sentence about unreadable lines in the history `lost` and `restore` rely on."""
        store = self.store
        if not isinstance(store, Recorded):
            return None
        return store.history_problems(self.resolve_agent(agent))
