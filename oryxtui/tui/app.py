"""The dashboard app: the services, the stylesheet, the keymap and the workspace watcher. What
is on screen is the DashboardScreen's."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import App
from textual.binding import Binding
from textual.filter import LineFilter

from oryxtui.agent.sessions import os_user
from oryxtui.config import Settings
from oryxtui.errors import OryxError
from oryxtui.memory import MemoryService
from oryxtui.memory.events import (
    AgentsChange,
    DatabaseWritten,
    Event,
    Hello,
    HistoryWritten,
    IndexProgress,
    MemoryChange,
    Reset,
    ServerState,
    SessionMoved,
)
from oryxtui.memory.history import Actor
from oryxtui.memory.store import Listened, Watch
from oryxtui.notices import NOTICES
from oryxtui.places import Attached, Here, Place
from oryxtui.tui.commands import DashboardCommands
from oryxtui.tui.messages import (
    AgentsChanged,
    Heard,
    HistoryChanged,
    IndexChanged,
    MemoryChanged,
    Noticed,
    ServersChanged,
    StoreChanged,
    WatchStarted,
)
from oryxtui.tui.screens.dashboard import DashboardScreen
from oryxtui.tui.text import Neutralised, tell
from oryxtui.watching import watch_workspace
from oryxtui.workspace import Workspace

if TYPE_CHECKING:
    from oryxtui.agent.loop import AgentLoop
    from oryxtui.places import Loop
    from oryxtui.remote.fleet import Fleet

REMOTE_POLL_SECONDS = 3.0
NEUTRALISED = Neutralised()


def stylesheet() -> Path:
    """app.tcss inside an installed wheel, or in the checkout for an editable install."""
    package = Path(__file__).resolve().parent.parent
    for candidate in (package / "styles" / "app.tcss", package.parent / "styles" / "app.tcss"):
        if candidate.exists():
            return candidate
    raise FileNotFoundError("oryxtui's styles/app.tcss is missing from the installation")


class ToApp(logging.Handler):
    """Posts each notice logged (from any thread) to the app."""

    def __init__(self, app: OryxApp) -> None:
        super().__init__(logging.WARNING)
        self.app = app

    def emit(self, record: logging.LogRecord) -> None:
        self.app.post_message(Noticed(record.getMessage()))


class OryxApp(App[None]):
    TITLE = "oryxtui"
    CSS_PATH = str(stylesheet())
    COMMANDS = App.COMMANDS | {DashboardCommands}
    BINDINGS = [Binding("q", "quit", "Quit", id="quit")]

    def __init__(
        self,
        workspace: Workspace | None = None,
        settings: Settings | None = None,
        service: MemoryService | None = None,
        monotonic: Callable[[], float] = time.monotonic,
        watch: bool = True,
        runner: AgentLoop | None = None,
        user: str | None = None,
        place: Place | None = None,
    ) -> None:
        """The dashboard over a workspace (with its settings, and the memory and loop to use
        if given), or over `place`."""
        super().__init__()
        if place is None:
            if workspace is None:
                raise ValueError("The dashboard needs a workspace or a place.")
            settings = settings or Settings()
            memory = service or MemoryService.open(workspace, settings, actor=Actor("dashboard"))
            place = Here(workspace, settings, memory, runner)
        self.place = place
        self.settings = place.settings
        self.service = place.memory
        self._runner_lock = threading.Lock()
        self.dashboard = DashboardScreen(place, self.agent_loop, user or os_user(), monotonic)
        self.watch_files = watch
        self.watching = False  # the workspace's changes are heard from now on (its watch is set up)
        self._stopping = threading.Event()  # the index keeper and the listener end with the app
        self._notices = ToApp(self)
        self._said: set[str] = set()

    @classmethod
    def attached(cls, fleet: Fleet, user: str | None = None) -> OryxApp:
        """The dashboard over servers (`oryxtui attach`): their agents, memory and loops in
        the place of a workspace's; no files to watch (each server's events say what
        changed)."""
        return cls(place=Attached(fleet), user=user)

    def agent_loop(self) -> Loop:
        """The loop the chat and the prompt preview run, made on first use (from their workers:
        importing it is not on the way to the first frame)."""
        with self._runner_lock:
            return self.place.loop()

    def get_line_filters(self) -> Sequence[LineFilter]:
        """Textual's filters, then the one that keeps every control out of the terminal."""
        return [*super().get_line_filters(), NEUTRALISED]

    def get_default_screen(self) -> DashboardScreen:
        return self.dashboard

    def on_mount(self) -> None:
        # Workers' notices (a save that landed unrecorded, records skipped) as notifications.
        logging.getLogger(NOTICES).addHandler(self._notices)
        if self.settings.tui.keymap:
            self.set_keymap(self.settings.tui.keymap)
        watched = self.place.watched()
        if self.watch_files and watched is not None:
            # Agent folders and AGENT.md files, whatever keeps the memory; after the first frame
            # (importing the watcher would hold it), and what changed before the watch is set up
            # is read again when it is (WatchStarted).
            self.call_after_refresh(self._watch, watched)
        listened = self.place.listened()
        if listened is not None:
            self._listen(listened)  # a shared database (or a server) announces every change
        if self.service.watch is Watch.POLL:
            # Memory on a server has no files to watch: ask it again every few seconds.
            self.set_interval(REMOTE_POLL_SECONDS, self._poll)

        if self.service.embeds:
            # After the first frame is drawn: loading NumPy and a model beside it would hold
            # the interpreter while the first agent's memory is put on screen.
            self.call_after_refresh(self._keep_index)

    @work(thread=True, exit_on_error=False, group="index")
    def _keep_index(self) -> None:
        """Index every agent's new entries as they are written (NumPy and the embedder load
        here, after the first frame)."""
        from oryxtui.memory.recall.keeper import keep_index

        dashboard = self.dashboard
        keep_index(
            self.service,
            self.place.memories,
            self._stopping,
            lambda agent, status: dashboard.post_message(IndexChanged(agent, status)),
        )

    @work(thread=True, exit_on_error=False, group="listen")
    def _listen(self, store: Listened) -> None:
        """Changes made on any host, as the database announces them; while it cannot be
        reached, the dashboard keeps what it showed and says so once."""

        def heard(event: Event) -> None:
            self.post_message(Heard(event))

        title = self.place.lost_title

        def lost(sentence: str) -> None:
            note = f"{sentence} Showing what was last read; reconnecting."
            tell(self, note, title=title, severity="warning")

        store.listen(self._stopping, heard, lost)

    @on(Heard)
    def _heard(self, heard: Heard) -> None:
        """What changed (the watcher saw it, the database or a server said it): the dashboard
        is told in its own words."""
        dashboard = self.dashboard
        match heard.event:
            case MemoryChange(agent):
                dashboard.post_message(MemoryChanged(agent))
            case HistoryWritten(agent):
                dashboard.post_message(HistoryChanged(agent))
            case Reset() | DatabaseWritten():  # which agent is not known: every one
                dashboard.post_message(StoreChanged(everyone=True))
            case Hello():
                self.watching = True
                dashboard.post_message(WatchStarted())
            case AgentsChange():
                dashboard.post_message(AgentsChanged())
            case ServerState():  # an attached server was lost or is back
                dashboard.post_message(ServersChanged())
            case SessionMoved(agent):
                self._turned(agent)
            case IndexProgress(agent):
                self.run_worker(
                    partial(self._index_status, agent),
                    group=f"index-status-{agent}",
                    exclusive=True,  # a burst of index writes: the newest status counts
                    thread=True,
                    exit_on_error=False,
                )

    def _index_status(self, agent: str | None) -> None:
        """Another host indexed the agent's entries: how much of its memory has vectors."""
        try:
            status = self.service.index_status(agent)
        except OryxError:
            return  # said when the memory is read
        if status is not None:
            self.dashboard.post_message(IndexChanged(agent, status))

    def _turned(self, agent: str | None) -> None:
        """A session of `agent` moved on somewhere: the sessions view of it, if open, lists
        it again."""
        from oryxtui.tui.screens.sessions import SessionsScreen

        for screen in self.screen_stack:
            if isinstance(screen, SessionsScreen) and screen.agent == agent:
                screen.reload()

    async def run_async(self, *args: Any, **kwargs: Any) -> None:
        try:
            return await super().run_async(*args, **kwargs)  # what `exit` was given
        finally:
            self._ended()  # even if the shutdown failed before Unmount

    def on_unmount(self) -> None:
        self._ended()
        logging.getLogger(NOTICES).removeHandler(self._notices)

    def _ended(self) -> None:
        """The index keeper and the listener stop (they would keep the process alive), and a
        worker waiting on a server ends now: quitting never waits."""
        self._stopping.set()
        self.place.hang_up()

    @on(Noticed)
    def _noticed(self, event: Noticed) -> None:
        if event.text not in self._said:  # a notice repeated by every reload is said once
            self._said.add(event.text)
            tell(self, event.text, title="Warning", severity="warning")

    def _poll(self) -> None:
        self.dashboard.post_message(StoreChanged(everyone=False))

    @work(exclusive=True, exit_on_error=False, group="watch")
    async def _watch(self, workspace: Workspace) -> None:
        tui = self.settings.tui
        database = self.service.watch is Watch.DATABASE
        async for changes in watch_workspace(
            workspace, tui.watch_step_ms, tui.watch_debounce_ms, database=database
        ):
            for event in changes.events():
                self.post_message(Heard(event))
