"""The dashboard: agents on the left, core and archival memory that live-reload from disk."""

from __future__ import annotations

import os
import shlex
import subprocess
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

from rich.text import Text
from textual import events, on, work
from textual.app import App, ComposeResult, SuspendNotSupported, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Header, Input, OptionList, Static, TabbedContent, TabPane
from textual.worker import get_current_worker

from oryxtui.agent.loop import Agent, LoopEvent
from oryxtui.agent.messages import Message as ChatMessageType
from oryxtui.agent.prompt import Prompt
from oryxtui.agent.sessions import SessionStore, session_id_for
from oryxtui.config import Settings
from oryxtui.errors import OryxError
from oryxtui.memory import MemoryEntry, MemoryService, MemorySnapshot
from oryxtui.memory.format import RecallIndex
from oryxtui.tui.overview import AgentMemory, AgentSummary, load_agent, take_census
from oryxtui.tui.screens.recall import RecallScreen
from oryxtui.tui.screens.save_entry import SaveEntryScreen
from oryxtui.tui.text import display_text
from oryxtui.tui.watcher import GLOBAL, WorkspaceChanges, watch_workspace
from oryxtui.tui.widgets.agent_list import AgentList, agent_of
from oryxtui.tui.widgets.chat_pane import ChatPane
from oryxtui.tui.widgets.memory_pane import MemoryPane
from oryxtui.tui.widgets.prompt_pane import PromptPane
from oryxtui.workspace import Workspace

AgentKey = str | None  # an agent name, or None for the global memory
CHAT_CHANNEL = "tui"
NARROW_WIDTH = 140
REMOTE_POLL_SECONDS = 3.0
CHANGED_MARKER_SECONDS = 5.0
FRESH_SECONDS = 2.5
SUMMARY_BATCH_SECONDS = 0.1
CENSUS_SECONDS = 5.0  # a big file that keeps growing is counted again at most this often
MIN_RELOAD_INTERVAL = 0.05  # at most ~20 reloads a second per agent, however fast the writes


class _NoAgent:
    """No chat turn is running."""


NO_AGENT = _NoAgent()


def _os_user() -> str:
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "user"


def stylesheet() -> Path:
    """app.tcss inside an installed wheel, or in the checkout for an editable install."""
    package = Path(__file__).resolve().parent.parent
    for candidate in (package / "styles" / "app.tcss", package.parent / "styles" / "app.tcss"):
        if candidate.exists():
            return candidate
    raise FileNotFoundError("oryxtui's styles/app.tcss is missing from the installation")


@dataclass
class AgentsListed(Message):
    names: list[str]


@dataclass
class AgentLoaded(Message):
    memory: AgentMemory
    reload: bool  # True when it came from the reload path (counts towards coalescing)


@dataclass
class SummariesLoaded(Message):
    summaries: list[AgentSummary]


@dataclass
class ChatEvent(Message):
    agent: AgentKey
    event: LoopEvent | None  # None: the turn is over


@dataclass
class ChatHistoryLoaded(Message):
    agent: AgentKey
    messages: list
    model: str


@dataclass
class PromptBuilt(Message):
    agent: AgentKey
    prompt: Prompt | None
    error: str | None = None


@dataclass
class WorkspaceChanged(Message):
    changes: WorkspaceChanges


@dataclass
class CensusTaken(Message):
    """A big file's entries, all counted (its snapshot holds only the newest)."""

    agent: AgentKey
    archival_count: int | None
    lost_count: int


@dataclass
class FilterApplied(Message):
    keyword: str
    rows: list[int]
    snapshot_id: int


def arrived_entries(old: MemorySnapshot, new: MemorySnapshot) -> tuple[set[int], set[int]]:
    """Indexes of the core and archival entries in `new` that `old` did not have."""
    old_core = {entry.line for entry in old.core}
    core = {index for index, entry in enumerate(new.core) if entry.line not in old_core}
    before, after = len(old.archival), len(new.archival)
    old_lines, new_lines = old.archival_lines(), new.archival_lines()
    appended = after > before and (before == 0 or old_lines[before - 1] == new_lines[before - 1])
    return core, set(range(before, after)) if appended else set()


def blanked_out(previous: AgentMemory | None, current: AgentMemory) -> bool:
    """The same agent's file went missing or empty after it had entries."""
    old, new = previous.snapshot if previous else None, current.snapshot
    return (
        old is not None
        and new is not None
        and new.blank_file
        and previous is not None
        and previous.summary.name == current.summary.name
        and bool(len(old.core) or len(old.archival))
    )


class OryxApp(App[None]):
    """Attributes down, messages up: workers read disk, handlers here own the state."""

    TITLE = "oryxtui"
    CSS_PATH = str(stylesheet())
    BINDINGS = [
        Binding("s", "save_entry", "Save", id="save"),
        Binding("r", "recall", "Recall", id="recall"),
        Binding("e", "edit", "Edit", id="edit"),
        Binding("slash", "filter", "Filter", id="filter"),
        Binding("c", "chat", "Chat", id="chat"),
        Binding("p", "prompt", "Prompt", id="prompt"),
        Binding("tab", "focus_next", "Next pane", id="focus-next", show=False),
        Binding("shift+tab", "focus_previous", "Previous pane", id="focus-previous", show=False),
        Binding("R", "restore", "Restore lost", id="restore", show=False),
        Binding("q", "quit", "Quit", id="quit"),
    ]

    def __init__(
        self,
        workspace: Workspace,
        settings: Settings | None = None,
        service: MemoryService | None = None,
        monotonic: Callable[[], float] = time.monotonic,
        watch: bool = True,
        runner: Agent | None = None,
        user: str | None = None,
    ) -> None:
        super().__init__()
        self.workspace = workspace
        self.settings = settings or Settings()
        self.service = service or MemoryService.open(workspace, self.settings)
        self.monotonic = monotonic
        self.watch_files = watch
        self.runner = runner or Agent(
            workspace, self.settings, self.service, SessionStore(workspace.db_path)
        )
        self.user = user or _os_user()
        self.prompts: dict[AgentKey, Prompt] = {}
        self.chatting: AgentKey | _NoAgent = NO_AGENT
        self._chat_failed = False
        self.order: list[AgentKey] = []
        self.summaries: dict[AgentKey, AgentSummary] = {}
        self.changed_at: dict[AgentKey, float] = {}
        self.selected: AgentKey = GLOBAL
        self.shown: AgentMemory | None = None
        self.reload_counts: dict[AgentKey, int] = {}
        self.last_applied: tuple[AgentKey, float] | None = None
        self._loading: dict[AgentKey, float] = {}
        self._dirty: set[AgentKey] = set()
        self._filter_index: tuple[int, RecallIndex] | None = None
        self._fresh_timer: Timer | None = None
        self._census_at: dict[AgentKey, float] = {}
        self._census_pending: set[AgentKey] = set()

    # Layout -------------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="body"):
            agents = AgentList(id="agents")
            agents.border_title = "Agents"
            yield agents
            with Vertical(id="main"):
                yield Static("", id="agent-banner", markup=False)
                yield MemoryPane("Core", "core", filterable=False, id="core-pane")
                yield MemoryPane("Archival", "archival", filterable=True, id="archival-pane")
            with TabbedContent(id="side", initial="chat-tab"):
                with TabPane("Chat", id="chat-tab"):
                    yield ChatPane(id="chat")
                with TabPane("Prompt", id="prompt-tab"):
                    yield PromptPane(id="prompt")
        yield Footer()

    def on_mount(self) -> None:
        # Before the first layout, so the first frame is already the right one.
        self.dashboard.set_class(self.size.width < NARROW_WIDTH, "narrow")
        if self.settings.tui.keymap:
            self.set_keymap(self.settings.tui.keymap)
        self.dashboard.query_one("#archival-filter", Input).display = False
        self.dashboard.query_one("#archival-view").focus()
        self._list_agents()
        if self.watch_files:
            self._watch()
        self.set_interval(1.0, self._expire_markers)
        if self.service.backend == "mem0":
            # A mem0 server has no files to watch: ask it again every few seconds.
            self.set_interval(REMOTE_POLL_SECONDS, self._poll_remote)

    @property
    def dashboard(self) -> Screen:
        """The screen the panes live on; `self.query_one` would search a modal when one is open."""
        return self.screen_stack[0]

    @property
    def dashboard_ready(self) -> bool:
        """False while the app shuts down: a worker's late message must not touch gone widgets."""
        stack = self.screen_stack
        return self.is_running and bool(stack) and bool(stack[0].query("#agent-banner"))

    @property
    def chat_pane(self) -> ChatPane:
        return self.dashboard.query_one(ChatPane)

    @property
    def core_pane(self) -> MemoryPane:
        return self.dashboard.query_one("#core-pane", MemoryPane)

    @property
    def archival_pane(self) -> MemoryPane:
        return self.dashboard.query_one("#archival-pane", MemoryPane)

    def agent_label(self, agent: AgentKey) -> str:
        return "the global memory" if agent is None else f"agent {agent}"

    # Workers: they read disk and post messages; they never touch widgets ----------------------

    @work(thread=True, exclusive=True, exit_on_error=False, group="agents")
    def _list_agents(self) -> None:
        self.post_message(AgentsListed(self.workspace.list_agents()))

    @work(thread=True, exit_on_error=False, group="load")
    def _load(self, agent: AgentKey, reload: bool) -> None:
        try:
            memory = load_agent(
                self.workspace, self.service, agent, self.newest_bytes, census=False
            )
        except Exception as exc:  # a bug must not leave the agent stuck "loading" forever
            memory = AgentMemory(AgentSummary(agent, error=f"Could not load: {exc!r}"), None)
            raise
        finally:
            self.post_message(AgentLoaded(memory, reload))

    @work(thread=True, exclusive=True, exit_on_error=False, group="summaries")
    def _load_summaries(self, agents: list[AgentKey]) -> None:
        """Counts for the sidebar, posted in batches so 500 agents do not mean 500 redraws."""
        batch: list[AgentSummary] = []
        posted = time.monotonic()
        for agent in agents:
            batch.append(load_agent(self.workspace, self.service, agent, self.newest_bytes).summary)
            if time.monotonic() - posted > SUMMARY_BATCH_SECONDS:
                self.post_message(SummariesLoaded(batch))
                batch, posted = [], time.monotonic()
        if batch:
            self.post_message(SummariesLoaded(batch))

    def _request_census(self, agent: AgentKey) -> None:
        """Count a big file again, at most every CENSUS_SECONDS: an agent may be appending."""
        if agent in self._census_pending:
            return
        wait = self._census_at.get(agent, -CENSUS_SECONDS) + CENSUS_SECONDS - self.monotonic()
        if wait > 0:
            self._census_pending.add(agent)
            self.set_timer(wait, partial(self._start_census, agent))
        else:
            self._start_census(agent)

    def _start_census(self, agent: AgentKey) -> None:
        self._census_pending.discard(agent)
        self._census_at[agent] = self.monotonic()
        self.run_worker(
            partial(self._take_census, agent),
            group=f"census-{agent}",
            exclusive=True,
            thread=True,
            exit_on_error=False,
        )

    def _take_census(self, agent: AgentKey) -> None:
        """Count every entry of a big file the dashboard shows only the newest of."""
        archival_count, lost_count = take_census(self.service, agent)
        if not get_current_worker().is_cancelled:
            self.post_message(CensusTaken(agent, archival_count, lost_count))

    @property
    def newest_bytes(self) -> int:
        return int(self.settings.tui.large_file_mb * (1 << 20))

    @work(exclusive=True, exit_on_error=False, group="watch")
    async def _watch(self) -> None:
        tui = self.settings.tui
        async for changes in watch_workspace(
            self.workspace,
            tui.watch_step_ms,
            tui.watch_debounce_ms,
            database=self.service.backend == "sqlite",
        ):
            self.post_message(WorkspaceChanged(changes))

    @work(thread=True, exclusive=True, exit_on_error=False, group="filter")
    def _filter(self, keyword: str, memory: AgentMemory) -> None:
        snapshot = memory.snapshot
        if snapshot is None:
            return
        cached = self._filter_index
        if cached is None or cached[0] != id(snapshot):
            cached = (id(snapshot), RecallIndex(snapshot.archival_lines()))
            self._filter_index = cached
        rows = cached[1].positions(keyword)
        self.post_message(FilterApplied(keyword, rows, id(snapshot)))

    @work(thread=True, exclusive=True, exit_on_error=False, group="chat")
    def _run_chat(self, agent: AgentKey, text: str) -> None:
        try:
            for event in self.runner.run(agent, text, CHAT_CHANNEL, self.user):
                self.post_message(ChatEvent(agent, event))
        except Exception as exc:  # a bug must not leave the chat input locked
            self.post_message(ChatEvent(agent, LoopEvent("error", f"The turn failed: {exc!r}")))
            raise
        finally:
            self.post_message(ChatEvent(agent, None))

    @work(thread=True, exclusive=True, exit_on_error=False, group="chat-history")
    def _load_chat(self, agent: AgentKey) -> None:
        session_id = session_id_for(CHAT_CHANNEL, self.user, agent)
        try:
            session = self.runner.sessions.load(session_id, agent, CHAT_CHANNEL, self.user)
            messages = session.messages
        except OryxError as exc:
            messages = [ChatMessageType("assistant", f"⚠ {exc}")]
        try:
            model = self.runner.provider(agent).label
        except OryxError as exc:
            model = f"not configured: {exc}"
        self.post_message(ChatHistoryLoaded(agent, messages, model))

    @work(thread=True, exclusive=True, exit_on_error=False, group="prompt")
    def _build_prompt(self, agent: AgentKey) -> None:
        session_id = session_id_for(CHAT_CHANNEL, self.user, agent)
        try:
            prompt = self.runner.prompt(agent, session_id)
        except OryxError as exc:
            self.post_message(PromptBuilt(agent, None, str(exc)))
            return
        self.post_message(PromptBuilt(agent, prompt))

    # Loading and coalescing -----------------------------------------------------------------

    def request_load(self, agent: AgentKey) -> None:
        """Reload one agent from disk: one at a time per agent, at most ~20 times a second."""
        if agent in self._loading:
            self._dirty.add(agent)
            return
        self._loading[agent] = self.monotonic()
        self.reload_counts[agent] = self.reload_counts.get(agent, 0) + 1
        self._load(agent, True)

    def _finish_load(self, agent: AgentKey) -> None:
        started = self._loading.pop(agent, None)
        if agent in self._dirty:
            self._dirty.discard(agent)
            elapsed = self.monotonic() - (started or 0.0)
            delay = max(0.0, MIN_RELOAD_INTERVAL - elapsed)
            if delay:
                self._loading[agent] = self.monotonic()  # hold the slot until the timer fires
                self.set_timer(delay, partial(self._reload_after_pause, agent))
            else:
                self.request_load(agent)

    def _reload_after_pause(self, agent: AgentKey) -> None:
        self._loading.pop(agent, None)
        self.request_load(agent)

    @on(AgentsListed)
    def _agents_listed(self, event: AgentsListed) -> None:
        if not self.dashboard_ready:
            return
        self.order = [*event.names, GLOBAL]
        for gone in set(self.summaries) - set(self.order):
            del self.summaries[gone]
        for agent in self.order:
            self.summaries.setdefault(agent, AgentSummary(agent))
        first_time = self.shown is None and not self._loading
        if self.selected not in self.order or first_time:
            self.selected = self.order[0]
        self._refresh_sidebar()
        self.request_load(self.selected)
        self._load_summaries([agent for agent in self.order if agent != self.selected])

    @on(AgentLoaded)
    def _agent_loaded(self, event: AgentLoaded) -> None:
        if not self.dashboard_ready:
            return
        memory = event.memory
        agent = memory.summary.name
        if event.reload:
            self._finish_load(agent)
        if agent not in self.summaries:
            return  # the agent went away while it loaded
        if memory.snapshot is not None and memory.snapshot.partial is not None:
            # Only the newest entries were read: keep the last counts until the census is in.
            known = self.summaries[agent]
            memory = AgentMemory(
                replace(
                    memory.summary,
                    archival_count=known.archival_count,
                    lost_count=known.lost_count,
                ),
                memory.snapshot,
            )
            self._request_census(agent)
        if agent == self.selected and (memory.snapshot is not None or event.reload):
            self._show(memory)
            memory = self.shown or memory
        self.summaries[agent] = memory.summary
        self._refresh_sidebar()

    @on(SummariesLoaded)
    def _summaries_loaded(self, event: SummariesLoaded) -> None:
        if not self.dashboard_ready:
            return
        for summary in event.summaries:
            if summary.name in self.summaries:
                self.summaries[summary.name] = summary
        self._refresh_sidebar()

    @on(CensusTaken)
    def _census_taken(self, event: CensusTaken) -> None:
        if not self.dashboard_ready or event.agent not in self.summaries:
            return
        summary = replace(
            self.summaries[event.agent],
            archival_count=event.archival_count,
            lost_count=event.lost_count,
        )
        self.summaries[event.agent] = summary
        self._refresh_sidebar()
        shown = self.shown
        if shown is not None and shown.summary.name == event.agent and shown.snapshot:
            self.shown = AgentMemory(summary, shown.snapshot)
            self._show_banner(summary, shown.snapshot)
            rows = self.archival_pane.view.rows
            keyword = self.dashboard.query_one("#archival-filter", Input).value
            self._show_archival(shown.snapshot, list(rows) if keyword else None, set())

    @on(WorkspaceChanged)
    def _workspace_changed(self, event: WorkspaceChanged) -> None:
        if not self.dashboard_ready:
            return
        now = self.monotonic()
        for agent in event.changes.memory:
            self.changed_at[agent] = now
            if agent in self.summaries:
                self.request_load(agent)
        if event.changes.database:  # which agent is not known: the selected one, then counts
            self.request_load(self.selected)
            self._load_summaries([agent for agent in self.order if agent != self.selected])
        if event.changes.agents_changed:
            self._list_agents()

    # Showing --------------------------------------------------------------------------------

    def _refresh_sidebar(self) -> None:
        now = self.monotonic()
        changed = {a for a, t in self.changed_at.items() if now - t < CHANGED_MARKER_SECONDS}
        sidebar = self.dashboard.query_one(AgentList)
        sidebar.set_agents((self.summaries[agent] for agent in self.order), changed)
        if self.selected in self.order:
            index = self.order.index(self.selected)
            if sidebar.highlighted != index:
                with self.prevent(OptionList.OptionHighlighted):
                    sidebar.highlighted = index

    def _poll_remote(self) -> None:
        if self.order:
            self.request_load(self.selected)

    def _expire_markers(self) -> None:
        if not self.dashboard_ready:
            return  # a timer that fires while the app closes
        now = self.monotonic()
        expired = [a for a, t in self.changed_at.items() if now - t >= CHANGED_MARKER_SECONDS]
        for agent in expired:
            del self.changed_at[agent]
        if expired:
            self._refresh_sidebar()

    def _show(self, memory: AgentMemory) -> None:
        previous = self.shown
        if blanked_out(previous, memory):
            # Keep showing the last good content; the next write brings the file back.
            assert previous is not None
            note = "MEMORY.md is missing or empty on disk; showing the content last read."
            memory = AgentMemory(replace(previous.summary, error=note), previous.snapshot)
        self.shown = memory
        summary, snapshot = memory.summary, memory.snapshot
        if previous is None or previous.summary.name != summary.name:
            self._load_chat(summary.name)
        self._build_prompt(summary.name)
        self.sub_title = "global memory" if summary.name is None else summary.name
        self._show_banner(summary, snapshot)
        if snapshot is None:
            self.core_pane.view.show([])
            self.archival_pane.view.show([])
            return
        fresh_core: set[int] = set()
        fresh_archival: set[int] = set()
        old = previous.snapshot if previous and previous.summary.name == summary.name else None
        if old is not None:
            fresh_core, fresh_archival = arrived_entries(old, snapshot)
            if fresh_core or fresh_archival:
                if self._fresh_timer is not None:
                    self._fresh_timer.stop()
                self._fresh_timer = self.set_timer(FRESH_SECONDS, self._clear_fresh)
            # Entries still flashing from an earlier reload keep flashing (memory only grows).
            fresh_core |= {i for i in self.core_pane.view.fresh if i < len(snapshot.core)}
            fresh_archival |= {
                i for i in self.archival_pane.view.fresh if i < len(snapshot.archival)
            }
        self.core_pane.view.show(snapshot.core, fresh=fresh_core)
        self.core_pane.set_title(len(snapshot.core))
        keyword = self.dashboard.query_one("#archival-filter", Input).value
        # While a filter is on, keep its rows until the new ones come back from the worker.
        rows = list(self.archival_pane.view.rows) if keyword and old is not None else None
        self._show_archival(snapshot, rows, fresh_archival)
        if keyword:
            self._filter(keyword, memory)
        self.last_applied = (summary.name, time.perf_counter())

    def _show_banner(self, summary: AgentSummary, snapshot: MemorySnapshot | None) -> None:
        banner = self.dashboard.query_one("#agent-banner", Static)
        banner.set_class(bool(summary.error or summary.lost_count), "error")
        if summary.lost_count:
            count = summary.lost_count
            banner.update(
                Text(
                    f"⚠ {count} entr{'y' if count == 1 else 'ies'} saved by oryxtui "
                    "were overwritten by an outside edit — press R to restore."
                )
            )
        elif summary.error:
            banner.update(Text(f"⚠ {display_text(summary.error)}"))
        elif snapshot is not None and snapshot.partial is not None:
            size = snapshot.partial.file_bytes / (1 << 20)
            shown = len(snapshot.archival)
            if summary.archival_count is None:
                older = "counting the older ones…"
            else:
                older = f"{max(0, summary.archival_count - shown):,} older ones stay on disk"
            banner.update(
                Text(
                    f"MEMORY.md is {size:,.0f} MB: showing the newest {shown:,} archival "
                    f"entries; {older}. Filter (/) searches these, recall (r) searches all."
                )
            )
        elif not summary.has_definition:
            banner.update(
                Text(
                    f"{summary.name} has no AGENT.md: only its memory is here "
                    "(the prompt uses the default identity)."
                )
            )
        else:
            banner.update(Text(display_text(summary.description) or self.agent_label(summary.name)))

    def _show_archival(
        self, snapshot: MemorySnapshot, rows: list[int] | None, fresh: set[int]
    ) -> None:
        view = self.archival_pane.view
        view.show(snapshot.archival, rows=rows, window_start=snapshot.window_start, fresh=fresh)
        total = len(snapshot.archival)
        of_all = None
        if snapshot.partial is not None:
            counted = self.shown.summary.archival_count if self.shown else None
            of_all = -1 if counted is None else counted
        self.archival_pane.set_title(
            total, None if rows is None else len(rows), min(snapshot.window_start, total), of_all
        )

    def _clear_fresh(self) -> None:
        if not self.dashboard_ready:
            return  # a timer that fires while the app closes
        for pane in (self.core_pane, self.archival_pane):
            pane.view.fresh = set()
            pane.view.refresh()

    @on(FilterApplied)
    def _filter_applied(self, event: FilterApplied) -> None:
        if not self.dashboard_ready:
            return
        snapshot = self.shown.snapshot if self.shown else None
        current = self.dashboard.query_one("#archival-filter", Input).value
        if snapshot is None or id(snapshot) != event.snapshot_id or event.keyword != current:
            return
        self._show_archival(snapshot, event.rows, self.archival_pane.view.fresh)

    @on(ChatPane.Submitted)
    async def _chat_submitted(self, event: ChatPane.Submitted) -> None:
        if not isinstance(self.chatting, _NoAgent):
            return
        self.chatting = self.selected
        self._chat_failed = False
        await self.chat_pane.begin_turn(event.text)
        self._run_chat(self.selected, event.text)

    @on(ChatEvent)
    async def _chat_event(self, event: ChatEvent) -> None:
        if not self.dashboard_ready:
            return
        shown_here = event.agent == self.selected
        if event.event is None:
            self.chatting = NO_AGENT
            model = self.chat_pane.model
            if shown_here:
                await self.chat_pane.end_turn(self._chat_failed, model)
            else:
                self.chat_pane.input.disabled = False
            self._build_prompt(event.agent)
            return
        if event.event.kind == "error":
            self._chat_failed = True
        if shown_here:
            await self.chat_pane.apply(event.event)

    @on(ChatHistoryLoaded)
    async def _chat_history(self, event: ChatHistoryLoaded) -> None:
        if not self.dashboard_ready or event.agent != self.selected:
            return
        if self.chatting == event.agent:
            return  # a turn is streaming into the pane right now
        await self.chat_pane.show_history(event.messages, event.model)

    @on(PromptBuilt)
    async def _prompt_built(self, event: PromptBuilt) -> None:
        if not self.dashboard_ready or event.agent != self.selected:
            return
        pane = self.dashboard.query_one(PromptPane)
        if event.prompt is None:
            pane.query_one("#prompt-summary", Static).update(
                Text(f"⚠ {display_text(event.error or '')}")
            )
            return
        previous = self.prompts.get(event.agent)
        if previous is not None and previous.to_json() == event.prompt.to_json():
            if pane.shown is not None and pane.shown.agent == event.agent:
                return  # nothing changed
            previous = None
        self.prompts[event.agent] = event.prompt
        if pane.shown is not None and pane.shown.agent != event.agent:
            previous = None  # a different agent: nothing to compare with
        await pane.show(event.prompt, previous, self.settings.llm.context_window)

    @on(OptionList.OptionHighlighted, "#agents")
    def _agent_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        agent = agent_of(event.option.id)
        if agent != self.selected:
            self.selected = agent
            self.request_load(agent)

    @on(Input.Changed, "#archival-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        if self.shown is None or self.shown.snapshot is None:
            return
        if event.value:
            self._filter(event.value, self.shown)
        else:
            self._show_archival(self.shown.snapshot, None, self.archival_pane.view.fresh)

    @on(Input.Submitted, "#archival-filter")
    def _filter_submitted(self) -> None:
        self.archival_pane.view.focus()

    def on_key(self, event: events.Key) -> None:
        """Escape leaves a text field for the archival pane, so single-key actions work again."""
        focused = self.focused
        if event.key != "escape" or focused is None:
            return
        if focused.id == "archival-filter":
            event.stop()
            field = self.dashboard.query_one("#archival-filter", Input)
            field.value = ""
            field.display = False
            self.archival_pane.view.focus()
        elif self.chat_pane in focused.ancestors_with_self:
            # The input, or the log that holds the focus while a turn runs (the input is
            # disabled then): back to the panes either way.
            event.stop()
            self.archival_pane.view.focus()
        elif self.dashboard.has_class("narrow", "side-open"):
            event.stop()
            self.dashboard.remove_class("side-open")  # back to the agents and memory

    # Actions --------------------------------------------------------------------------------

    def on_resize(self, event: events.Resize) -> None:
        # Below NARROW_WIDTH columns the chat/prompt column opens only on demand (c, p).
        self.dashboard.set_class(event.size.width < NARROW_WIDTH, "narrow")

    def _open_side(self, tab: str) -> None:
        self.dashboard.add_class("side-open")
        self.dashboard.query_one(TabbedContent).active = tab

    def action_chat(self) -> None:
        self._open_side("chat-tab")
        # Focus now, not after the next refresh: keys typed right after `c` belong to the input.
        self.dashboard.set_focus(self.chat_pane.input)
        self.chat_pane.input.focus()

    def action_prompt(self) -> None:
        self._open_side("prompt-tab")
        self.dashboard.query_one(PromptPane).focus()

    def action_restore(self) -> None:
        if self.shown is not None and self.shown.summary.lost_count:
            self._restore(self.selected)

    @work(thread=True, exclusive=True, exit_on_error=False, group="restore")
    def _restore(self, agent: AgentKey) -> None:
        try:
            restored = self.service.restore(agent)
        except OryxError as exc:
            self.call_from_thread(
                self.notify, display_text(str(exc)), severity="error", markup=False
            )
            return
        message = f"Restored {len(restored)} entr{'y' if len(restored) == 1 else 'ies'}."
        self.call_from_thread(self.notify, message, title="Restore", markup=False)

    def action_filter(self) -> None:
        field = self.dashboard.query_one("#archival-filter", Input)
        field.display = True
        field.focus()

    def action_save_entry(self) -> None:
        agent = self.selected

        def saved(entry: MemoryEntry | None) -> None:
            # No toast: it would cover the newest rows, where the entry arrives highlighted.
            if entry is not None:
                self.request_load(agent)  # the watcher brings it too; sqlite has no file to watch

        self.push_screen(
            SaveEntryScreen(self.agent_label(agent), partial(self.service.save, agent)), saved
        )

    def action_recall(self) -> None:
        agent = self.selected
        self.push_screen(RecallScreen(self.agent_label(agent), partial(self.service.recall, agent)))

    def _memory_file(self) -> Path | None:
        """The shown memory's MEMORY.md, or None when it is not kept in a file."""
        snapshot = self.shown.snapshot if self.shown else None
        if snapshot is None or snapshot.backend != "markdown":
            return None
        return snapshot.source

    def action_edit(self) -> None:
        memory_file = self._memory_file()
        if memory_file is None:
            self.notify(
                "This memory is not kept in a MEMORY.md file.", severity="warning", markup=False
            )
            return
        try:
            self.workspace.check_write_target(memory_file)  # as a save would
        except OryxError as exc:
            self.notify(display_text(str(exc)), severity="error", markup=False)
            return
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
        try:
            with self.suspend():
                subprocess.run([*shlex.split(editor), str(memory_file)], check=False)
        except SuspendNotSupported:
            self.notify(
                "This terminal cannot hand over to an editor.", severity="warning", markup=False
            )
        except OSError as exc:
            self.notify(
                f"Could not start the editor {editor!r}: {exc.strerror}.",
                severity="error",
                markup=False,
            )
        self.request_load(self.selected)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """Textual's commands, then every dashboard action that applies now."""
        yield from super().get_system_commands(screen)
        yield SystemCommand(
            "Save an entry", "Save to the selected agent (s)", self.action_save_entry
        )
        yield SystemCommand("Recall", "Search the archival memory (r)", self.action_recall)
        if self._memory_file() is not None:
            yield SystemCommand("Edit MEMORY.md", "Open it in $EDITOR (e)", self.action_edit)
        yield SystemCommand("Filter archival", "Narrow the archival pane (/)", self.action_filter)
        yield SystemCommand("Chat", "Talk to the selected agent (c)", self.action_chat)
        yield SystemCommand(
            "Prompt preview", "What the model receives, block by block (p)", self.action_prompt
        )
        if self.shown is not None and self.shown.summary.lost_count:
            yield SystemCommand(
                "Restore lost entries",
                "Put back what an outside edit removed (R)",
                self.action_restore,
            )
        for agent in self.order:
            if agent == self.selected:
                continue
            name = "global memory" if agent is None else agent
            yield SystemCommand(
                f"Show {name}", "Select it in the sidebar", partial(self._select, agent)
            )

    def _select(self, agent: AgentKey) -> None:
        if agent in self.order:
            self.dashboard.query_one(AgentList).highlighted = self.order.index(agent)
