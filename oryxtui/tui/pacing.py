"""How often the dashboard may read an agent again: plain classes with an injected clock and
scheduler, so their timing is tested without a running app."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from functools import partial
from typing import Generic, TypeVar

Key = TypeVar("Key", bound=Hashable)  # what is loaded: an agent
Monotonic = Callable[[], float]  # seconds, only ever compared
Schedule = Callable[[float, Callable[[], None]], object]  # (delay, callback): a timer

MIN_RELOAD_INTERVAL = 0.05  # a burst of writes is read at most ~20 times a second per agent
CENSUS_INTERVAL = 5.0  # a big file that keeps growing is counted again at most this often


class ReloadPacer(Generic[Key]):
    """One load at a time per agent. Requests that arrive while one runs become one more load
    when it finishes, and loads of one agent start at least `min_interval` apart.

    The owner calls `request` whenever an agent may have changed and `finished` when a load
    `start`ed by the pacer is done (whatever its outcome).
    """

    def __init__(
        self,
        start: Callable[[Key], None],
        schedule: Schedule,
        clock: Monotonic,
        min_interval: float = MIN_RELOAD_INTERVAL,
    ) -> None:
        self._start = start
        self._schedule = schedule
        self._clock = clock
        self.min_interval = min_interval
        self._running: dict[Key, float] = {}  # agent -> when its load (or pause) began
        self._again: set[Key] = set()

    def busy(self, agent: Key) -> bool:
        return agent in self._running

    def request(self, agent: Key) -> None:
        if agent in self._running:
            self._again.add(agent)
            return
        self._running[agent] = self._clock()
        self._start(agent)

    def finished(self, agent: Key) -> None:
        started = self._running.pop(agent, None)
        if agent not in self._again:
            return
        self._again.discard(agent)
        delay = self.min_interval - (self._clock() - (started or 0.0))
        if delay > 0:
            self._running[agent] = self._clock()  # hold the slot until the pause is over
            self._schedule(delay, partial(self._resume, agent))
        else:
            self.request(agent)

    def _resume(self, agent: Key) -> None:
        self._running.pop(agent, None)
        self.request(agent)


class CensusThrottle(Generic[Key]):
    """Counting every entry of a big file is slow: do it at most once per `interval` per agent;
    a request inside the interval is served once, when the interval is over."""

    def __init__(
        self,
        start: Callable[[Key], None],
        schedule: Schedule,
        clock: Monotonic,
        interval: float = CENSUS_INTERVAL,
    ) -> None:
        self._start = start
        self._schedule = schedule
        self._clock = clock
        self.interval = interval
        self._last: dict[Key, float] = {}
        self._pending: set[Key] = set()

    def request(self, agent: Key) -> None:
        if agent in self._pending:
            return
        last = self._last.get(agent)
        wait = 0.0 if last is None else last + self.interval - self._clock()
        if wait > 0:
            self._pending.add(agent)
            self._schedule(wait, partial(self._run, agent))
        else:
            self._run(agent)

    def _run(self, agent: Key) -> None:
        self._pending.discard(agent)
        self._last[agent] = self._clock()
        self._start(agent)
