"""The selected agent's memory: a banner, the core pane and the archival pane. It owns what
they show, and marks the entries that arrived since the last read."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.timer import Timer
from textual.widgets import Static

from oryxtui.memory import MemoryEntry, MemorySnapshot, Scope
from oryxtui.tui.overview import AgentMemory, AgentSummary, agent_label
from oryxtui.tui.text import display_text
from oryxtui.tui.widgets.memory_pane import ArchivalPane, MemoryPane

FRESH_SECONDS = 2.5


def arrived_entries(old: MemorySnapshot, new: MemorySnapshot) -> tuple[set[int], set[int]]:
    """Indexes of the core and archival entries in `new` that `old` did not have."""
    old_core = {entry.line for entry in old.core}
    core = {index for index, entry in enumerate(new.core) if entry.line not in old_core}
    before, after = len(old.archival), len(new.archival)
    old_lines, new_lines = old.archival_lines(), new.archival_lines()
    appended = after > before and (before == 0 or old_lines[before - 1] == new_lines[before - 1])
    return core, set(range(before, after)) if appended else set()


def blanked_out(previous: AgentMemory | None, current: AgentMemory) -> bool:
    """The same agent's file went missing or empty after it had entries."""
    old, new = previous.snapshot if previous else None, current.snapshot
    return (
        old is not None
        and new is not None
        and new.blank_file
        and previous is not None
        and previous.summary.name == current.summary.name
        and bool(len(old.core) or len(old.archival))
    )


def banner_text(summary: AgentSummary, snapshot: MemorySnapshot | None) -> Text:
    if summary.lost_count:
        count = summary.lost_count
        return Text(
            f"⚠ {count} entr{'y' if count == 1 else 'ies'} saved by oryxtui "
            "were removed by an outside edit — R restores them, A accepts the removal."
        )
    if summary.error:
        return Text(f"⚠ {display_text(summary.error)}")
    if snapshot is not None and snapshot.partial is not None:
        size = snapshot.partial.file_bytes / (1 << 20)
        shown = len(snapshot.archival)
        if summary.archival_count is None:
            older = "counting the older ones…"
        else:
            older = f"{max(0, summary.archival_count - shown):,} older ones stay on disk"
        return Text(
            f"MEMORY.md is {size:,.0f} MB: showing the newest {shown:,} archival "
            f"entries; {older}. Filter (/) searches these, recall (r) searches all."
        )
    if not summary.has_definition:
        return Text(
            f"{summary.name} has no AGENT.md: only its memory is here "
            "(the prompt uses the default identity)."
        )
    return Text(display_text(summary.description) or agent_label(summary.name))


class MemoryView(Vertical):
    """Attributes down: the screen hands it an agent's memory to show."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.shown: AgentMemory | None = None
        self._fresh_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        yield Static("", id="agent-banner", markup=False)
        yield MemoryPane("Core", "core", id="core-pane")
        yield ArchivalPane(id="archival-pane")

    @property
    def core(self) -> MemoryPane:
        return self.query_one("#core-pane", MemoryPane)

    @property
    def archival(self) -> ArchivalPane:
        return self.query_one(ArchivalPane)

    @property
    def memory_file(self) -> Path | None:
        """The shown memory's MEMORY.md, or None when it is not kept in a file."""
        snapshot = self.shown.snapshot if self.shown else None
        return snapshot.memory_file if snapshot is not None else None

    @property
    def lost_count(self) -> int:
        return self.shown.summary.lost_count if self.shown else 0

    def focus_entries(self) -> None:
        self.archival.view.focus()

    def reveal(self, entry: MemoryEntry) -> bool:
        """Focus the entry's pane with the cursor on it (a filter that hides it is cleared);
        False if it is not shown (it changed since it was found)."""
        pane = self.core if entry.scope is Scope.CORE else self.archival
        if isinstance(pane, ArchivalPane) and pane.keyword and not pane.view.point_at(entry.line):
            pane.close_filter()
        pane.view.focus()
        return pane.view.point_at(entry.line)

    def show(self, memory: AgentMemory) -> AgentMemory:
        """Show this memory; returns what is shown (the last good content if the file just
        went blank: the next write brings it back)."""
        previous = self.shown
        if blanked_out(previous, memory):
            assert previous is not None
            note = "MEMORY.md is missing or empty on disk; showing the content last read."
            memory = AgentMemory(replace(previous.summary, error=note), previous.snapshot)
        self.shown = memory
        summary, snapshot = memory.summary, memory.snapshot
        self._show_banner()
        if snapshot is None:
            self.core.show([], set())
            self.archival.view.show([])
            return memory
        fresh_core: set[int] = set()
        fresh_archival: set[int] = set()
        same_agent = previous is not None and previous.summary.name == summary.name
        old = previous.snapshot if previous is not None and same_agent else None
        if old is not None:
            fresh_core, fresh_archival = arrived_entries(old, snapshot)
            if fresh_core or fresh_archival:
                if self._fresh_timer is not None:
                    self._fresh_timer.stop()
                self._fresh_timer = self.set_timer(FRESH_SECONDS, self._clear_fresh)
            # Entries still flashing from an earlier reload keep flashing (memory only grows).
            fresh_core |= {i for i in self.core.view.fresh if i < len(snapshot.core)}
            fresh_archival |= {i for i in self.archival.view.fresh if i < len(snapshot.archival)}
        self.core.show(snapshot.core, fresh_core, snapshot.core_duplicates)
        self.archival.show_snapshot(snapshot, fresh_archival, self._of_all(), old is not None)
        return memory

    def count_all(self, summary: AgentSummary) -> None:
        """A big file's census is in for the shown agent."""
        shown = self.shown
        if shown is None or shown.summary.name != summary.name or shown.snapshot is None:
            return
        self.shown = AgentMemory(summary, shown.snapshot)
        self._show_banner()
        self.archival.count_all(self._of_all())

    def _of_all(self) -> int | None:
        """How many archival entries a big file holds (-1: still counting); None if whole."""
        shown = self.shown
        if shown is None or shown.snapshot is None or shown.snapshot.partial is None:
            return None
        counted = shown.summary.archival_count
        return -1 if counted is None else counted

    def _show_banner(self) -> None:
        assert self.shown is not None
        summary = self.shown.summary
        banner = self.query_one("#agent-banner", Static)
        banner.set_class(bool(summary.error or summary.lost_count), "error")
        banner.update(banner_text(summary, self.shown.snapshot))

    def _clear_fresh(self) -> None:
        for pane in (self.core, self.archival):
            pane.view.fresh = set()
            pane.view.refresh()
