"""The dialogs that change entries: edit one's text (enter saves), or confirm a removal (enter
or y goes ahead). Each runs the change in a worker and stays open with the reason when it
is refused (the entry changed since it was shown, a locked file)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static

from oryxtui.errors import OryxError
from oryxtui.memory import MemoryEntry
from oryxtui.tui.text import display_text

Edit = Callable[[str], MemoryEntry]
Done = TypeVar("Done")


class EditEntryScreen(ModalScreen[MemoryEntry | None]):
    """Dismissed with the entry as edited (its time and scope stay), or — `replacing` — with
    the entry that replaced it (stamped now; the old one stays in the history)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="edit-entry.cancel")]

    def __init__(self, entry: MemoryEntry, edit: Edit, replacing: bool = False) -> None:
        super().__init__()
        self.entry = entry
        self.edit = edit
        self.replacing = replacing

    def compose(self) -> ComposeResult:
        entry = self.entry
        when = entry.time or "no time"
        if self.replacing:
            title = f"Replace the {entry.scope.value} entry of {when} by what is true now"
            hint = "enter replaces (a new entry, stamped now; the old one stays in the history)"
        else:
            title = f"Edit the {entry.scope.value} entry of {when}"
            hint = "enter saves (the time stays)"
        with Vertical(id="edit-dialog", classes="dialog"):
            yield Label(title, classes="dialog-title", markup=False)
            yield Input(display_text(entry.content), id="edit-text")
            yield Static(f"{hint} · escape cancels", classes="dialog-hint", markup=False)
            yield Static("", id="edit-error", classes="dialog-error", markup=False)

    @on(Input.Submitted, "#edit-text")
    def _submit(self, event: Input.Submitted) -> None:
        if not event.value.strip():
            self.query_one("#edit-error", Static).update(
                "An entry cannot be empty; to remove it, delete it (x)."
            )
            return
        event.input.disabled = True
        self._edit(event.value)

    @work(thread=True, exclusive=True, exit_on_error=False, group="edit-entry")
    def _edit(self, text: str) -> None:
        try:
            entry = self.edit(text)
        except OryxError as exc:
            self.app.call_from_thread(self._failed, str(exc))
        else:
            self.app.call_from_thread(self.dismiss, entry)

    def _failed(self, message: str) -> None:
        field = self.query_one("#edit-text", Input)
        field.disabled = False
        field.focus()
        self.query_one("#edit-error", Static).update(f"Not changed: {display_text(message)}")

    def action_cancel(self) -> None:
        self.dismiss(None)


class ConfirmScreen(ModalScreen[Done | None]):
    """Asks before a change that removes something; dismissed with what `run` returned."""

    BINDINGS = [
        Binding("escape,n", "cancel", "Cancel", id="confirm.cancel"),
        Binding("enter,y", "confirm", "Confirm", id="confirm.confirm"),
    ]

    def __init__(self, title: str, detail: str, run: Callable[[], Done]) -> None:
        super().__init__()
        self.title_text = title
        self.detail = detail
        self.run = run
        self.busy = False

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-dialog", classes="dialog"):
            yield Label(self.title_text, classes="dialog-title", markup=False)
            yield Static(display_text(self.detail, 800), classes="dialog-detail", markup=False)
            hint = "enter or y goes ahead · escape keeps everything"
            yield Static(hint, classes="dialog-hint", markup=False)
            yield Static("", id="confirm-error", classes="dialog-error", markup=False)

    def action_confirm(self) -> None:
        if not self.busy:
            self.busy = True
            self._run()

    @work(thread=True, exclusive=True, exit_on_error=False, group="confirm")
    def _run(self) -> None:
        try:
            done = self.run()
        except OryxError as exc:
            self.app.call_from_thread(self._failed, str(exc))
        else:
            self.app.call_from_thread(self.dismiss, done)

    def _failed(self, message: str) -> None:
        self.busy = False
        self.query_one("#confirm-error", Static).update(f"Nothing changed: {display_text(message)}")

    def action_cancel(self) -> None:
        self.dismiss(None)
