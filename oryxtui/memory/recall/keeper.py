"""The live index: while the dashboard or `serve` runs, every agent's new archival entries are
embedded within a moment of being written, by anyone (oryxtui, upstream OryxOS, an editor), and
the vectors of removed entries leave the index."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Hashable
from typing import Protocol

from oryxtui.errors import OryxError
from oryxtui.memory.recall.engine import RecallEngine
from oryxtui.memory.recall.results import IndexStatus

log = logging.getLogger(__name__)
Agents = Callable[[], list[str | None]]
Reported = Callable[[str | None, IndexStatus], object]


class IndexKeeper:
    """Checks each agent's entries (a stat, or one small query) and syncs the ones that
    changed. `step()` is one round; `run()` repeats it until `stop()`."""

    def __init__(
        self,
        engine: RecallEngine,
        agents: Agents,
        reported: Reported | None = None,
        interval: float = 0.5,
        stopped: threading.Event | None = None,
    ) -> None:
        self.engine = engine
        self.agents = agents
        self.reported = reported
        self.interval = interval
        self._synced: dict[str | None, Hashable] = {}
        self._stopped = stopped or threading.Event()

    def step(self) -> None:
        for agent in self.agents():
            if self._stopped.is_set():
                return
            try:
                version = self.engine.store.corpus_version(agent)
                if self._synced.get(agent) == version and not self.engine.problem:
                    continue
                status = self.engine.sync(agent)
                self.engine.warm(agent)  # so the next recall finds its indexes made
            except OryxError as exc:  # unreadable file, locked database: the next round
                log.debug("indexing %s failed: %s", agent, exc)
                continue
            if status is None:
                continue
            if not status.problem:
                self._synced[agent] = version
            if self.reported is not None:
                self.reported(agent, status)

    def run(self) -> None:
        while not self._stopped.is_set():
            self.step()
            self._stopped.wait(self.interval)

    def stop(self) -> None:
        self._stopped.set()

    def start(self) -> threading.Thread:
        thread = threading.Thread(target=self.run, name="oryxtui-index", daemon=True)
        thread.start()
        return thread


class Indexed(Protocol):
    """A memory with a recall engine (or none): what the index keeper needs of it."""

    @property
    def engine(self) -> RecallEngine | None: ...


def keep_index(
    service: Indexed,
    agents: Agents,
    stopped: threading.Event,
    reported: Reported | None = None,
) -> None:
    """Keep the service's index live until `stopped` (nothing to do without an embedder).
    Runs in its own thread: the dashboard's and `serve`'s."""
    engine = service.engine
    if engine is None or engine.embedder is None:
        return
    IndexKeeper(engine, agents, reported, stopped=stopped).run()
