"""The dashboard screen: agents on the left, the selected agent's memory in the middle, chat and
prompt preview on the right. It holds the selected agent and reads memory from disk in workers;
each pane owns what it shows."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from textual import events, on
from textual.actions import parse
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.reactive import reactive
from textual.screen import Screen
from textual.signal import Signal
from textual.widgets import Header

from oryxtui.config import Settings
from oryxtui.memory import MemoryEntry
from oryxtui.memory.recall.results import IndexStatus
from oryxtui.memory.store import Watch
from oryxtui.tui.messages import (
    AgentLoaded,
    AgentsChanged,
    AgentsListed,
    CensusTaken,
    Changed,
    HistoryChanged,
    IndexChanged,
    MemoryChanged,
    ServersChanged,
    StoreChanged,
    WatchStarted,
)
from oryxtui.tui.overview import UNSELECTED, AgentMemory, Selection, Unselected
from oryxtui.tui.pacing import CensusThrottle, Monotonic, ReloadPacer
from oryxtui.tui.screens.openers import (
    find_origin,
    open_recall,
    open_review,
    open_save,
    preview_digest,
)
from oryxtui.tui.screens.reading import Reading
from oryxtui.tui.screens.side import Side
from oryxtui.tui.screens.steering import CHANGES, STEERS
from oryxtui.tui.text import tell
from oryxtui.tui.widgets.agent_list import AgentList
from oryxtui.tui.widgets.chat_pane import ChatPane
from oryxtui.tui.widgets.keys_footer import KeysFooter
from oryxtui.tui.widgets.memory_view import MemoryView
from oryxtui.tui.widgets.side_column import SideColumn
from oryxtui.workspace import AgentName

if TYPE_CHECKING:
    from oryxtui.places import Loop, Place

NARROW_WIDTH = 140  # below this many columns, chat and prompt open only on demand (c, p)
SMALL_WIDTH = 100  # below this, a narrower agent list
SIDE_WIDTHS = (30, 42, 55, 70)  # the chat/prompt column, in % of the width ([ and ] step)


class DashboardScreen(Screen[None]):
    """The selected agent comes down to the panes bound; what they do goes up as messages."""

    # The memory panes have the width until the chat or the prompt is opened (c, p): a class
    # given from the start, so the first frame is styled once, not again at mount.
    DEFAULT_CLASSES = "side-hidden"

    # The footer shows the focused widget's keys, then these in this order: help and quit
    # first, so an 80-column terminal still shows them when the rest is cut.
    BINDINGS = [
        Binding("question_mark", "help", "Help", id="help"),
        Binding("q", "app.quit", "Quit", id="quit"),
        Binding("s", "save_entry", "Save", id="save"),
        Binding("r", "recall", "Recall", id="recall"),
        Binding("e", "steer('edit_file')", "Edit file", id="edit"),
        Binding("slash", "steer('filter')", "Filter", id="filter"),
        Binding("c", "chat", "Chat", id="chat"),
        Binding("p", "prompt", "Prompt", id="prompt"),
        Binding("tab", "app.focus_next", "Next pane", id="focus-next", show=False),
        Binding(
            "shift+tab", "app.focus_previous", "Previous pane", id="focus-previous", show=False
        ),
        Binding("R", "steer('restore')", "Restore lost", id="restore"),
        Binding("A", "steer('accept')", "Accept removal", id="accept"),
        Binding("h", "history", "History", id="history"),
        Binding("g", "consolidate", "Digest", id="consolidate"),
        Binding("S", "sessions", "Sessions", id="sessions"),
        Binding("I", "review", "Review", id="review"),
        Binding("backslash", "toggle_side", "Hide/show chat", id="side", show=False),
        Binding("left_square_bracket", "side_width(1)", "Widen chat", id="side-wider", show=False),
        Binding(
            "right_square_bracket", "side_width(-1)", "Narrow chat", id="side-narrower", show=False
        ),
    ]

    selected: reactive[Selection] = reactive[Selection](UNSELECTED, init=False)
    # The agent whose memory is on screen: chat and prompt follow it. It trails `selected` by a
    # read, so what the first frame needs is read before anything else.
    shown: reactive[Selection] = reactive[Selection](UNSELECTED, init=False)

    def __init__(
        self,
        place: Place,
        agent_loop: Callable[[], Loop],
        user: str,
        clock: Monotonic = time.monotonic,
    ) -> None:
        super().__init__()
        self.place = place
        self.settings: Settings = place.settings
        self.service = place.memory
        self.agent_loop = agent_loop
        self.user = user
        self.clock = clock
        self.reading = Reading(place, self, self.agent_loaded)
        self.pacer = ReloadPacer(self.reading.load, self.set_timer, clock)
        self._counts_wanted = False  # the other agents' counts, after the selected agent's
        self.census = CensusThrottle(self.reading.take_census, self.set_timer, clock)
        self.index_status: dict[AgentName, IndexStatus] = {}  # from the live index
        self.side_width = 42
        # What the views opened over the dashboard follow (the history view reads again).
        self.changes: Signal[Changed] = Signal(self, "memory-changed")
        window = self.settings.llm.context_window
        column = SideColumn(self.agent_loop, self.user, window, id="side")
        self.chat_pane, self.prompt_pane = column.chat_pane, column.prompt_pane
        self.side = Side(self, column, lambda: self.memory_view.focus_entries())

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="body"):
            self.agent_list = AgentList(self.clock, self.reading.summary_of, id="agents")
            self.agent_list.data_bind(DashboardScreen.selected)
            self.agent_list.border_title = "Agents"
            yield self.agent_list
            self.memory_view = MemoryView(self.place, id="main")
            yield self.memory_view  # then the chat/prompt column: see `Side`
        yield KeysFooter()

    def on_mount(self) -> None:
        # Before the first layout, so the first frame is already the right one.
        self.set_class(self.app.size.width < NARROW_WIDTH, "narrow")
        self.set_class(self.app.size.width < SMALL_WIDTH, "small")
        self.agent_list.focus()  # ↓ and ↑ change agent at once
        self.call_after_refresh(self.side.ready)  # the column the first frame does not show
        if not self.place.nearby:
            self.reading.list_agents()  # over the network: the first frame does not wait for it
            return
        # The first frame already shows the first agent: see `_load`.
        self._agents_listed(AgentsListed(self.place.list_agents()))
        if self.service.watch is Watch.NOTIFY:
            self.reading.list_agents()  # and then those only the shared database has memory of

    # What the workers and the watcher report ---------------------------------------------------

    @on(AgentsListed)
    def _agents_listed(self, event: AgentsListed) -> None:
        agents = self.agent_list
        agents.list_agents(event.names, self.place.global_memory)
        self._servers_changed()
        self._counts_wanted = True  # once the selected agent is on screen
        if self.selected in agents.order:
            self.pacer.request(self.selected)  # its AGENT.md may be what changed
        else:
            self.selected = agents.order[0]

    def watch_shown(self, agent: Selection) -> None:
        self.side.column.follow(agent)  # chat and prompt follow the memory on screen

    def watch_selected(self, agent: Selection) -> None:
        if isinstance(agent, Unselected):
            return
        self.refresh_bindings()  # another server's agent: another key, other changes allowed
        self.sub_title = "global memory" if agent is None else agent
        self.pacer.request(agent)

    @on(AgentList.Picked)
    def _picked(self, event: AgentList.Picked) -> None:
        self.selected = event.agent

    @on(AgentLoaded)
    def agent_loaded(self, event: AgentLoaded) -> None:
        memory = event.memory
        agent = memory.summary.name
        self.pacer.finished(agent)
        known = self.agent_list.summaries.get(agent)
        if known is None:
            return  # the agent went away while it loaded
        if memory.snapshot is not None and memory.snapshot.partial is not None:
            # Only the newest entries were read: keep the last counts until the census is in.
            summary = replace(
                memory.summary, archival_count=known.archival_count, lost_count=known.lost_count
            )
            memory = AgentMemory(summary, memory.snapshot)
            self.census.request(agent)
        if agent == self.selected:
            memory = self.memory_view.show(memory)
            self.refresh_bindings()  # restore and accept show only while something is lost
            if self.shown == agent:  # the memory changed; a server's prompt when seen
                self.prompt_pane.rebuild(lazily=not self.place.nearby)
            else:
                self.shown = agent  # chat and prompt follow, bound
                self.memory_view.archival.show_index(self.index_status.get(agent))
        self.agent_list.update_summaries([memory.summary])
        if agent == self.selected and self._counts_wanted:
            self._counts_wanted = False
            others = self.agent_list.others(agent)  # read after this frame, not beside it
            self.call_after_refresh(self.agent_list.count, others)

    @on(CensusTaken)
    def _census_taken(self, event: CensusTaken) -> None:
        known = self.agent_list.summaries.get(event.agent)
        if known is None:
            return
        summary = replace(known, archival_count=event.archival_count, lost_count=event.lost_count)
        self.agent_list.update_summaries([summary])
        self.memory_view.count_all(summary)
        self.refresh_bindings()

    @on(IndexChanged)
    def _index_changed(self, event: IndexChanged) -> None:
        self.index_status[event.agent] = event.status
        if event.agent == self.shown:
            self.memory_view.archival.show_index(event.status)

    @on(MemoryChanged)
    def _memory_changed(self, event: MemoryChanged) -> None:
        self.agent_list.mark_changed(event.agent)
        if event.agent in self.agent_list.summaries:
            self.pacer.request(event.agent)
        elif self.service.watch is Watch.NOTIFY:
            self.reading.list_agents()  # an agent new to the shared database
        self.changes.publish(Changed(event.agent))

    @on(HistoryChanged)
    def _history_changed(self, event: HistoryChanged) -> None:
        self.agent_list.recount(event.agent)  # a held save: counted, not marked as changed
        if event.agent == self.shown:
            self.pacer.request(event.agent)  # the prompt says what awaits review
        self.changes.publish(Changed(event.agent))

    @on(StoreChanged)
    def _store_changed(self, event: StoreChanged) -> None:
        self.read_again(counts=event.everyone)
        self.changes.publish(Changed(anyone=True))  # a table: any agent's rows may have changed

    @on(AgentsChanged)
    def _agents_changed(self) -> None:
        self.reading.list_agents()

    @on(ServersChanged)
    def _servers_changed(self) -> None:
        if (servers := self.place.servers())[0]:  # attached: their states, shared databases
            self.agent_list.mark_servers(*servers)

    @on(WatchStarted)
    def _watch_started(self) -> None:
        """What was read before the watch started is read again (it may have changed since):
        which agents there are, the selected one's memory, the others' counts."""
        self.reading.list_agents()

    def read_again(self, counts: bool) -> None:
        """The selected agent, and with `counts` every other agent's counts."""
        if isinstance(self.selected, Unselected):
            return
        self.pacer.request(self.selected)
        if counts:
            self.agent_list.count(self.agent_list.others(self.selected))

    @on(ChatPane.TurnEnded)
    def _turn_ended(self, event: ChatPane.TurnEnded) -> None:
        if event.agent == self.selected:
            self.prompt_pane.rebuild()  # the history grew

    # Layout and keys --------------------------------------------------------------------------

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(event.size.width < NARROW_WIDTH, "narrow")
        self.set_class(event.size.width < SMALL_WIDTH, "small")

    def on_key(self, event: events.Key) -> None:
        """Escape goes back to the memory panes, so single-key actions work again; a key
        whose change is dimmed (not allowed here) still answers: with why."""
        active = self.active_bindings.get(event.key)  # as bound now ([tui.keymap] included)
        if active is not None and not active.enabled:
            _, action, parameters = parse(active.binding.action)
            if self.refused(str(parameters[0]) if action == "steer" and parameters else action):
                event.stop()
                return
        focused = self.focused
        if event.key != "escape" or focused is None:
            return
        if self.chat_pane in focused.ancestors_with_self:
            # The input, or the log holding the focus while a turn runs: back to the panes.
            event.stop()
            self.memory_view.focus_entries()
        elif self.has_class("narrow", "side-open"):
            event.stop()
            self.side.hide()  # back to the agents and memory

    def select(self, agent: AgentName) -> None:
        """Show this agent, as if picked in the sidebar."""
        self.agent_list.select(agent)

    def show_agent(self, agent: AgentName) -> None:
        """Show this agent and put the focus on its memory (from the palette: the keys that
        follow are the dashboard's, not text typed into the chat it was opened from)."""
        self.select(agent)
        self.call_after_refresh(self.memory_view.focus_entries)

    # Actions ----------------------------------------------------------------------------------

    async def action_chat(self) -> None:
        if self.refused("chat"):
            return
        await self.side.open("chat-tab")
        self.chat_pane.focus_input()

    async def action_prompt(self) -> None:
        await self.side.open("prompt-tab")
        self.prompt_pane.focus()

    def action_save_entry(self) -> None:
        agent = self.selected
        if isinstance(agent, Unselected) or self.refused("save_entry"):
            return

        def saved(entry: MemoryEntry | None) -> None:
            # No toast: it would cover the newest rows, where the entry arrives highlighted.
            if entry is not None:
                self.pacer.request(agent)  # the watcher brings it too; not every store is watched

        open_save(self.app, self.place, agent, saved)

    def action_help(self) -> None:
        from oryxtui.tui.screens.help import help_for

        self.app.push_screen(help_for(self))

    async def action_toggle_side(self) -> None:
        """Show or hide the chat/prompt column (hidden, the memory panes are wider)."""
        if self.side.shown:
            self.side.hide()
        else:
            await self.side.open()

    async def action_side_width(self, step: int) -> None:
        """The chat/prompt column a step wider (1) or narrower (-1)."""
        index = SIDE_WIDTHS.index(self.side_width) if self.side_width in SIDE_WIDTHS else 1
        self.side_width = SIDE_WIDTHS[max(0, min(len(SIDE_WIDTHS) - 1, index + step))]
        column = await self.side.ready()
        column.styles.width = f"{self.side_width}%"
        await self.side.open()

    def action_consolidate(self) -> None:
        """A digest of what left the window since the last one: previewed, then written."""
        if not isinstance(self.selected, Unselected) and not self.refused("consolidate"):
            preview_digest(self, self.place, self.selected, self.pacer.request)

    def action_sessions(self) -> None:
        from oryxtui.tui.screens.sessions import SessionsScreen

        agent = self.selected
        if not isinstance(agent, Unselected):
            self.app.push_screen(SessionsScreen(self.agent_loop, agent))

    def action_review(self) -> None:
        """The review inbox: what agents wrote that awaits approval, every agent's."""
        agents = self.agent_list
        closed = lambda _: self.read_again(counts=True)  # noqa: E731 (approvals change counts)
        open_review(self.app, self.place, lambda: list(agents.order), self.agent_loop, closed)

    def action_history(self) -> None:
        from oryxtui.tui.screens.history import HistoryScreen

        agent = self.selected
        if not isinstance(agent, Unselected):
            self.app.push_screen(HistoryScreen(self.service, agent, self.changes))

    def action_recall(self) -> None:
        if not isinstance(self.selected, Unselected):
            agents = list(self.agent_list.order)
            found = self.memory_view.reveal_found  # once its agent's memory is shown
            open_recall(self.app, self.place, self.selected, agents, found)

    # Steering: the memory view changes what it shows; the keys are the screen's -------------

    def action_steer(self, what: str) -> None:
        """A change to the memory shown (`what`: a key of STEERS), unless it is refused."""
        if not self.refused(what):
            STEERS[what](self.memory_view)

    def action_entry(self, what: str) -> None:
        """The entry at the cursor: `open` shows it whole with its history; `origin` says who
        wrote it (an agent's: its turn, in the sessions view)."""
        steer = self.memory_view.at_cursor()
        if steer is None:
            return
        if what == "open":
            from oryxtui.tui.screens.entry import EntryScreen

            self.app.push_screen(EntryScreen(self.place, *steer))
        else:
            find_origin(self, self.place, self.agent_loop, steer)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Restore and accept are in the footer only while something is lost (False: not
        shown); what the memory shown cannot take (a read-only key) is there, dimmed (None:
        shown, not run — its key still says why, see `on_key`)."""
        what = str(parameters[0]) if action == "steer" and parameters else action
        if what in ("restore", "accept") and not self.memory_view.lost_count:
            return False
        return None if self.refusal(what) else True

    def refusal(self, action: str) -> str | None:
        """Why a change to the memory shown is not allowed (None: it is, or it is no change)."""
        doing = CHANGES.get(action)
        if doing is None or isinstance(self.selected, Unselected):
            return None
        if action in ("restore", "accept") and not self.memory_view.lost_count:
            return None  # nothing to do: no change is refused
        return self.service.refusal(self.selected, doing)

    def refused(self, action: str) -> bool:
        """Said at once, before any dialog: the change is not allowed here."""
        why = self.refusal(action)
        if why is not None:
            tell(self, why, title="Read-only", severity="warning")
        return why is not None

    @on(MemoryView.Steered)
    def _steered(self, event: MemoryView.Steered) -> None:
        self.pacer.request(event.agent)  # the watcher brings it too; not every store is watched

    @on(MemoryView.Wanted)
    def _wanted(self, event: MemoryView.Wanted) -> None:
        self.select(event.agent)  # a recall result of another agent: shown once it is read
