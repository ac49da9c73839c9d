"""A past turn's prompt, as the model received it (ctrl+t in the sessions view): each call's blocks
with their sizes, the memory entries injected (+ for those new since the call before), and the
recall results the model got; [ and ] step to the turn before and after."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Label, Static

from oryxtui.errors import OryxError
from oryxtui.tui.text import display_text


def lines_text(text: str) -> str:
    """Text shown line by line, each neutralised (its line breaks kept)."""
    return "\n".join(display_text(line) for line in text.split("\n"))


def view_text(view: dict[str, Any]) -> Text:
    text = Text()
    changed = view.get("memory_since_previous_turn") or {}
    for call in view["calls"]:
        added = set(call.get("new") or ())
        text.append(
            f"Call {call['call']} · {call['model']} · {call['time'] or '?'}\n", style="bold reverse"
        )
        for block in call["blocks"]:
            text.append(
                f"── {block['name']} · {block['chars']:,} chars · ~{block['tokens']:,} tokens\n",
                style="bold",
            )
            if block["name"] == "memory":
                for line in str(block["text"]).split("\n"):
                    mark = "+ " if line in added else "  "
                    text.append(
                        mark + display_text(line) + "\n", style="green" if mark == "+ " else ""
                    )
            elif block["name"] in ("identity", "time"):
                text.append(lines_text(str(block["text"])) + "\n", style="dim")
            else:
                shown = str(block["text"])
                clipped = shown if len(shown) <= 4000 else shown[:4000] + " …"
                text.append(lines_text(clipped) + "\n", style="dim")
        if call["recalls"]:
            text.append("── recall results given to the model\n", style="bold")
            for recall in call["recalls"]:
                text.append(lines_text(str(recall)) + "\n")
        text.append("\n")
    removed = changed.get("removed") or ()
    if removed:
        text.append("Gone from the memory block since the turn before:\n", style="bold")
        for line in removed:
            text.append("- " + display_text(line) + "\n", style="red")
    return text


class TurnPromptScreen(Screen[None]):
    BINDINGS = [
        Binding("escape,q", "close", "Back", id="turn-prompt.close"),
        Binding("left_square_bracket", "step(-1)", "Turn before", id="turn-prompt.before"),
        Binding("right_square_bracket", "step(1)", "Turn after", id="turn-prompt.after"),
    ]

    def __init__(self, loop: Callable[[], Any], session_id: str, turn: int) -> None:
        super().__init__()
        self.loop = loop
        self.session_id = session_id
        self.turn = turn

    def compose(self) -> ComposeResult:
        yield Label("", id="turn-prompt-title", markup=False)
        with VerticalScroll(id="turn-prompt-body"):
            yield Static("", id="turn-prompt-text")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(VerticalScroll).focus()
        self._load(self.turn)

    def action_close(self) -> None:
        self.dismiss()

    def action_step(self, step: int) -> None:
        if self.turn + step >= 0:
            self._load(self.turn + step)

    @work(thread=True, exclusive=True, exit_on_error=False, group="turn-prompt")
    def _load(self, turn: int) -> None:
        try:
            view = self.loop().turn_view(self.session_id, turn)
        except OryxError as exc:
            self.app.call_from_thread(self._show, turn, None, str(exc))
            return
        self.app.call_from_thread(self._show, turn, view, None)

    def _show(self, turn: int, view: dict[str, Any] | None, problem: str | None) -> None:
        title = self.query_one("#turn-prompt-title", Label)
        if view is None:
            said = problem or "nothing recorded (turns are recorded from this version on)"
            title.update(display_text(f"{self.session_id} · turn {turn}: {said}"))
            return
        self.turn = turn
        calls = len(view["calls"])
        title.update(
            display_text(
                f"What the model received · {self.session_id} · turn {turn} · "
                f"{calls} call{'s' if calls != 1 else ''} ([ ] other turns)"
            )
        )
        self.query_one("#turn-prompt-text", Static).update(view_text(view))
