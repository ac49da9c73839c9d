"""The selected agent's memory: a banner, the core pane and the archival pane. It owns what
they show, marks the entries that arrived since the last read, and changes them (edit, move,
delete, repeats, restore, the file in an editor)."""

from __future__ import annotations

import os
import shlex
import subprocess
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.app import ComposeResult, SuspendNotSupported
from textual.containers import Vertical
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Static

from oryxtui.errors import OryxError
from oryxtui.memory import MemoryEntry, MemorySnapshot, Scope
from oryxtui.phrases import agent_label, brought_back, entries, were
from oryxtui.tui.overview import AgentMemory, AgentSummary
from oryxtui.tui.screens.change_entry import ConfirmScreen, EditEntryScreen
from oryxtui.tui.text import display_text, tell
from oryxtui.tui.widgets.entry_view import EntryView
from oryxtui.tui.widgets.memory_pane import ArchivalPane, MemoryPane
from oryxtui.workspace import AgentName

FRESH_SECONDS = 2.5


def arrived_entries(old: MemorySnapshot, new: MemorySnapshot) -> tuple[set[int], set[int]]:
    """Indexes of the core and archival entries in `new` that `old` did not have."""
    old_core = {entry.line for entry in old.core}
    core = {index for index, entry in enumerate(new.core) if entry.line not in old_core}
    before, after = len(old.archival), len(new.archival)
    old_lines, new_lines = old.archival_lines(), new.archival_lines()
    appended = after > before and (before == 0 or old_lines[before - 1] == new_lines[before - 1])
    return core, set(range(before, after)) if appended else set()


def cut_off(previous: AgentMemory | None, current: AgentMemory) -> bool:
    """The same agent's memory, shown before, is in a database that cannot be reached now."""
    return (
        current.summary.unreachable
        and previous is not None
        and previous.snapshot is not None
        and previous.summary.name == current.summary.name
    )


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


NO_EDITOR_SET = (
    "Opened {editor}, as neither $VISUAL nor $EDITOR is set; set one to choose another "
    "(e.g. export EDITOR=nano)."
)

if TYPE_CHECKING:
    from oryxtui.places import Place
    from oryxtui.tui.screens.recall import Found


def chosen_editor() -> str:
    """$VISUAL, else $EDITOR, else vi (what `e` opens)."""
    return os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"


def banner_text(summary: AgentSummary, snapshot: MemorySnapshot | None) -> Text:
    if summary.lost_count:
        count = summary.lost_count
        return Text(
            f"⚠ {entries(count)} saved by oryxtui {were(count)} removed by an outside edit — "
            "R restores them, A accepts the removal."
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
    """Attributes down: the screen hands it an agent's memory to show. Messages up: `Steered`
    when it changed that memory (the screen reads it again), `Wanted` when an entry to reveal
    is another agent's (the screen selects that agent)."""

    @dataclass
    class Steered(Message):
        agent: AgentName

    @dataclass
    class Wanted(Message):
        agent: AgentName

    def __init__(self, place: Place, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.place = place
        self.service = place.memory
        self.shown: AgentMemory | None = None
        self._fresh_timer: Timer | None = None
        self._waiting: tuple[AgentName, MemoryEntry] | None = None  # to reveal once shown

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

    def open_filter(self) -> None:
        self.archival.open_filter()

    def reveal_found(self, found: Found | None) -> None:
        """Reveal what recall found (None: nothing picked): now if its agent's memory is
        shown, else once it is (asked for with `Wanted`)."""
        if found is None:
            return
        agent = found.agent
        self._waiting = (agent, found.entry)
        if self.shown is not None and self.shown.summary.name == agent:
            self._reveal_waiting()
        else:
            self.post_message(self.Wanted(agent))

    def _reveal_waiting(self) -> None:
        waiting, self._waiting = self._waiting, None
        if waiting is not None and not self.reveal(waiting[1]):
            tell(self, "That entry changed since it was found; recall again.", title="Recall")

    def show(self, memory: AgentMemory) -> AgentMemory:
        """Show this memory; returns what is shown (the last good content if the file just
        went blank: the next write brings it back). An entry waiting to be revealed in it is,
        after this frame."""
        if self._waiting is not None and self._waiting[0] == memory.summary.name:
            self.call_after_refresh(self._reveal_waiting)
        previous = self.shown
        if blanked_out(previous, memory):
            assert previous is not None
            note = "MEMORY.md is missing or empty on disk; showing the content last read."
            memory = AgentMemory(replace(previous.summary, error=note), previous.snapshot)
        elif cut_off(previous, memory):
            assert previous is not None
            note = f"{memory.summary.error} Showing the content last read."
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

    # Steering: the entry at the cursor of the focused pane (else the archival pane's) ---------

    def entry_at_cursor(self) -> MemoryEntry | None:
        focused = self.screen.focused
        view = focused if isinstance(focused, EntryView) else self.archival.view
        return view.entry_at_cursor()

    def _steer(self) -> tuple[AgentName, MemoryEntry] | None:
        entry = self.entry_at_cursor()
        if self.shown is None or entry is None:
            return None
        return self.shown.summary.name, entry

    def _changed(self, agent: AgentName, done: str, entry: MemoryEntry | None) -> None:
        if entry is not None:
            self.post_message(self.Steered(agent))
            tell(self, f"{done} ({entry.scope.value}).", title="Memory")

    def at_cursor(self) -> tuple[AgentName, MemoryEntry] | None:
        """The shown agent and the entry at the focused pane's cursor (None: nothing there)."""
        return self._steer()

    def edit_entry(self) -> None:
        if (steer := self._steer()) is None:
            return
        agent, entry = steer
        edit = partial(self.service.edit, agent, entry.id)
        self.app.push_screen(
            EditEntryScreen(entry, edit), partial(self._changed, agent, "Entry edited")
        )

    def replace_entry(self) -> None:
        """The entry replaced by what is true now: a new entry, stamped now; the old one
        leaves the memory and stays in the history."""
        if (steer := self._steer()) is None:
            return
        agent, entry = steer

        def replace(text: str) -> MemoryEntry:
            return self.service.replace(agent, entry.id, text)[1]

        self.app.push_screen(
            EditEntryScreen(entry, replace, replacing=True),
            partial(self._changed, agent, "Entry replaced"),
        )

    def delete_entry(self) -> None:
        if (steer := self._steer()) is None:
            return
        agent, entry = steer
        delete = partial(self.service.delete, agent, entry.id)
        title = f"Delete this {entry.scope.value} entry?"
        self.app.push_screen(
            ConfirmScreen(title, entry.line, delete), partial(self._changed, agent, "Entry deleted")
        )

    def move_entry(self) -> None:
        if (steer := self._steer()) is not None:
            self._move(*steer)

    @work(thread=True, exclusive=True, exit_on_error=False, group="move")
    def _move(self, agent: AgentName, entry: MemoryEntry) -> None:
        target = Scope.ARCHIVAL if entry.scope is Scope.CORE else Scope.CORE
        try:
            moved = self.service.move(agent, entry.id, target)
        except OryxError as exc:
            tell(self, str(exc), title="Not moved", severity="error")
            return
        self.app.call_from_thread(self._changed, agent, f"Moved to {target.value}", moved)

    def remove_duplicates(self) -> None:
        snapshot = self.shown.snapshot if self.shown is not None else None
        if self.shown is None or snapshot is None:
            return
        agent = self.shown.summary.name
        count = len(snapshot.core_duplicates) + len(snapshot.archival_duplicates)
        if not count:
            tell(self, "No repeated entries here.", title="Duplicates")
            return
        title = f"Remove {entries(count, 'repeated')}?"
        detail = (
            "Entries with the same words (any case or spacing) as an older one of their section "
            "are removed; the oldest of each stays."
        )
        remove = partial(self.service.remove_duplicates, agent)
        self.app.push_screen(ConfirmScreen(title, detail, remove), partial(self._deduped, agent))

    def _deduped(self, agent: AgentName, removed: list[MemoryEntry] | None) -> None:
        if removed is not None:
            self.post_message(self.Steered(agent))
            tell(self, f"Removed {entries(len(removed), 'repeated')}.", title="Duplicates")

    def settle_lost(self, accept: bool) -> None:
        """Restore what an outside edit removed, or accept the removal (forget it)."""
        if self.shown is not None and self.lost_count:
            self._settle(self.shown.summary.name, accept)

    @work(thread=True, exclusive=True, exit_on_error=False, group="restore")
    def _settle(self, agent: AgentName, accept: bool) -> None:
        try:
            settled = (self.service.accept if accept else self.service.restore)(agent)
        except OryxError as exc:
            tell(self, str(exc), severity="error")
            return
        count = entries(len(settled))
        message = (
            f"Accepted the removal of {count}." if accept else brought_back("Restored", settled)
        )
        tell(self, message, title="Accept" if accept else "Restore")
        self.post_message(self.Steered(agent))

    def edit_file(self) -> None:
        """The shown memory's MEMORY.md in $VISUAL or $EDITOR; read again when it closes."""
        memory_file = self.memory_file
        if self.shown is None or memory_file is None:
            tell(self, "This memory is not kept in a MEMORY.md file.", severity="warning")
            return
        try:
            self.place.check_write_target(memory_file)  # as a save would
        except OryxError as exc:
            tell(self, str(exc), severity="error")
            return
        editor = chosen_editor()
        try:
            with self.app.suspend():
                subprocess.run([*shlex.split(editor), str(memory_file)], check=False)
        except SuspendNotSupported:
            tell(self, "This terminal cannot hand over to an editor.", severity="warning")
        except OSError as exc:
            tell(self, f"Could not start the editor {editor!r}: {exc.strerror}.", severity="error")
        else:
            if not (os.environ.get("VISUAL") or os.environ.get("EDITOR")):
                tell(self, NO_EDITOR_SET.format(editor=editor), title="Editor")
        self.post_message(self.Steered(self.shown.summary.name))
