"""What the dashboard opens over itself, and the work behind it: a digest previewed then
written, who wrote an entry, the review inbox, recall and showing what it found."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from oryxtui.errors import OryxError
from oryxtui.memory import MemoryEntry, Scope
from oryxtui.phrases import entries
from oryxtui.tui.screens.change_entry import ConfirmScreen
from oryxtui.tui.text import tell
from oryxtui.workspace import AgentName

if TYPE_CHECKING:
    from oryxtui.memory.digest import Digest
    from oryxtui.tui.screens.dashboard import DashboardScreen
    from oryxtui.tui.screens.recall import Found


# A save, and what it may replace ------------------------------------------------------------------


def open_save(screen: DashboardScreen, agent: AgentName, saved: Callable[..., None]) -> None:
    """The save dialog for the agent's memory."""
    from oryxtui.phrases import agent_label
    from oryxtui.tui.screens.save_entry import SaveEntryScreen

    screen.app.push_screen(
        SaveEntryScreen(agent_label(agent), partial(_save, screen, agent)), saved
    )


def _save(screen: DashboardScreen, agent: AgentName, text: str, scope: str) -> MemoryEntry:
    """Saved, with the check: what it may replace is said (u on that entry replaces it, the
    review inbox lists it until someone acts)."""
    done = screen.service.save_checked(agent, text, scope)
    for update in done.may_update:
        older = update.entry
        tell(
            screen,
            f"This may replace the older entry of {older.time or 'no time'}: {older.content} "
            "— if it is no longer true, the review inbox (I) replaces it in one key (u).",
            title="May replace",
        )
    return done.entry


# A digest ----------------------------------------------------------------------------------------


def preview_digest(screen: DashboardScreen, agent: AgentName) -> None:
    """The next digest of the agent, made in a worker, then offered for writing."""
    screen.run_worker(
        partial(_preview, screen, agent),
        group="digest",
        exclusive=True,
        thread=True,
        exit_on_error=False,
    )


def _preview(screen: DashboardScreen, agent: AgentName) -> None:
    try:
        summarise, method, warnings = screen.place.summariser(agent)
        digest = screen.service.consolidate(agent, True, summarise, method)
    except OryxError as exc:
        tell(screen, str(exc), severity="error")
        return
    for warning in warnings:
        tell(screen, warning, severity="warning")
    screen.app.call_from_thread(_confirm, screen, agent, digest)


def _confirm(screen: DashboardScreen, agent: AgentName, digest: Digest | None) -> None:
    if digest is None:
        tell(
            screen,
            "Nothing to consolidate: every entry outside the window has a digest already.",
            title="Digest",
        )
        return
    new, before = len(digest.covers), digest.uncovered_before
    title = f"Write a digest of {entries(new)}?"
    pushed = new - before
    detail = (
        f"{entries(before)} outside the window {'is' if before == 1 else 'are'} not covered "
        "by a digest"
        + (
            f"; writing one pushes {entries(pushed)} more out, and it covers them too"
            if pushed > 0
            else ""
        )
        + f".\n\n{digest.content}\n\nThe covered entries stay in the memory, and stay "
        "recallable."
    )
    write = partial(screen.service.save, agent, digest.content, Scope.ARCHIVAL, "digest")
    screen.app.push_screen(ConfirmScreen(title, detail, write), partial(_written, screen, agent))


def _written(screen: DashboardScreen, agent: AgentName, entry: MemoryEntry | None) -> None:
    if entry is not None:
        screen.pacer.request(agent)
        tell(screen, f"Digest written ({entry.scope.value}).", title="Memory")


# Who wrote an entry ------------------------------------------------------------------------------


def find_origin(screen: DashboardScreen, agent: AgentName, entry: MemoryEntry) -> None:
    """Who wrote the entry: said, or — an agent's — its turn, in the sessions view."""
    screen.run_worker(
        partial(_origin, screen, agent, entry),
        group="origin",
        exclusive=True,
        thread=True,
        exit_on_error=False,
    )


def _origin(screen: DashboardScreen, agent: AgentName, entry: MemoryEntry) -> None:
    try:
        origins = screen.place.origins(agent, [entry])
    except OryxError as exc:
        tell(screen, str(exc), severity="error")
        return
    _may_replace(screen, agent, entry)
    origin = origins.get(entry.id, {"by": "unknown"})
    session = origin.get("session")
    if session:
        turn = origin.get("turn")
        at = (str(session), turn if isinstance(turn, int) else None)
        from oryxtui.tui.screens.sessions import SessionsScreen

        app = screen.app
        app.call_from_thread(app.push_screen, SessionsScreen(screen.agent_loop, agent, at=at))
        return
    if origin.get("by") == "unknown":
        said = "Who wrote this entry is unknown: it is older than the history, or hand-written."
    else:
        change = f"{origin.get('op', 'a change')} #{origin.get('change')}"
        said = f"Written by {origin['by']} ({change}, {origin.get('time') or 'time unknown'})."
    tell(screen, said, title="Origin")


def _may_replace(screen: DashboardScreen, agent: AgentName, entry: MemoryEntry) -> None:
    """Beside its origin: what the entry may replace, or what may replace it."""
    try:
        found = screen.service.suggestions(agent)
    except OryxError:
        return  # a memory without a history suggests nothing
    act = "the review inbox (I) replaces it in one key (u)"
    for old, new, _ in found:
        if new.id == entry.id:
            said = f"This entry may replace the older one of {old.time or 'no time'}: {old.content}"
            tell(screen, f"{said} — {act}.", title="May replace")
        elif old.id == entry.id:
            tell(
                screen,
                f"A newer entry may replace this one: {new.content} — {act}.",
                title="May be out of date",
            )


# The review inbox, and recall --------------------------------------------------------------------


def open_review(screen: DashboardScreen) -> None:
    """The review inbox over every agent; the counts are read again when it closes."""
    from oryxtui.tui.screens.review import ReviewScreen
    from oryxtui.tui.screens.sessions import SessionsScreen

    def open_turn(agent: AgentName, session: str, turn: int | None) -> None:
        screen.app.push_screen(SessionsScreen(screen.agent_loop, agent, at=(session, turn)))

    inbox = ReviewScreen(
        screen.service,
        lambda: list(screen.agent_list.order),
        open_turn,
        lambda: screen.agent_loop().episodes,
    )
    screen.app.push_screen(inbox, lambda _: screen.read_again(counts=True))


def open_recall(
    screen: DashboardScreen, agent: AgentName, found: Callable[[Found | None], None]
) -> None:
    """Recall over the agent (or every agent), core entries that match first; `found` is
    given what the user picked."""
    from oryxtui.tui.screens.recall import RecallScreen

    service = screen.service
    agents = list(screen.agent_list.order)

    def find_core(query: str, everywhere: bool) -> list[tuple[AgentName, MemoryEntry]]:
        return [
            (who, entry)
            for who in (agents if everywhere else [agent])
            for entry in service.find_core(who, query)
        ]

    recall = RecallScreen(
        agent,
        partial(service.recall, agent),
        service.ranked,
        service.embeds,
        partial(service.recall_across, agents),
        find_core,
    )
    screen.app.push_screen(recall, found)


class Reveal:
    """A recall result shown: its agent selected, its pane focused, the cursor on it (once
    its memory is on screen, if another agent's)."""

    def __init__(self, screen: DashboardScreen) -> None:
        self.screen = screen
        self.waiting: Found | None = None

    def found(self, found: Found | None) -> None:
        if found is None:
            return
        self.waiting = found
        if found.agent != self.screen.shown:
            self.screen.select(found.agent)  # its memory comes in a worker: see `loaded`
        else:
            self.now()

    def loaded(self, agent: AgentName) -> None:
        """The agent's memory is on screen: the result waiting for it is shown."""
        if self.waiting is not None and self.waiting.agent == agent:
            self.screen.call_after_refresh(self.now)

    def now(self) -> None:
        found, self.waiting = self.waiting, None
        if found is not None and not self.screen.memory_view.reveal(found.entry):
            tell(
                self.screen, "That entry changed since it was found; recall again.", title="Recall"
            )
