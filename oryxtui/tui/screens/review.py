"""The review inbox (`I`): what agents and outside writers wrote that no one has approved, and
the saves held for review — across every agent (and attached server), newest first, grouped by
agent, each with who wrote it and the turn that did; a held edit, move or delete shows the
entry as it is and as it would be; and saves that may replace an older entry. a approves,
x rejects, i edits then approves, A approves all of the highlighted entry's agent, enter opens
the turn; u replaces the older entry by the save, d keeps both."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widgets import Footer, Label, OptionList, Static
from textual.widgets.option_list import Option

from oryxtui.errors import OryxError
from oryxtui.memory import MemoryEntry
from oryxtui.memory.history import describe_actor
from oryxtui.memory.service.reviewing import Approved, Awaiting
from oryxtui.phrases import agent_label, entries
from oryxtui.tui.screens.change_entry import ConfirmScreen, EditEntryScreen
from oryxtui.tui.text import display_text, tell
from oryxtui.workspace import AgentName

if TYPE_CHECKING:
    from oryxtui.places import Episodes, Memory


@dataclass(frozen=True)
class Item:
    agent: AgentName
    awaiting: Awaiting


@dataclass(frozen=True)
class MayReplace:
    """A save's suggestion that it replaces an older entry: u replaces, d keeps both."""

    agent: AgentName
    old: MemoryEntry
    new: MemoryEntry
    change: int
    held: bool = False  # one of the two (or both) waits for review: u approves it too


def _row(mark: Text, text: Text) -> Table:
    """A row of the list: its mark, then the text — wrapped lines start under the text."""
    grid = Table.grid()
    grid.add_column(width=MARK_WIDTH, no_wrap=True)
    grid.add_column(ratio=1)
    grid.add_row(mark, text)
    return grid


MARK_WIDTH = 6


def suggestion_row(item: MayReplace) -> Table:
    text = Text(f"{item.new.time or '?'}  ", style="dim")
    text.append(display_text(item.new.content))
    text.append(f"\nmay replace: {display_text(item.old.content)}", style="dim")
    return _row(Text("hint", style="cyan"), text)


def suggestion_text(item: MayReplace) -> Text:
    text = Text("This save may replace an older entry (the same subject, another value).\n\n")
    if item.held:
        text.append("They wait for review as a pair: u approves them and replaces the older.\n\n")
    text.append("older: ", style="red")
    text.append(f"{item.old.time or '?'}  {display_text(item.old.content)}\n")
    text.append("newer: ", style="green")
    text.append(f"{item.new.time or '?'}  {display_text(item.new.content)}\n\n")
    text.append(
        "u replaces the older one (it leaves the memory; the history keeps it) · d keeps both "
        "(not suggested again)",
        style="dim",
    )
    return text


def item_row(item: Item) -> Table:
    awaiting = item.awaiting
    entry, record = awaiting.entry, awaiting.record
    text = Text(f"{entry.time or '?'}  ", style="dim")
    if awaiting.was is not None:
        text.append(f"{awaiting.proposes}: ", style="bold yellow")
    text.append(display_text(entry.content))
    text.append(f"\n{display_text(describe_actor(record))}", style="dim")
    return _row(Text("held" if awaiting.held else "", style="yellow"), text)


def proposal_text(awaiting: Awaiting) -> Text:
    """A held edit, move or delete as the change it would make: the entry as it is, and as
    it would be."""
    was, entry = awaiting.was, awaiting.entry
    assert was is not None
    text = Text(f"Held {awaiting.proposes}: nothing changes until it is approved.\n", "yellow")
    text.append(f"− {was.scope.value}: ", style="red")
    text.append(display_text(was.content) + "\n")
    if awaiting.proposes != "delete":
        text.append(f"+ {entry.scope.value}: ", style="green")
        text.append(display_text(entry.content) + "\n")
    return text


class ReviewScreen(Screen[None]):
    BINDINGS = [
        Binding("escape,q", "close", "Back", id="review.close"),
        Binding("a", "approve", "Approve", id="review.approve"),
        Binding("x", "reject", "Reject", id="review.reject"),
        Binding("i", "edit", "Edit, approve", id="review.edit"),
        Binding("A", "approve_agent", "Approve agent", id="review.approve-agent"),
        Binding("u", "replace_older", "Replace older", id="review.replace"),
        Binding("d", "keep_both", "Keep both", id="review.keep"),
        Binding("enter", "turn", "The turn", id="review.turn"),
    ]

    def __init__(
        self,
        service: Memory,
        agents: Callable[[], Sequence[AgentName]],
        open_turn: Callable[[AgentName, str, int | None], None],
        episodes: Callable[[], Episodes],
    ) -> None:
        super().__init__()
        self.service = service
        self.agents = agents
        self.open_turn = open_turn
        self.episodes = episodes  # the loop's episode store: the turn that wrote an entry
        self.items: list[Item | MayReplace] = []
        self._at = 0  # where the highlight was among the items

    def compose(self) -> ComposeResult:
        yield Label("Review", id="review-title", markup=False)
        with Horizontal(id="review-body"):
            listed = OptionList(id="review-list")
            listed.border_title = "Awaiting review, newest first"
            yield listed
            with VerticalScroll(id="review-detail") as detail:
                detail.border_title = "Who wrote it, and the turn"
                yield Static("", id="review-text")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()
        self.reload()

    def reload(self) -> None:
        self._load()

    @work(thread=True, exclusive=True, exit_on_error=False, group="review")
    def _load(self) -> None:
        found: list[Item | MayReplace] = []
        problems = []
        for agent in self.agents():
            try:
                waiting = self.service.awaiting_review(agent)
                held = {a.entry.line for a in waiting if a.held}
                found += [
                    MayReplace(agent, old, new, n, bool({old.line, new.line} & held))
                    for old, new, n in self.service.suggestions(agent)
                ]
                found += [Item(agent, a) for a in waiting]
            except OryxError as exc:
                problems.append(str(exc))
        self.app.call_from_thread(self._loaded, found, problems)

    def _loaded(self, found: list[Item | MayReplace], problems: list[str]) -> None:
        listed = self.query_one(OptionList)
        was = self.highlighted
        self.items = found
        options: list[Option] = []
        agent: object = object()
        for index, item in enumerate(found):
            if item.agent != agent:  # grouped by agent, in the order the agents are listed
                agent = item.agent
                count = sum(1 for other in found if other.agent == agent)
                heading = Text(f"▾ {agent_label(item.agent)} · {count}", style="bold")
                options.append(Option(heading, id=f"agent-{index}", disabled=True))
            row = suggestion_row(item) if isinstance(item, MayReplace) else item_row(item)
            options.append(Option(row, id=f"item-{index}"))
        listed.set_options(options)
        hints = sum(isinstance(item, MayReplace) for item in found)
        title = f"Review: {entries(len(found) - hints)} awaiting approval"
        if hints:
            title += f" · {hints} may replace an older entry"
        if problems:
            title += f" · ⚠ {problems[0]}"
        self.query_one("#review-title", Label).update(display_text(title))
        if not found:
            self.query_one("#review-text", Static).update("Nothing awaits review.")
            return
        # The item shown before, where it still is; else the one now in its place (after `a`
        # the next one, not the top of the list).
        at = min(self._at, len(found) - 1)
        keep = next((i for i, item in enumerate(found) if was and item == was), at)
        listed.highlighted = listed.get_option_index(f"item-{keep}")

    @property
    def selected(self) -> Item | None:
        """The awaiting change highlighted (None: nothing, or a suggestion)."""
        item = self.highlighted
        return item if isinstance(item, Item) else None

    @property
    def highlighted(self) -> Item | MayReplace | None:
        listed = self.query_one(OptionList)
        if listed.highlighted is None:
            return None
        option = listed.get_option_at_index(listed.highlighted)
        if option.id is None or not option.id.startswith("item-"):
            return None
        index = int(option.id.removeprefix("item-"))
        return self.items[index] if index < len(self.items) else None

    @on(OptionList.OptionSelected, "#review-list")
    def _chosen(self) -> None:
        self.action_turn()  # enter on the list: the list's own binding takes the key

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """u and d are offered (in the footer, and answered) only on a save that may replace
        an older entry: elsewhere they do nothing."""
        if action in ("replace_older", "keep_both"):
            try:
                return isinstance(self.highlighted, MayReplace)
            except NoMatches:  # not composed yet
                return False
        return True

    @on(OptionList.OptionHighlighted, "#review-list")
    def _highlighted(self) -> None:
        self.refresh_bindings()  # u and d come and go with what is highlighted
        item = self.highlighted
        if item is not None:
            self._at = self.items.index(item)
        if isinstance(item, MayReplace):
            self.query_one("#review-text", Static).update(suggestion_text(item))
        elif item is not None:
            self._detail(item)

    @work(thread=True, exclusive=True, exit_on_error=False, group="review-detail")
    def _detail(self, item: Item) -> None:
        record, entry = item.awaiting.record, item.awaiting.entry
        text = Text()
        if item.awaiting.was is not None:
            text.append(proposal_text(item.awaiting))
            text.append("\n")
        else:
            text.append(f"{entry.scope.value}: ", style="bold")
            text.append(display_text(entry.content) + "\n\n")
        if item.awaiting.held and item.awaiting.was is None:
            text.append("Held for review: not in the memory, nor in any prompt.\n", style="yellow")
        text.append(display_text(describe_actor(record)), style="dim")
        text.append(f" · change #{record.n} · {record.time or '?'}\n", style="dim")
        if record.session:
            text.append(f"session {display_text(record.session)}", style="dim")
            if record.turn is not None:
                text.append(f", turn {record.turn} (enter opens it)", style="dim")
            text.append("\n\n")
            try:
                turns = self.episodes().session(record.session)
            except OryxError:
                turns = []
            for episode in turns:
                if episode.turn == record.turn:
                    text.append("user: ", style="bold")
                    text.append(display_text(episode.user) + "\n")
                    text.append("reply: ", style="bold")
                    text.append(display_text(episode.reply) + "\n")
        self.app.call_from_thread(self.query_one("#review-text", Static).update, text)

    # Acting ------------------------------------------------------------------------------------

    def action_close(self) -> None:
        self.dismiss()

    def action_approve(self) -> None:
        item = self.selected
        if item is not None:
            self._act(item.agent, "approve", [item.awaiting.id])

    def action_approve_agent(self) -> None:
        item = self.selected
        if item is not None:
            self._act(item.agent, "approve", None)

    def action_reject(self) -> None:
        """Asks first, as `x` does on the panes: a rejected entry leaves the memory."""
        item = self.selected
        if item is None:
            return
        entry, agent = item.awaiting.entry, item.agent
        if item.awaiting.was is not None:
            title = f"Reject this held {item.awaiting.proposes}? The entry stays as it is."
        elif item.awaiting.held:
            title = "Reject this held save? It never goes into the memory."
        else:
            title = f"Reject this {entry.scope.value} entry? It is removed from the memory."

        def rejected(done: list[MemoryEntry] | None) -> None:
            if done is not None:
                tell(
                    self, f"Rejected {entries(len(done))} of {agent_label(agent)}.", title="Review"
                )
                self.reload()

        reject = partial(self.service.reject, agent, [item.awaiting.id])
        self.app.push_screen(ConfirmScreen(title, entry.line, reject), rejected)

    @work(thread=True, exit_on_error=False, group="review-act")
    def _act(self, agent: AgentName, what: str, ids: list[str] | None) -> None:
        try:
            if what == "approve":
                done = self.service.approve(agent, ids)
            else:
                done = Approved(self.service.reject(agent, ids or []))
        except OryxError as exc:
            tell(self, str(exc), severity="error")
        else:
            verb = "Approved" if what == "approve" else "Rejected"
            tell(self, f"{verb} {entries(len(done))} of {agent_label(agent)}.", title="Review")
            for _, why in done.not_made:
                tell(self, f"Not approved: {why}", severity="warning")
        self.app.call_from_thread(self.reload)

    def action_replace_older(self) -> None:
        item = self.highlighted
        if not isinstance(item, MayReplace):
            tell(self, "u replaces an older entry by a save that may replace it (may replace).")
            return
        self._suggestion(item, "replace")

    def action_keep_both(self) -> None:
        item = self.highlighted
        if isinstance(item, MayReplace):
            self._suggestion(item, "keep")

    @work(thread=True, exit_on_error=False, group="review-act")
    def _suggestion(self, item: MayReplace, what: str) -> None:
        try:
            if what == "replace":
                self.service.supersede(item.agent, item.old.id, item.new.id)
            else:
                self.service.dismiss(item.agent, item.old.id, item.new.id)
        except OryxError as exc:
            tell(self, str(exc), severity="error")
        else:
            done = "Replaced the older entry" if what == "replace" else "Kept both entries"
            tell(self, f"{done} in {agent_label(item.agent)}.", title="Review")
        self.app.call_from_thread(self.reload)

    def action_edit(self) -> None:
        item = self.selected
        if item is None:
            return

        if item.awaiting.proposes == "delete":
            tell(self, "A held delete has no text to edit: approve (a) or reject (x) it.")
            return

        def edit(entry: MemoryEntry, text: str) -> MemoryEntry:
            if item.awaiting.held:  # made first (as its writer's change), then edited
                self.service.approve(item.agent, [item.awaiting.id])
            return self.service.edit(item.agent, entry.id, text)

        def edited(entry: MemoryEntry | None) -> None:
            if entry is not None:  # a person wrote it now: nothing of it awaits review
                tell(self, f"Edited and approved in {agent_label(item.agent)}.", title="Review")
                self.reload()

        entry = item.awaiting.entry
        self.app.push_screen(EditEntryScreen(entry, lambda text: edit(entry, text)), edited)

    def action_turn(self) -> None:
        item = self.selected
        if item is not None and item.awaiting.record.session:
            record = item.awaiting.record
            self.open_turn(item.agent, str(record.session), record.turn)
