"""One entry opened (enter on it): its id, its whole text however long, when it was written
and by whom, and what it replaced or what may replace it — read from the place in a worker."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from oryxtui.errors import OryxError
from oryxtui.memory import MemoryEntry
from oryxtui.places import Place
from oryxtui.tui.text import display_text
from oryxtui.workspace import AgentName

WHOLE_TEXT = 200_000  # characters shown (scrolled); a longer hand-written line says how many more


@dataclass(frozen=True)
class EntryFacts:
    """What the place knows of an entry beside its text, each as a line to show."""

    written: str
    replaced: list[str] = field(default_factory=list)
    may: list[str] = field(default_factory=list)


def written_by(origin: dict[str, Any]) -> str:
    """Who wrote an entry and when, from its origin (`place.origins`), in a sentence."""
    if origin.get("by") == "unknown":
        return "Who wrote this entry is unknown: it is older than the history, or hand-written."
    turn = f", turn {origin['turn']} of {origin['session']}" if origin.get("session") else ""
    change = f"{origin.get('op', 'a change')} #{origin.get('change')}{turn}"
    return f"Written by {origin['by']} ({change}, {origin.get('time') or 'time unknown'})."


def may_replace(
    suggested: list[tuple[MemoryEntry, MemoryEntry, int]], entry: MemoryEntry
) -> list[tuple[str, str]]:
    """(a title, a sentence) for each open suggestion `entry` is in (`memory.suggestions`):
    what it may replace, or what may replace it."""
    said = []
    for old, new, _ in suggested:
        if new.id == entry.id:
            older = f"{old.time or 'no time'}: {old.content}"
            said.append(("May replace", f"This entry may replace the older one of {older}"))
        elif old.id == entry.id:
            said.append(
                ("May be out of date", f"A newer entry may replace this one: {new.content}")
            )
    return said


def entry_facts(place: Place, agent: AgentName, entry: MemoryEntry) -> EntryFacts:
    """Who wrote `entry` and when, what it replaced, what it may replace or be replaced by (a
    memory without a history knows none of it, and says so)."""
    memory = place.memory
    try:
        origin = place.origins(agent, [entry]).get(entry.id, {"by": "unknown"})
    except OryxError as exc:
        return EntryFacts(f"Who wrote it cannot be told here: {exc}")
    written = written_by(origin)
    try:
        versions = memory.replaced_versions(agent)
        suggested = memory.suggestions(agent)
    except OryxError:
        return EntryFacts(written)
    replaced = [
        f"{v.entry.time or 'no time'}  {v.entry.content}  (until {v.until or '?'}, by {v.actor})"
        for v in versions
        if v.current.id == entry.id or v.successor.id == entry.id
    ]
    return EntryFacts(written, replaced, [said for _, said in may_replace(suggested, entry)])


class EntryScreen(ModalScreen[None]):
    """An entry in full, over the dashboard; escape or enter closes it."""

    BINDINGS = [Binding("escape,enter,q", "close", "Close", id="entry.close")]

    def __init__(self, place: Place, agent: AgentName, entry: MemoryEntry) -> None:
        super().__init__()
        self.place = place
        self.agent = agent
        self.entry = entry

    def compose(self) -> ComposeResult:
        entry = self.entry
        text = display_text(entry.content, WHOLE_TEXT)
        if len(entry.content) > WHOLE_TEXT:
            text = text[:WHOLE_TEXT] + f"… ({len(entry.content) - WHOLE_TEXT:,} more characters)"
        with Vertical(id="entry-dialog", classes="dialog"):
            title = f"{entry.scope.value.capitalize()} entry {entry.id}"
            yield Label(title, classes="dialog-title", markup=False)
            yield Static(
                f"Written {entry.time or 'with no time (hand-written)'} · "
                f"{len(entry.content):,} characters",
                id="entry-time",
                markup=False,
            )
            with VerticalScroll(id="entry-text"):
                yield Static(text, markup=False)
            yield Static("Reading its history…", id="entry-facts", markup=False)
            yield Static("escape closes", classes="dialog-hint", markup=False)

    def on_mount(self) -> None:
        self.query_one("#entry-text", VerticalScroll).focus()
        self._read()

    @work(thread=True, exclusive=True, exit_on_error=False, group="entry-facts")
    def _read(self) -> None:
        facts = entry_facts(self.place, self.agent, self.entry)
        self.app.call_from_thread(self._show, facts)

    def _show(self, facts: EntryFacts) -> None:
        lines = [facts.written]
        if facts.replaced:
            lines.append("It replaced:")
            lines += [f"  {line}" for line in facts.replaced]
        else:
            lines.append("It replaced nothing.")
        lines += facts.may
        shown = "\n".join(display_text(line, 2000) for line in lines)
        self.query_one("#entry-facts", Static).update(shown)

    def action_close(self) -> None:
        self.dismiss(None)
