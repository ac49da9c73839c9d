"""Consolidation: a digest of the archival entries outside the injected window, written as the
newest entry (see `digest.plan`)."""

from __future__ import annotations

from contextlib import nullcontext
from typing import TYPE_CHECKING

from oryxtui.errors import UsageError
from oryxtui.memory.format import TIME_FORMAT, Scope
from oryxtui.memory.service.base import FROM_CONTEXT, AgentArg, ServiceBase
from oryxtui.memory.store import Recorded, Shared

if TYPE_CHECKING:
    from oryxtui.memory.digest import Digest, Summariser


class Consolidating(ServiceBase):
    """Digests of what the window no longer holds (nothing deleted)."""

    def consolidate(
        self,
        agent: AgentArg,
        dry_run: bool = False,
        summarise: Summariser | None = None,
        method: str | None = None,
        min_entries: int = 1,
    ) -> Digest | None:
        """The next digest (see `digest.plan`; labelled `method`, else extractive): written as
        the newest archival entry unless `dry_run`; None when fewer than `min_entries` entries
        outside the window are uncovered. Nothing is deleted: the covered entries stay, and
        stay recallable."""
        store = self.store
        if not isinstance(store, Recorded):
            raise UsageError(f"The {self.backend} backend keeps its own memory: no digests.")
        name = self.resolve_agent(agent)
        # Where several hosts may consolidate one memory at once, the planning and the write
        # are one at a time (a database lock): one digest per range, never two.
        guard = (
            store.exclusive(name, "digest")
            if isinstance(store, Shared) and not dry_run
            else nullcontext()
        )
        with guard:
            return self._consolidate(store, name, dry_run, summarise, method, min_entries)

    def _consolidate(
        self,
        store: Recorded,
        name: str | None,
        dry_run: bool,
        summarise: Summariser | None,
        method: str | None,
        min_entries: int,
    ) -> Digest | None:
        from oryxtui.memory.digest import EXTRACTIVE, plan  # (a save never imports digests)

        snapshot = self.snapshot(name)
        core, lines = [e.line for e in snapshot.core], list(snapshot.archival_lines())

        def window_with(line: str) -> int:
            read = store.memory_read({Scope.CORE: core, Scope.ARCHIVAL: [*lines, line]})
            return self.window(read).start

        stamp = self.clock().strftime(TIME_FORMAT)
        digest = plan(
            snapshot.archival,
            snapshot.coverage,
            snapshot.window_start,
            window_with,
            stamp,
            self.consolidation.max_chars,
            summarise,
            method or EXTRACTIVE,
            min_entries,
        )
        if digest is not None and not dry_run:
            self.save(name, digest.content, Scope.ARCHIVAL, op="digest")
        return digest

    def uncovered(self, agent: AgentArg = FROM_CONTEXT) -> int:
        """How many archival entries outside the injected window no digest covers."""
        snapshot = self.snapshot(self.resolve_agent(agent))
        return len(snapshot.coverage.uncovered(len(snapshot.archival), snapshot.window_start))
