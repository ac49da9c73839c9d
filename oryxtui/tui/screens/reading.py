"""What the dashboard reads, and how: its agents, an agent's memory (the first one before the
first frame when it is local and small, every other read in a worker) and a big file's census.
The workers post what they found to the widget they run for (the screen); they never touch
widgets, and this needs nothing of that screen but a place to post to."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from textual.worker import get_current_worker

from oryxtui.errors import OryxError
from oryxtui.memory.store import Watch
from oryxtui.tui.messages import AgentLoaded, AgentsListed, CensusTaken
from oryxtui.tui.overview import AgentMemory, AgentSummary, load_agent, take_census
from oryxtui.workspace import AgentName

if TYPE_CHECKING:
    from textual.widget import Widget

    from oryxtui.places import Place

FIRST_READ_BYTES = 256 << 10  # of the first agent's memory, read before the first frame


class Reading:
    """The reads of one dashboard screen (`host`: its workers run there, and post there; the
    first read, when it is quick, is handed to `now` at once, before the first frame)."""

    def __init__(self, place: Place, host: Widget, now: Callable[[AgentLoaded], None]) -> None:
        self.place = place
        self.host = host
        self.now = now
        self.first = True  # nothing read yet: the first read may come before the first frame

    @property
    def newest_bytes(self) -> int:
        return int(self.place.settings.tui.large_file_mb * (1 << 20))

    def list_agents(self) -> None:
        """The workspace's agents, and those a shared database has memory of (in a worker;
        a newer listing replaces one under way)."""
        self.host.run_worker(
            self._list_agents, group="agents", exclusive=True, thread=True, exit_on_error=False
        )

    def _list_agents(self) -> None:
        try:
            # Attached servers list theirs grouped by server, in the servers' order.
            names = self.place.known_agents()
        except OryxError:
            names = self.place.list_agents()  # the database's: said when their memory is read
        self.host.post_message(AgentsListed(names))

    def load(self, agent: AgentName) -> None:
        """The agent's memory read again: in a worker, which posts `AgentLoaded`; or, the
        first time, now (to `now`) when that is quick."""
        local = self.place.memory.watch is not Watch.POLL and self.place.nearby
        first, self.first = self.first, False
        if first and local:
            # Nothing is on screen yet and the memory is local: read it now, before the first
            # frame, so that frame is already usable; unless it is bigger than FIRST_READ_BYTES
            # (then it is read in a worker, like every later read, and this cost a few ms).
            most = min(self.newest_bytes, FIRST_READ_BYTES)
            memory = self.read_agent(agent, most)
            snapshot = memory.snapshot
            if snapshot is None or snapshot.partial is None or most == self.newest_bytes:
                self.now(AgentLoaded(memory))
                return
            # A big file: the first frame (without it) is drawn before the read competes.
            self.host.call_after_refresh(self.read_behind, agent)
            return
        self.read_behind(agent)

    def read_behind(self, agent: AgentName) -> None:
        self.host.run_worker(
            partial(self._read_in_worker, agent), group="load", thread=True, exit_on_error=False
        )

    def _read_in_worker(self, agent: AgentName) -> None:
        # What another program changed goes into the history now, while it is known who
        # did not make it (a read-only workspace only goes without).
        with contextlib.suppress(OryxError):
            self.place.memory.reconcile(agent)
        self.host.post_message(AgentLoaded(self.read_agent(agent, self.newest_bytes)))

    def read_agent(self, agent: AgentName, newest_bytes: int) -> AgentMemory:
        try:
            return load_agent(self.place, agent, newest_bytes, census=False)
        except Exception as exc:  # a bug: said on screen, never an agent stuck "loading"
            return AgentMemory(AgentSummary(agent, error=f"Could not load: {exc!r}"), None)

    def summary_of(self, agent: AgentName) -> AgentSummary:
        return load_agent(self.place, agent, self.newest_bytes).summary

    def take_census(self, agent: AgentName) -> None:
        self.host.run_worker(
            partial(self._count_all, agent),
            group=f"census-{agent}",
            exclusive=True,
            thread=True,
            exit_on_error=False,
        )

    def _count_all(self, agent: AgentName) -> None:
        """Count every entry of a big file the dashboard shows only the newest of."""
        archival_count, lost_count = take_census(self.place.memory, agent)
        if not get_current_worker().is_cancelled:
            self.host.post_message(CensusTaken(agent, archival_count, lost_count))
