"""Reload coalescing and census throttling, on a hand-driven clock: no app, no sleeps."""

from __future__ import annotations

from collections.abc import Callable

from oryxtui.tui.pacing import CensusThrottle, ReloadPacer


class Clock:
    """Time that moves only when the test says, with the timers the code under test set."""

    def __init__(self) -> None:
        self.now = 100.0
        self.timers: list[tuple[float, Callable[[], None]]] = []

    def __call__(self) -> float:
        return self.now

    def schedule(self, delay: float, callback: Callable[[], None]) -> None:
        self.timers.append((self.now + delay, callback))

    def advance(self, seconds: float) -> None:
        """Move on, firing each timer that falls due (and any that those set), in time order."""
        end = self.now + seconds
        while due := [timer for timer in self.timers if timer[0] <= end]:
            first = min(due, key=lambda timer: timer[0])
            self.timers.remove(first)
            self.now = max(self.now, first[0])
            first[1]()
        self.now = end


def pacer(clock: Clock, started: list[str]) -> ReloadPacer[str]:
    return ReloadPacer(started.append, clock.schedule, clock, min_interval=0.05)


def test_a_request_starts_a_load_at_once() -> None:
    clock, started = Clock(), []
    pacer(clock, started).request("alpha")
    assert started == ["alpha"] and not clock.timers


def test_requests_during_a_load_become_one_more_load_after_it() -> None:
    clock, started = Clock(), []
    loads = pacer(clock, started)
    loads.request("alpha")
    for _ in range(10):
        loads.request("alpha")  # a burst of writes while the first read runs
    assert started == ["alpha"]
    clock.advance(0.2)  # a slow read: no pause is needed after it
    loads.finished("alpha")
    assert started == ["alpha", "alpha"]
    loads.finished("alpha")
    assert started == ["alpha", "alpha"], "nothing new arrived during the second load"
    assert not loads.busy("alpha")


def test_loads_of_one_agent_start_at_least_the_interval_apart() -> None:
    clock, started = Clock(), []
    loads = pacer(clock, started)
    loads.request("alpha")
    loads.request("alpha")
    clock.advance(0.01)  # a fast read
    loads.finished("alpha")
    assert started == ["alpha"] and loads.busy("alpha")
    loads.request("alpha")  # during the pause: folded into the load that follows it
    clock.advance(0.039)
    assert started == ["alpha"]
    clock.advance(0.002)
    assert started == ["alpha", "alpha"]
    loads.finished("alpha")
    assert started == ["alpha", "alpha"]


def test_agents_are_paced_independently() -> None:
    clock, started = Clock(), []
    loads = pacer(clock, started)
    loads.request("alpha")
    loads.request("beta")
    loads.request("alpha")
    assert started == ["alpha", "beta"]
    loads.finished("beta")
    assert not loads.busy("beta") and loads.busy("alpha")


def test_a_burst_of_writes_is_read_at_most_twenty_times_a_second() -> None:
    clock, started = Clock(), []

    def start(agent: str) -> None:  # a read that takes 5 ms
        started.append(agent)
        clock.schedule(0.005, lambda: loads.finished(agent))

    loads: ReloadPacer[str] = ReloadPacer(start, clock.schedule, clock, min_interval=0.05)
    for _ in range(1000):  # a write every millisecond for a second
        loads.request("alpha")
        clock.advance(0.001)
    clock.advance(1.0)
    assert 19 <= len(started) <= 22, len(started)  # one at the start, one per 50 ms, the last
    assert not loads.busy("alpha"), "the last write was read"


def test_a_census_runs_at_once_then_at_most_once_per_interval() -> None:
    clock, started = Clock(), []
    census: CensusThrottle[str] = CensusThrottle(
        started.append, clock.schedule, clock, interval=5.0
    )
    census.request("big")
    assert started == ["big"]
    clock.advance(1.0)
    census.request("big")
    census.request("big")  # already waiting: not scheduled twice
    assert started == ["big"] and len(clock.timers) == 1
    clock.advance(3.9)
    assert started == ["big"]
    clock.advance(0.2)
    assert started == ["big", "big"]
    clock.advance(10.0)
    census.request("big")
    assert started == ["big", "big", "big"]
