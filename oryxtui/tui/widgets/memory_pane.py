"""The core and archival panes: a titled entry view and the entry at the cursor in full; the
archival pane also owns its filter."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Input, Static

from oryxtui.memory import MemoryEntry, MemorySnapshot
from oryxtui.memory.format import RecallIndex
from oryxtui.memory.recall.results import IndexStatus
from oryxtui.tui.text import display_text
from oryxtui.tui.widgets.entry_view import COVERED, DIGEST, DUPLICATE, NOT_INJECTED, EntryView

DETAIL_LIMIT = 8000  # characters of the entry at the cursor shown under the pane


class MemoryPane(Vertical):
    """One scope of the selected agent's memory."""

    HELP_PLACE = "On an entry"  # where its keys apply, as help groups them

    BINDINGS = [
        Binding("shift+down", "scroll_detail(1)", "Scroll the entry down", show=False),
        Binding("shift+up", "scroll_detail(-1)", "Scroll the entry up", show=False),
    ]

    def __init__(self, title: str, scope: str, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.title = title
        self.scope = scope
        self.border_title = title

    def compose(self) -> ComposeResult:
        yield EntryView(empty_text=f"No {self.scope} entries yet.", id=f"{self.scope}-view")
        with VerticalScroll(classes="entry-detail", can_focus=False):
            yield Static("", id=f"{self.scope}-detail", markup=False)

    def action_scroll_detail(self, step: int) -> None:
        """The entry at the cursor, when it is longer than its rows: a row further."""
        self.query_one(".entry-detail", VerticalScroll).scroll_relative(y=step, animate=False)

    @property
    def view(self) -> EntryView:
        return self.query_one(EntryView)

    def show(
        self,
        entries: Sequence[MemoryEntry],
        fresh: set[int],
        duplicates: frozenset[int] = frozenset(),
    ) -> None:
        self.view.show(entries, fresh=fresh, duplicates=duplicates)
        self.set_title(len(entries))

    def set_title(
        self, total: int, shown: int | None = None, outside: int = 0, of_all: int | None = None
    ) -> None:
        """`of_all`: the entries are only the newest of a big file, which holds this many
        (-1 while they are still being counted)."""
        count = f"{total:,}" if shown is None else f"{shown:,} of {total:,} match"
        if of_all is not None:
            newest = (
                f"newest {total:,}" if shown is None else f"{shown:,} of the newest {total:,} match"
            )
            count = newest + (" · counting all…" if of_all < 0 else f" of {of_all:,}")
        parts = [self.title, count]
        if outside:
            parts.append(f"{NOT_INJECTED} {outside:,} not injected")
        if repeated := len(self.view.duplicates):
            parts.append(f"{DUPLICATE} {repeated:,} repeated (D removes)")
        if self.view.digests:
            covered = len(self.view.covered)
            parts.append(f"{DIGEST} {covered:,} covered")
        self.border_title = " · ".join(parts)

    @on(EntryView.CursorMoved)
    def _show_detail(self, event: EntryView.CursorMoved) -> None:
        detail = self.query_one(f"#{self.scope}-detail", Static)
        self.query_one(".entry-detail", VerticalScroll).scroll_home(animate=False)
        entry = event.entry
        if entry is None:
            detail.update("")
            return
        when = entry.time or "no time (hand-written)"
        # In full (scrolled with shift+↑/↓ or the wheel), but never a 1 MB entry to the wrapper.
        shown = display_text(entry.content, DETAIL_LIMIT)
        if len(shown) > DETAIL_LIMIT:
            more = len(entry.content) - DETAIL_LIMIT
            shown = shown[:DETAIL_LIMIT] + f"… ({more:,} more characters: e opens the file)"
        text = Text(f"{when}  {shown}")
        covers = self.covers(event)
        if covers:
            text.append(f"\n{covers}", style="italic")
        detail.update(text)

    def covers(self, event: EntryView.CursorMoved) -> str:
        """For a digest: which entries of the pane it covers (the archival pane says)."""
        return ""


class ArchivalPane(MemoryPane):
    """The archival entries, narrowed by a filter that is matched in a worker (a big file's
    newest entries can be many). Its subtitle says how much of them the vector index holds."""

    def covers(self, event: EntryView.CursorMoved) -> str:
        view, snapshot = self.view, self.snapshot
        if snapshot is None or not 0 <= view.cursor < len(view.rows):
            return ""
        span = snapshot.digest_covers(view.rows[view.cursor])
        if span is None:
            return ""
        first, last = (snapshot.archival[row] for row in span)
        return (
            f"{DIGEST} covers the {COVERED} entries from {first.time or '?'} to "
            f"{last.time or '?'} (archival entries {span[0] + 1}–{span[1] + 1})"
        )

    def show_index(self, status: IndexStatus | None) -> None:
        """`index 9,998/10,000 · nomic-embed-text`; the embedder's failure when it fails."""
        if status is None:
            self.border_subtitle = ""
            return
        model = status.model.split("/", 1)[-1]
        if status.meaningless:
            model = "mock, meaningless"
        text = f"index {status.indexed:,}/{status.entries:,} · {model}"
        if status.problem:
            text += " · ⚠ embedder unreachable: recall by keywords and time"
        self.border_subtitle = text

    @dataclass
    class Filtered(Message):
        keyword: str
        rows: list[int]
        snapshot_id: int

    def __init__(self, **kwargs: object) -> None:
        super().__init__("Archival", "archival", **kwargs)
        self.snapshot: MemorySnapshot | None = None
        self.of_all: int | None = None
        self._index: tuple[int, RecallIndex] | None = None

    def compose(self) -> ComposeResult:
        field = Input(placeholder="filter archival entries…", id="archival-filter")
        field.display = False
        yield field
        yield from super().compose()

    @property
    def keyword(self) -> str:
        return self.query_one(Input).value

    def open_filter(self) -> None:
        field = self.query_one(Input)
        field.display = True
        field.focus()

    def close_filter(self) -> None:
        """Every entry shown again (at once), the focus back on them."""
        field = self.query_one(Input)
        field.value = ""
        field.display = False
        if self.snapshot is not None:
            self._show_rows(None, self.view.fresh)
        self.view.focus()

    def show_snapshot(
        self, snapshot: MemorySnapshot, fresh: set[int], of_all: int | None, same_agent: bool
    ) -> None:
        """Show these entries; while a filter is on, its rows stay until the new ones are in."""
        self.snapshot, self.of_all = snapshot, of_all
        keyword = self.keyword
        rows = list(self.view.rows) if keyword and same_agent else None
        self._show_rows(rows, fresh)
        if keyword:
            self._filter(keyword, snapshot)

    def count_all(self, of_all: int | None) -> None:
        """The census of a big file is in: the title says how many entries it holds."""
        self.of_all = of_all
        if self.snapshot is not None:
            self._show_rows(list(self.view.rows) if self.keyword else None, self.view.fresh)

    def _show_rows(self, rows: list[int] | None, fresh: set[int]) -> None:
        snapshot = self.snapshot
        assert snapshot is not None
        view = self.view
        view.show(
            snapshot.archival,
            rows=rows,
            window_start=snapshot.window_start,
            fresh=fresh,
            duplicates=snapshot.archival_duplicates,
            digests=snapshot.digests,
            covered=snapshot.covered,
        )
        total = len(snapshot.archival)
        outside = min(snapshot.window_start, total)
        self.set_title(total, None if rows is None else len(rows), outside, self.of_all)

    @work(thread=True, exclusive=True, exit_on_error=False, group="filter")
    def _filter(self, keyword: str, snapshot: MemorySnapshot) -> None:
        cached = self._index
        if cached is None or cached[0] != id(snapshot):
            cached = (id(snapshot), RecallIndex(snapshot.archival_lines()))
            self._index = cached
        self.post_message(self.Filtered(keyword, cached[1].positions(keyword), id(snapshot)))

    @on(Filtered)
    def _filtered(self, event: Filtered) -> None:
        event.stop()
        snapshot = self.snapshot
        if snapshot is None or id(snapshot) != event.snapshot_id or event.keyword != self.keyword:
            return  # the entries or the keyword changed meanwhile: a newer result is coming
        self._show_rows(event.rows, self.view.fresh)

    @on(Input.Changed, "#archival-filter")
    def _keyword_changed(self, event: Input.Changed) -> None:
        event.stop()
        if self.snapshot is None:
            return
        if event.value:
            self._filter(event.value, self.snapshot)
        else:
            self._show_rows(None, self.view.fresh)

    @on(Input.Submitted, "#archival-filter")
    def _keyword_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.view.focus()

    def on_key(self, event: events.Key) -> None:
        """Escape in the filter clears it and goes back to the entries."""
        if event.key == "escape" and self.query_one(Input).has_focus:
            event.stop()
            self.close_filter()
