"""The agents sidebar: every agent, then the global memory, with counts and markers."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from typing import Any

from rich.text import Text
from textual import on, work
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import OptionList
from textual.widgets.option_list import Option, OptionDoesNotExist

from oryxtui.tui.messages import SummariesLoaded
from oryxtui.tui.overview import GLOBAL, UNSELECTED, AgentSummary, Selection, Unselected
from oryxtui.workspace import AgentName

GLOBAL_ID = "::global::"  # cannot collide with an agent name ([A-Za-z0-9_-]+)
CHANGED = "●"
ERROR = "⚠"
CHANGED_MARKER_SECONDS = 5.0
SUMMARY_BATCH_SECONDS = 0.1  # counts arrive at most this often while many agents are read


def option_id(name: AgentName) -> str:
    return GLOBAL_ID if name is None else name


def agent_of(option_id_: str | None) -> AgentName:
    return None if option_id_ in (None, GLOBAL_ID) else option_id_


SERVER_ID = "::server::"  # a server's heading (attached servers): "::server::alpha"


def server_of(name: AgentName) -> str | None:
    """The server of an attached agent (`agent@server`), None for a local one."""
    return name.rpartition("@")[2] if name is not None and "@" in name else None


def agent_label(summary: AgentSummary, changed: bool, width: int = 24) -> Text:
    mark = ERROR if summary.error or summary.lost_count else CHANGED if changed else " "
    name = "(global memory)" if summary.name is None else summary.name
    if server_of(summary.name) is not None:  # attached: the heading names the server
        name = name.rpartition("@")[0] or "(global memory)"
    if summary.core_count is None or summary.archival_count is None:
        counts = "…" if not summary.error else "?"
    else:
        counts = f"{summary.core_count}·{summary.archival_count}"
    if summary.held_count:
        counts += f" ⧗{summary.held_count}"  # held for review (I)
    room = max(4, width - len(counts) - 3)
    if len(name) > room:
        name = name[: room - 1] + "…"
    label = Text(f"{mark} ")
    global_memory = summary.name is None or summary.name.startswith("@")
    style = "italic" if global_memory else "bold" if summary.has_definition else "dim"
    label.append(name.ljust(room), style=style)
    label.append(f" {counts}", style="dim")
    if summary.error or summary.lost_count:
        label.stylize("red", 0, 1)
    elif changed:
        label.stylize("green", 0, 1)
    return label


def server_label(server: str, state: str | None, width: int) -> Text:
    """A server's heading: its name, and what is wrong while something is."""
    label = Text(f"▾ {server}", style="bold reverse" if state is None else "bold")
    if state is not None:
        label.append(f" {ERROR} {state}", style="yellow")
    label.truncate(width, overflow="ellipsis")
    return label


class AgentList(OptionList):
    """Every agent, then the global memory: owns their summaries, their order and which ones
    changed a moment ago. The selected agent comes down bound; a highlight goes up as `Picked`."""

    HELP_PLACE = "In the agent list"  # where its keys apply, as help groups them

    selected: reactive[Selection] = reactive[Selection](UNSELECTED, init=False)

    @dataclass
    class Picked(Message):
        agent: AgentName

    def __init__(
        self,
        clock: Callable[[], float],
        read_summary: Callable[[AgentName], AgentSummary],
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.clock = clock
        self.read_summary = read_summary  # an agent's counts, read from disk (in a worker)
        self.order: list[AgentName] = []
        self.summaries: dict[AgentName, AgentSummary] = {}
        self._changed_at: dict[AgentName, float] = {}
        # What each row was drawn from, by option id, in order: (summary, changed, width).
        self._shown: dict[str, tuple[AgentSummary, bool, int] | tuple[str, str | None]] = {}
        self.servers: dict[str, str | None] = {}  # attached servers: None, or what is wrong
        self.also: dict[str, list[str]] = {}  # a listed server → others on its database

    def on_mount(self) -> None:
        self.set_interval(1.0, self._expire_markers)

    def list_agents(self, names: list[str], with_global: bool = True) -> None:
        """The agents on disk now; the global memory is always last (attached servers list
        theirs, each after its agents)."""
        self.order = [*names, GLOBAL] if with_global else list(names)
        for gone in set(self.summaries) - set(self.order):
            del self.summaries[gone]
        for agent in self.order:
            self.summaries.setdefault(agent, AgentSummary(agent))
        self._redraw()

    def update_summaries(self, summaries: Iterable[AgentSummary]) -> None:
        """New counts; an agent no longer listed is left out."""
        for summary in summaries:
            if summary.name in self.summaries:
                self.summaries[summary.name] = summary
        self._redraw()

    @work(thread=True, exclusive=True, exit_on_error=False, group="summaries")
    def count(self, agents: list[AgentName]) -> None:
        """Read these agents' counts, posted in batches so 500 agents are not 500 redraws."""
        batch: list[AgentSummary] = []
        posted = time.monotonic()
        for agent in agents:
            batch.append(self.read_summary(agent))
            if time.monotonic() - posted > SUMMARY_BATCH_SECONDS:
                self.post_message(SummariesLoaded(batch))
                batch, posted = [], time.monotonic()
        if batch:
            self.post_message(SummariesLoaded(batch))

    @on(SummariesLoaded)
    def _counted(self, event: SummariesLoaded) -> None:
        event.stop()
        self.update_summaries(event.summaries)

    def others(self, than: Selection) -> list[AgentName]:
        """Every listed agent but `than` (the screen's selection: the bound copy here may be
        a moment behind it)."""
        return [agent for agent in self.order if agent != than]

    def recount(self, agent: AgentName) -> None:
        """Read one agent's counts again without marking it changed (its history alone was
        written: a save held for review, say)."""
        if agent in self.summaries:
            self.run_worker(
                partial(self._recounted, agent),
                group=f"recount-{agent}",
                exclusive=True,
                thread=True,
                exit_on_error=False,
            )

    def _recounted(self, agent: AgentName) -> None:
        self.post_message(SummariesLoaded([self.read_summary(agent)]))

    def mark_changed(self, agent: AgentName) -> None:
        """Show a marker beside the agent for a few seconds (its memory just changed)."""
        self._changed_at[agent] = self.clock()

    def mark_servers(
        self, states: dict[str, str | None], also: dict[str, list[str]] | None = None
    ) -> None:
        """Which attached servers answer (None) and which are being reconnected to; and the
        servers that show the same memory as one listed (one shared database)."""
        self.servers = dict(states)
        self.also = dict(also or {})
        self._redraw()

    def _index_of(self, agent: AgentName) -> int | None:
        if agent not in self.order:
            return None
        try:
            return self.get_option_index(option_id(agent))
        except OptionDoesNotExist:  # not drawn yet
            return None

    def watch_selected(self, agent: Selection) -> None:
        index = None if isinstance(agent, Unselected) else self._index_of(agent)
        if index is not None and self.highlighted != index:
            with self.prevent(OptionList.OptionHighlighted):
                self.highlighted = index

    def select(self, agent: AgentName) -> None:
        """Highlight the agent as if the user had moved to it."""
        index = self._index_of(agent)
        if index is not None:
            self.highlighted = index

    @on(OptionList.OptionHighlighted)
    def _picked(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        agent = agent_of(event.option.id)
        if agent != self.selected:
            self.post_message(self.Picked(agent))

    def _expire_markers(self) -> None:
        now = self.clock()
        expired = [a for a, t in self._changed_at.items() if now - t >= CHANGED_MARKER_SECONDS]
        for agent in expired:
            del self._changed_at[agent]
        if expired:
            self._redraw()

    def _redraw(self) -> None:
        """With the same agents in the same order, only the rows whose label changed are
        redrawn: 500 agents' counts arrive in many batches."""
        now = self.clock()
        changed = {a for a, t in self._changed_at.items() if now - t < CHANGED_MARKER_SECONDS}
        width = max(16, self.scrollable_content_region.width or 26)
        wanted: list[tuple[str, Any]] = []
        heading = None
        for agent in self.order:
            server = server_of(agent)
            if server is not None and server != heading:  # attached: grouped by server
                heading = server
                state = self.servers.get(server)
                named = " = ".join([server, *self.also.get(server, [])])  # one database
                wanted.append((SERVER_ID + server, (named, state, width)))
            wanted.append((option_id(agent), (self.summaries[agent], agent in changed, width)))
        ids = [option_id_ for option_id_, _ in wanted]
        shown = self._shown
        if ids == list(shown):
            for index, (option_id_, key) in enumerate(wanted):
                if shown[option_id_] != key:
                    shown[option_id_] = key
                    self.replace_option_prompt_at_index(index, _label(key))
        else:
            self.set_options(
                Option(_label(key), id=option_id_, disabled=option_id_.startswith(SERVER_ID))
                for option_id_, key in wanted
            )
            self._shown = dict(wanted)
        self.watch_selected(self.selected)


def _label(key: Any) -> Text:
    return server_label(*key) if isinstance(key[0], str) else agent_label(*key)
