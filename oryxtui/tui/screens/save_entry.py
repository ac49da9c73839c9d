"""The save modal: text and a core/archival choice; enter saves, escape cancels."""

from __future__ import annotations

from collections.abc import Callable

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Input, Label, RadioButton, RadioSet, Static

from oryxtui.errors import OryxError
from oryxtui.memory import MemoryEntry
from oryxtui.tui.text import tell

SaveEntry = Callable[[str, str], MemoryEntry]


class ScopeChoice(RadioSet):
    """Core or archival. Enter takes the scope the arrows are on and saves (space only takes
    it), as enter in the text saves."""

    BINDINGS = [Binding("enter", "choose", "Save", show=False)]

    class Chosen(Message):
        """Enter on a scope: save now."""

    def action_choose(self) -> None:
        self.action_toggle_button()
        self.post_message(self.Chosen())


class SaveEntryScreen(ModalScreen[MemoryEntry | None]):
    """Dismissed with the saved entry; on failure it stays open with the text kept."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="save.cancel")]

    def __init__(self, agent_label: str, save: SaveEntry) -> None:
        super().__init__()
        self.agent_label = agent_label
        self.save = save

    def compose(self) -> ComposeResult:
        with Vertical(id="save-dialog", classes="dialog"):
            yield Label(f"Save to {self.agent_label}", classes="dialog-title", markup=False)
            yield Input(placeholder="what should the agent remember?", id="save-text")
            with Horizontal(id="save-scope-row"):
                yield Label("Scope:")
                with ScopeChoice(id="save-scope"):
                    yield RadioButton("archival", value=True, id="scope-archival")
                    yield RadioButton("core (always injected)", id="scope-core")
            yield Static(
                "enter saves (in the text or on a scope) · tab to the scope · escape cancels",
                classes="dialog-hint",
                markup=False,
            )
            yield Static("", id="save-error", classes="dialog-error", markup=False)

    @property
    def scope(self) -> str:
        return "core" if self.query_one("#scope-core", RadioButton).value else "archival"

    @on(Input.Submitted, "#save-text")
    def _submit(self, event: Input.Submitted) -> None:
        self._submit_text()

    @on(ScopeChoice.Chosen)
    def _scope_chosen(self) -> None:
        self._submit_text()

    def _submit_text(self) -> None:
        field = self.query_one("#save-text", Input)
        text = field.value
        if not text.strip():
            self.query_one("#save-error", Static).update("Type something to save first.")
            field.focus()
            return
        field.disabled = True
        self._save(text, self.scope)

    @work(thread=True, exclusive=True, exit_on_error=False, group="save")
    def _save(self, text: str, scope: str) -> None:
        try:
            entry = self.save(text, scope)
        except OryxError as exc:
            self.app.call_from_thread(self._failed, str(exc))
        else:
            self.app.call_from_thread(self.dismiss, entry)

    def _failed(self, message: str) -> None:
        field = self.query_one("#save-text", Input)
        field.disabled = False
        field.focus()
        self.query_one("#save-error", Static).update(f"Not saved: {message}")
        tell(self, message, title="Not saved", severity="error")

    def action_cancel(self) -> None:
        self.dismiss(None)
