"""The core and archival panes: a titled entry view, a filter (archival) and the entry in full."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Input, Static

from oryxtui.tui.text import display_text
from oryxtui.tui.widgets.entry_view import NOT_INJECTED, EntryView

DETAIL_LIMIT = 1000


class MemoryPane(Vertical):
    """One scope of the selected agent's memory."""

    def __init__(self, title: str, scope: str, filterable: bool, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.title = title
        self.scope = scope
        self.filterable = filterable
        self.border_title = title

    def compose(self) -> ComposeResult:
        if self.filterable:
            yield Input(placeholder="filter archival entries…", id=f"{self.scope}-filter")
        yield EntryView(empty_text=f"No {self.scope} entries yet.", id=f"{self.scope}-view")
        yield Static("", id=f"{self.scope}-detail", classes="entry-detail", markup=False)

    @property
    def view(self) -> EntryView:
        return self.query_one(EntryView)

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
        self.border_title = " · ".join(parts)

    @on(EntryView.CursorMoved)
    def _show_detail(self, event: EntryView.CursorMoved) -> None:
        detail = self.query_one(".entry-detail", Static)
        entry = event.entry
        if entry is None:
            detail.update("")
            return
        when = entry.time or "no time (hand-written)"
        # The detail shows at most three lines: never hand a 1 MB entry to the wrapper.
        shown = display_text(entry.content, DETAIL_LIMIT)
        if len(shown) > DETAIL_LIMIT:
            shown = shown[:DETAIL_LIMIT] + "…"
        detail.update(Text(f"{when}  {shown}"))
