"""A virtualised view of memory entries (Line API): only the rows on screen are ever drawn."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.segment import Segment
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from oryxtui.memory import MemoryEntry
from oryxtui.tui.text import display_text

TIME_WIDTH = 19
NOT_INJECTED = "○"
FRESH = "+"
DUPLICATE = "="
DIGEST = "Σ"  # a digest of entries that left the window
COVERED = "~"  # an entry a digest covers (it stays, and stays recallable)


class EntryView(ScrollView, can_focus=True):
    """Rows of `time  content` with a cursor; not-injected and new rows are marked."""

    HELP_PLACE = "On an entry"  # where its keys apply, as help groups them

    COMPONENT_CLASSES = {
        "entry-view--time",
        "entry-view--outside",
        "entry-view--fresh",
        "entry-view--cursor",
        "entry-view--empty",
    }
    DEFAULT_CSS = """
    EntryView { background: $surface; overflow-x: hidden; }
    EntryView > .entry-view--time { color: $text-muted; }
    EntryView > .entry-view--outside { color: $text-disabled; }
    EntryView > .entry-view--fresh { background: $success 30%; }
    EntryView > .entry-view--cursor { background: $boost; }
    EntryView:focus > .entry-view--cursor { background: $accent 40%; }
    EntryView > .entry-view--empty { color: $text-muted; text-style: italic; }
    """
    BINDINGS = [
        Binding("up,k", "cursor(-1)", "Up", show=False),
        Binding("down,j", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "jump(0)", "First", show=False),
        Binding("end", "jump(-1)", "Newest", show=False),
        # The entry at the cursor: in the footer while a pane of entries has the focus.
        Binding("i", "screen.steer('edit_entry')", "Edit", id="edit-entry"),
        Binding("u", "screen.steer('replace_entry')", "Replace", id="replace-entry"),
        Binding("m", "screen.steer('move_entry')", "Move", id="move"),
        Binding("x", "screen.steer('delete_entry')", "Delete", id="delete"),
        Binding("D", "screen.steer('remove_duplicates')", "Repeats", id="duplicates"),
        Binding("enter", "screen.entry('open')", "Open", id="open-entry"),
        Binding("o", "screen.entry('origin')", "Origin", id="origin", show=False),
    ]

    cursor = reactive(-1, always_update=True, init=False)

    @dataclass
    class CursorMoved(Message):
        view: EntryView
        entry: MemoryEntry | None

    def __init__(self, empty_text: str = "No entries.", **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.empty_text = empty_text
        self.entries: Sequence[MemoryEntry] = ()
        self.rows: Sequence[int] = range(0)  # entry index shown on each row (a filter narrows it)
        self.window_start = 0
        self.fresh: set[int] = set()
        self.duplicates: frozenset[int] = frozenset()
        self.digests: frozenset[int] = frozenset()
        self.covered: frozenset[int] = frozenset()

    @property
    def row_count(self) -> int:
        return len(self.rows)

    @property
    def at_bottom(self) -> bool:
        return self.scroll_y >= self.max_scroll_y

    def show(
        self,
        entries: Sequence[MemoryEntry],
        rows: Sequence[int] | None = None,
        window_start: int = 0,
        fresh: set[int] | None = None,
        duplicates: frozenset[int] = frozenset(),
        digests: frozenset[int] = frozenset(),
        covered: frozenset[int] = frozenset(),
    ) -> None:
        """Replace what is shown; keep following the newest entry if the view was at the bottom."""
        following = self.at_bottom or self.cursor >= self.row_count - 1
        self.entries = entries
        self.rows = range(len(entries)) if rows is None else rows
        self.window_start = window_start
        self.fresh = fresh or set()
        self.duplicates = duplicates
        self.digests = digests
        self.covered = covered
        self.virtual_size = Size(self.size.width, len(self.rows))
        if following or not 0 <= self.cursor < len(self.rows):
            self.cursor = len(self.rows) - 1
            # Once laid out, the newest row in sight: unless the reader moved meanwhile.
            self.call_after_refresh(self._cursor_in_sight)
        else:
            self.cursor = self.cursor
        self.refresh()

    def point_at(self, line: str) -> bool:
        """Put the cursor on the (last) shown entry with this line; False if none is shown."""
        for row in range(len(self.rows) - 1, -1, -1):
            if self.entries[self.rows[row]].line == line:
                self.cursor = row
                return True
        return False

    def entry_at_cursor(self) -> MemoryEntry | None:
        if 0 <= self.cursor < len(self.rows):
            return self.entries[self.rows[self.cursor]]
        return None

    def watch_cursor(self, cursor: int) -> None:
        if 0 <= cursor < len(self.rows):
            self.scroll_to_region_if_needed(cursor)
        self.refresh()
        self.post_message(self.CursorMoved(self, self.entry_at_cursor()))

    def scroll_to_region_if_needed(self, row: int) -> None:
        top, height = int(self.scroll_y), self.scrollable_content_region.height
        if row < top:
            self.scroll_to(y=row, animate=False, immediate=True, force=True)
        elif row >= top + height:
            self.scroll_to(y=row - height + 1, animate=False, immediate=True, force=True)

    def action_cursor(self, step: int) -> None:
        if self.rows:
            self.cursor = max(0, min(len(self.rows) - 1, self.cursor + step))

    def action_page(self, direction: int) -> None:
        self.action_cursor(direction * max(1, self.scrollable_content_region.height - 1))

    def action_jump(self, row: int) -> None:
        if self.rows:
            self.cursor = row % len(self.rows)

    def on_click(self, event: events.Click) -> None:
        row = int(self.scroll_y) + event.y
        if 0 <= row < len(self.rows):
            self.cursor = row

    def on_resize(self, event: events.Resize) -> None:
        self.virtual_size = Size(event.size.width, len(self.rows))
        # Entries can arrive before the first layout: keep the cursor row in sight once sized.
        self.call_after_refresh(self._cursor_in_sight)

    def _cursor_in_sight(self) -> None:
        if 0 <= self.cursor < len(self.rows):  # the cursor as it is then, not as it was
            self.scroll_to_region_if_needed(self.cursor)

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        row = int(self.scroll_y) + y
        base = self.rich_style
        if not self.rows:
            if y == 0:
                style = self.get_component_rich_style("entry-view--empty")
                return Strip([Segment(" " + self.empty_text, base + style)]).crop_extend(
                    0, width, base
                )
            return Strip.blank(width, base)
        if row >= len(self.rows):
            return Strip.blank(width, base)
        index = self.rows[row]
        entry = self.entries[index]
        style = base
        outside = index < self.window_start
        if outside:
            style += self.get_component_rich_style("entry-view--outside")
        if index in self.fresh:
            style += self.get_component_rich_style("entry-view--fresh")
        if row == self.cursor:
            style += self.get_component_rich_style("entry-view--cursor")
        if index in self.fresh:
            mark = FRESH
        elif index in self.duplicates:
            mark = DUPLICATE
        elif index in self.digests:
            mark = DIGEST
        elif index in self.covered:
            mark = COVERED
        else:
            mark = NOT_INJECTED if outside else " "
        time_style = style + self.get_component_rich_style("entry-view--time", partial=True)
        segments = [
            Segment(f"{mark} ", style),
            Segment((entry.time or "—").ljust(TIME_WIDTH), time_style),
            Segment("  ", style),
            Segment(display_text(entry.content, width), style),
        ]
        return Strip(segments).crop_extend(0, width, style)
