"""The history view: an agent's changes newest first, each with its diff; the memory and the
memory block as they were right after the selected change; what it removed brought back."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.signal import Signal
from textual.widgets import Footer, Label, OptionList, Static
from textual.widgets.option_list import Option

from oryxtui.errors import OryxError
from oryxtui.memory import MemorySnapshot
from oryxtui.memory.history import ACTORS, OP_LABELS, Record, describe_actor
from oryxtui.phrases import agent_label, brought_back
from oryxtui.tui.messages import Changed
from oryxtui.tui.text import display_text, tell
from oryxtui.workspace import AgentName

if TYPE_CHECKING:
    from oryxtui.places import Memory

WHO = ("everyone", *ACTORS)  # `f` steps through them


@dataclass(frozen=True)
class Then:
    """The memory right after a change, and what of it is gone now."""

    record: Record
    snapshot: MemorySnapshot | None  # None: from before the history knew the memory
    block: str
    gone: frozenset[str]  # lines of it that are not in the memory now


def change_row(record: Record) -> Text:
    """`#12  2026-12-03 17:05:12  edited by dashboard  · 1 − 1 +`"""
    when = (record.time or "before the history").replace("T", " ")
    text = Text(f"#{record.n:<5}", style="dim")
    text.append(f"{when}  ")
    text.append(display_text(describe_actor(record)), style="bold")
    counts = []
    if record.before:
        counts.append(f"{len(record.before)} −")
    if record.after:
        counts.append(f"{len(record.after)} +")
    text.append(f"  {' '.join(counts)}", style="dim")
    return text


def diff_text(record: Record) -> Text:
    text = Text()
    text.append(f"{OP_LABELS.get(record.op, record.op).capitalize()}", style="bold")
    text.append(f" — {display_text(describe_actor(record))}\n", style="dim")
    for entry in record.removed:
        text.append(f"− {entry.scope.value}: {display_text(entry.line)}\n", style="red")
    for entry in record.added:
        text.append(f"+ {entry.scope.value}: {display_text(entry.line)}\n", style="green")
    return text


def then_text(then: Then) -> Text:
    snapshot = then.snapshot
    text = Text()
    if snapshot is None:
        text.append("The history does not know the memory before this point.", style="dim")
        return text
    core, archival = snapshot.core, snapshot.archival
    text.append(
        f"Memory right after #{then.record.n}: {len(core)} core, {len(archival)} archival",
        style="bold",
    )
    if then.gone:
        text.append(f" · ✗ {len(then.gone)} gone now (b brings back what this change removed)")
    text.append(
        "\n+ added by this change · ✗ gone now · dimmed: outside the injected window", style="dim"
    )
    text.append("\n")
    start = snapshot.window_start
    added = {key[1] for key in then.record.after}
    for index, entry in enumerate([*core, *archival]):
        is_archival = index >= len(core)
        mark = "✗" if entry.line in then.gone else "+" if entry.line in added else " "
        outside = is_archival and index - len(core) < start  # not in the block: dimmed
        style = "green" if mark == "+" else "dim" if outside else ""
        text.append(f"{mark} {entry.scope.value[0]} {display_text(entry.line)}\n", style=style)
    text.append(f"\nMemory block then ({len(then.block):,} characters)\n", style="bold")
    text.append(display_text_block(then.block), style="dim")
    return text


def display_text_block(block: str) -> str:
    return "\n".join(display_text(line) for line in block.split("\n"))


class HistoryScreen(Screen[None]):
    """Opened with `h` on the dashboard; escape goes back."""

    BINDINGS = [
        Binding("escape,q", "close", "Back", id="history.close"),
        Binding("b", "bring_back", "Bring back", id="history.bring-back"),
        Binding("f", "who", "Who", id="history.who"),
    ]

    def __init__(
        self, service: Memory, agent: AgentName, changes: Signal[Changed] | None = None
    ) -> None:
        super().__init__()
        self.service = service
        self.agent = agent
        self.changes = changes  # the dashboard's news of memory that changed
        self.records: list[Record] = []
        self.who = WHO[0]
        self.then: Then | None = None

    def compose(self) -> ComposeResult:
        yield Label("", id="history-title", markup=False)
        with Horizontal(id="history-body"):
            changes = OptionList(id="history-changes")
            changes.border_title = "Changes, newest first"
            yield changes
            with VerticalScroll(id="history-detail") as detail:
                detail.border_title = "What changed, and the memory then"
                yield Static("", id="history-diff")
                yield Static("", id="history-then")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()
        if self.changes is not None:
            self.changes.subscribe(self, self._changed)
        self.reload()

    def _changed(self, change: Changed) -> None:
        if change.concerns(self.agent):
            self.reload()

    # Loading ----------------------------------------------------------------------------------

    def reload(self) -> None:
        """Read the history again (the memory changed, or something was brought back)."""
        self._load()

    @work(thread=True, exclusive=True, exit_on_error=False, group="history")
    def _load(self) -> None:
        try:
            records = self.service.history(self.agent)
            problem = self.service.history_problems(self.agent)
        except OryxError as exc:
            self.app.call_from_thread(self._failed, str(exc))
            return
        self.app.call_from_thread(self._loaded, records, problem)

    def _failed(self, message: str) -> None:
        self.query_one("#history-title", Label).update(display_text(message))

    def _loaded(self, records: Sequence[Record], problem: str | None) -> None:
        selected = self.selected
        self.records = list(records)
        changes = self.query_one(OptionList)
        shown = self.shown
        changes.set_options([Option(change_row(r), id=str(r.n)) for r in shown])
        self._title(problem)
        if not shown:
            self.query_one("#history-diff", Static).update("No changes recorded yet.")
            self.query_one("#history-then", Static).update("")
            return
        numbers = [r.n for r in shown]
        changes.highlighted = numbers.index(selected.n) if selected in shown else 0

    def _title(self, problem: str | None = None) -> None:
        shown = len(self.shown)
        who = "" if self.who == WHO[0] else f" by {self.who}"
        text = f"History of {agent_label(self.agent)}: {shown:,} change{'s' if shown != 1 else ''}"
        text += f"{who} (f: who)"
        first = min((r.n for r in self.records), default=1)
        if first > 1:  # the numbers `memory log` and `bring-back` use: say why they start later
            text += f" · numbered from #{first}: the first records are where the history began"
        if problem:
            text += f" · ⚠ {problem}"
        self.query_one("#history-title", Label).update(display_text(text))

    @property
    def shown(self) -> list[Record]:
        return [
            r for r in self.records if self.who == WHO[0] or r.actor.partition(":")[0] == self.who
        ]

    @property
    def selected(self) -> Record | None:
        index = self.query_one(OptionList).highlighted
        shown = self.shown
        return shown[index] if index is not None and index < len(shown) else None

    @on(OptionList.OptionHighlighted, "#history-changes")
    def _highlighted(self) -> None:
        record = self.selected
        if record is None:
            return
        self.query_one("#history-diff", Static).update(diff_text(record))
        self._read_then(record)

    @work(thread=True, exclusive=True, exit_on_error=False, group="history-then")
    def _read_then(self, record: Record) -> None:
        try:
            then = self.service.as_of(self.agent, record.n)
            snapshot, block = then if then is not None else (None, "")
            now = self.service.snapshot(self.agent)
        except OryxError as exc:
            self.app.call_from_thread(self._failed, str(exc))
            return
        present = {e.line for e in [*now.core, *now.archival]}
        lines = [e.line for e in [*snapshot.core, *snapshot.archival]] if snapshot else []
        gone = frozenset(line for line in lines if line not in present)
        self.app.call_from_thread(self._show_then, Then(record, snapshot, block, gone))

    def _show_then(self, then: Then) -> None:
        if then.record != self.selected:
            return  # another change was selected meanwhile
        self.then = then
        self.query_one("#history-then", Static).update(then_text(then))

    # Actions ----------------------------------------------------------------------------------

    def action_close(self) -> None:
        self.dismiss()

    def action_who(self) -> None:
        self.who = WHO[(WHO.index(self.who) + 1) % len(WHO)]
        self._loaded(self.records, None)

    def action_bring_back(self) -> None:
        record = self.selected
        if record is None:
            return
        if not record.before:
            tell(self, "This change removed nothing.", title="Bring back")
            return
        self._bring_back(record)

    @work(thread=True, exclusive=True, exit_on_error=False, group="bring-back")
    def _bring_back(self, record: Record) -> None:
        try:
            brought = self.service.bring_back(self.agent, record)
        except OryxError as exc:
            tell(self, str(exc), severity="error")
            return
        count = len(brought)
        message = (
            brought_back("Brought back", brought)
            if count
            else "Everything this change removed is in the memory already."
        )
        tell(self, message, title="Bring back")
        self.app.call_from_thread(self.reload)
