"""Requests that may wait on an agent's lock (saves, edits, deletes, the history's look), kept
from starving everything else: each runs in a thread pool of its own, and at most a few wait
for one agent at a time; more are refused at once with one sentence (503), so a burst of saves
to one agent never holds up the answers about the others."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from functools import partial
from typing import TypeVar

import anyio.to_thread
from anyio import CapacityLimiter

from oryxtui.api.limits import CostBudget
from oryxtui.errors import ServiceUnavailable
from oryxtui.phrases import agent_label

PER_AGENT = 8  # requests waiting on one agent's memory at once
THREADS = 16  # threads for all of them (the other requests keep the default pool)
Result = TypeVar("Result")


COSTLY_THREADS = 2  # threads for costly reads, all callers together


class CostlyReads:
    """The reads that cost the server most — the memory as of a moment or a change, the past
    searched, the replaced versions, the suggestions — each charged to its caller's budget
    (`CostBudget`: 429 with a sentence past it, never 503) and run on threads of their own,
    so that the probes, the saves and the memory now are not kept waiting behind them."""

    def __init__(self, budget: CostBudget | None = None, threads: int = COSTLY_THREADS) -> None:
        self.budget = budget or CostBudget()
        self._threads = CapacityLimiter(threads)

    async def run(
        self, caller: str, doing: str, work: Callable[..., Result], *args: object
    ) -> Result:
        """`work(*args)` on the costly reads' threads, its time charged to `caller`; refused
        (TooManyRequests) before anything is done when `caller` has spent its share."""
        self.budget.check(caller, doing)

        def timed() -> Result:
            started = time.monotonic()
            try:
                return work(*args)
            finally:
                self.budget.charge(caller, time.monotonic() - started)

        return await anyio.to_thread.run_sync(timed, limiter=self._threads)


class CallersReads:
    """The costly reads, for one request's caller."""

    def __init__(self, reads: CostlyReads, caller: str) -> None:
        self.reads, self.caller = reads, caller

    async def run(self, doing: str, work: Callable[..., Result], *args: object) -> Result:
        return await self.reads.run(self.caller, doing, work, *args)


class AgentQueue:
    def __init__(self, per_agent: int = PER_AGENT, threads: int = THREADS) -> None:
        self.per_agent = per_agent
        self._waiting: Counter[str | None] = Counter()  # touched on the event loop only
        self._threads = CapacityLimiter(threads)

    async def run(self, agent: str | None, work: Callable[..., Result], *args: object) -> Result:
        """`work(*args)` in a thread of the pool, unless `per_agent` requests for this agent
        are in flight already (then ServiceUnavailable, before anything is done)."""
        if self._waiting[agent] >= self.per_agent:
            raise ServiceUnavailable(
                f"{self.per_agent} requests are already waiting to change "
                f"{agent_label(agent)}; nothing was done — try again in a moment."
            )
        self._waiting[agent] += 1
        try:
            return await anyio.to_thread.run_sync(partial(work, *args), limiter=self._threads)
        finally:
            self._waiting[agent] -= 1
            if not self._waiting[agent]:
                del self._waiting[agent]
