"""What the dashboard opens over itself, and the work behind it: the save dialog, a digest
previewed then written, who wrote an entry, the review inbox and recall. Each is given only what
it needs (the place, the app or the widget whose workers it runs, the agent) and answers through
the callback it is given, never by reaching into the screen that opened it."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from oryxtui.errors import OryxError
from oryxtui.memory import MemoryEntry, Scope
from oryxtui.phrases import entries
from oryxtui.tui.screens.change_entry import ConfirmScreen
from oryxtui.tui.screens.entry import may_replace, written_by
from oryxtui.tui.text import tell
from oryxtui.workspace import AgentName

if TYPE_CHECKING:
    from textual.app import App
    from textual.widget import Widget

    from oryxtui.memory.digest import Digest
    from oryxtui.places import Loop, Place
    from oryxtui.tui.screens.recall import Found

Reread = Callable[[AgentName], None]  # the agent's memory is read again (it changed)


# A save, and what it may replace ------------------------------------------------------------------


def open_save(
    app: App[Any], place: Place, agent: AgentName, saved: Callable[[MemoryEntry | None], None]
) -> None:
    """The save dialog for the agent's memory; `saved` is given the entry (None: cancelled)."""
    from oryxtui.phrases import agent_label
    from oryxtui.tui.screens.save_entry import SaveEntryScreen

    app.push_screen(SaveEntryScreen(agent_label(agent), partial(_save, app, place, agent)), saved)


def _save(app: App[Any], place: Place, agent: AgentName, text: str, scope: str) -> MemoryEntry:
    """Saved, with the check: what it may replace is said (u on that entry replaces it, the
    review inbox lists it until someone acts)."""
    done = place.memory.save_checked(agent, text, scope)
    for update in done.may_update:
        older = update.entry
        tell(
            app,
            f"This may replace the older entry of {older.time or 'no time'}: {older.content} "
            "— if it is no longer true, the review inbox (I) replaces it in one key (u).",
            title="May replace",
        )
    return done.entry


# A digest ----------------------------------------------------------------------------------------


def preview_digest(host: Widget, place: Place, agent: AgentName, written: Reread) -> None:
    """The next digest of the agent, made in a worker of `host`, then offered for writing."""
    host.run_worker(
        partial(_preview, host.app, place, agent, written),
        group="digest",
        exclusive=True,
        thread=True,
        exit_on_error=False,
    )


def _preview(app: App[Any], place: Place, agent: AgentName, written: Reread) -> None:
    try:
        summarise, method, warnings = place.summariser(agent)
        digest = place.memory.consolidate(agent, True, summarise, method)
    except OryxError as exc:
        tell(app, str(exc), severity="error")
        return
    for warning in warnings:
        tell(app, warning, severity="warning")
    app.call_from_thread(_confirm, app, place, agent, digest, written)


def _confirm(
    app: App[Any], place: Place, agent: AgentName, digest: Digest | None, written: Reread
) -> None:
    if digest is None:
        tell(
            app,
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
        + f".\n\n{digest.readable}\n\nThe covered entries stay in the memory, and stay "
        "recallable."
    )
    write = partial(place.memory.save, agent, digest.content, Scope.ARCHIVAL, "digest")
    app.push_screen(ConfirmScreen(title, detail, write), partial(_written, app, agent, written))


def _written(app: App[Any], agent: AgentName, written: Reread, entry: MemoryEntry | None) -> None:
    if entry is not None:
        written(agent)
        tell(app, f"Digest written ({entry.scope.value}).", title="Memory")


# Who wrote an entry ------------------------------------------------------------------------------


def find_origin(
    host: Widget, place: Place, agent_loop: Callable[[], Loop], steer: tuple[AgentName, MemoryEntry]
) -> None:
    """Who wrote the entry: said, or — an agent's — its turn, in the sessions view."""
    host.run_worker(
        partial(_origin, host.app, place, agent_loop, *steer),
        group="origin",
        exclusive=True,
        thread=True,
        exit_on_error=False,
    )


def _origin(
    app: App[Any],
    place: Place,
    agent_loop: Callable[[], Loop],
    agent: AgentName,
    entry: MemoryEntry,
) -> None:
    try:
        origins = place.origins(agent, [entry])
    except OryxError as exc:
        tell(app, str(exc), severity="error")
        return
    _may_replace(app, place, agent, entry)
    origin = origins.get(entry.id, {"by": "unknown"})
    session = origin.get("session")
    if session:
        turn = origin.get("turn")
        at = (str(session), turn if isinstance(turn, int) else None)
        from oryxtui.tui.screens.sessions import SessionsScreen

        app.call_from_thread(app.push_screen, SessionsScreen(agent_loop, agent, at=at))
        return
    tell(app, written_by(origin), title="Origin")


def _may_replace(app: App[Any], place: Place, agent: AgentName, entry: MemoryEntry) -> None:
    """Beside its origin: what the entry may replace, or what may replace it."""
    try:
        found = place.memory.suggestions(agent)
    except OryxError:
        return  # a memory without a history suggests nothing
    act = "the review inbox (I) replaces it in one key (u)"
    for title, said in may_replace(found, entry):
        tell(app, f"{said} — {act}.", title=title)


# The review inbox, and recall --------------------------------------------------------------------


def open_review(
    app: App[Any],
    place: Place,
    agents: Callable[[], list[AgentName]],
    agent_loop: Callable[[], Loop],
    closed: Callable[[object], None],
) -> None:
    """The review inbox over every agent (`agents`, read when it needs them); `closed` is
    called when it closes (what it approved changed counts)."""
    from oryxtui.tui.screens.review import ReviewScreen
    from oryxtui.tui.screens.sessions import SessionsScreen

    def open_turn(agent: AgentName, session: str, turn: int | None) -> None:
        app.push_screen(SessionsScreen(agent_loop, agent, at=(session, turn)))

    inbox = ReviewScreen(place.memory, agents, open_turn, lambda: agent_loop().episodes)
    app.push_screen(inbox, closed)


def open_recall(
    app: App[Any],
    place: Place,
    agent: AgentName,
    agents: list[AgentName],
    found: Callable[[Found | None], None],
) -> None:
    """Recall over the agent (or every agent of `agents`), core entries that match first;
    `found` is given what the user picked."""
    from oryxtui.tui.screens.recall import RecallScreen

    service = place.memory

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
    app.push_screen(recall, found)
