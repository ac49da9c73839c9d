"""The recall modal: a keyword, live results as you type, matches highlighted; enter copies."""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from oryxtui.errors import OryxError
from oryxtui.memory import MemoryEntry
from oryxtui.tui.text import display_text

Recall = Callable[[str], list[MemoryEntry]]
MAX_SHOWN = 500


def highlighted(line: str, keyword: str) -> Text:
    """The line as literal text, every case-insensitive occurrence of `keyword` highlighted."""
    shown = display_text(line)
    text = Text(shown)
    lowered, needle = shown.lower(), keyword.lower()
    if needle and len(lowered) == len(shown):  # lower() kept offsets aligned
        start = lowered.find(needle)
        while start >= 0:
            text.stylize("bold reverse", start, start + len(needle))
            start = lowered.find(needle, start + len(needle))
    return text


class RecallScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape", "close", "Close", id="recall.close"),
        Binding("down", "focus_results", "Results", show=False),
    ]

    def __init__(self, agent_label: str, recall: Recall, ranked: bool = False) -> None:
        super().__init__()
        self.agent_label = agent_label
        self.recall = recall
        self.ranked = ranked
        self.hits: list[MemoryEntry] = []

    def compose(self) -> ComposeResult:
        with Vertical(id="recall-dialog", classes="dialog"):
            yield Label(
                f"Recall from {self.agent_label} (archival, "
                + ("most relevant first)" if self.ranked else "case-insensitive)"),
                classes="dialog-title",
                markup=False,
            )
            yield Input(placeholder="keyword", id="recall-keyword")
            yield Static("", id="recall-status", classes="dialog-hint", markup=False)
            yield OptionList(id="recall-results")
            yield Static(
                "type to search · ↓ to the results · enter copies · escape closes",
                classes="dialog-hint",
                markup=False,
            )

    @on(Input.Changed, "#recall-keyword")
    def _search(self, event: Input.Changed) -> None:
        self._run_recall(event.value)

    @on(Input.Submitted, "#recall-keyword")
    def _to_results(self) -> None:
        self.action_focus_results()

    @work(thread=True, exclusive=True, exit_on_error=False, group="recall")
    def _run_recall(self, keyword: str) -> None:
        if not keyword.strip():
            self.app.call_from_thread(self._show, keyword, [], None)
            return
        try:
            hits = self.recall(keyword)
        except OryxError as exc:
            self.app.call_from_thread(self._show, keyword, [], str(exc))
            return
        self.app.call_from_thread(self._show, keyword, hits, None)

    def _show(self, keyword: str, hits: list[MemoryEntry], error: str | None) -> None:
        if keyword != self.query_one("#recall-keyword", Input).value:
            return  # a newer keyword is on its way
        self.hits = hits
        results = self.query_one("#recall-results", OptionList)
        shown = hits[-MAX_SHOWN:]
        results.set_options(
            Option(highlighted(hit.line, keyword), id=str(index)) for index, hit in enumerate(shown)
        )
        status = self.query_one("#recall-status", Static)
        if error:
            status.update(error)
        elif keyword.strip():
            more = f" (newest {MAX_SHOWN} shown)" if len(hits) > MAX_SHOWN else ""
            status.update(f"{len(hits)} match{'es' if len(hits) != 1 else ''}{more}")
        else:
            status.update("")

    @on(OptionList.OptionSelected, "#recall-results")
    def _copy(self, event: OptionList.OptionSelected) -> None:
        shown = self.hits[-MAX_SHOWN:]
        line = shown[int(event.option.id or 0)].line
        self.app.copy_to_clipboard(line)
        self.notify("Copied the entry to the clipboard.", title="Recall", markup=False)

    def action_focus_results(self) -> None:
        results = self.query_one("#recall-results", OptionList)
        if results.option_count:
            results.focus()
            if results.highlighted is None:
                results.highlighted = 0

    def action_close(self) -> None:
        self.dismiss(None)
