"""A request rate per caller: a token bucket each (the whole minute's allowance may come at
once, then it refills evenly). Kept in this process: each `serve` counts its own requests."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from oryxtui.errors import TooManyRequests

MAX_CALLERS = 100_000  # buckets kept at most; the fullest (the idle) go first


class RateLimit:
    def __init__(self, per_minute: int, monotonic: Callable[[], float] = time.monotonic) -> None:
        self.per_minute = per_minute
        self.monotonic = monotonic
        self._buckets: dict[str, tuple[float, float]] = {}  # caller → (tokens, when)
        self._lock = threading.Lock()

    def spend(self, caller: str) -> None:
        """One request by `caller`, or TooManyRequests saying when to try again."""
        wait = self.take(caller)
        if wait:
            raise TooManyRequests(
                f"More than {self.per_minute} requests a minute from {caller}; nothing was "
                f"done — try again in {wait:.1f} s."
            )

    def take(self, caller: str) -> float:
        """Spend one of `caller`'s allowance: 0 when there was one, else the seconds until
        there is (nothing spent)."""
        return self._bucket(caller, spend=True)

    def waiting(self, caller: str) -> float:
        """The seconds until `caller` has an allowance again (0: it has one now)."""
        return self._bucket(caller, spend=False)

    def _bucket(self, caller: str, spend: bool) -> float:
        if self.per_minute <= 0:
            return 0.0
        now = self.monotonic()
        rate = self.per_minute / 60.0
        with self._lock:
            tokens, then = self._buckets.get(caller, (float(self.per_minute), now))
            tokens = min(float(self.per_minute), tokens + (now - then) * rate)
            if tokens < 1.0:
                self._buckets[caller] = (tokens, now)
                return (1.0 - tokens) / rate
            if spend:
                if len(self._buckets) >= MAX_CALLERS and caller not in self._buckets:
                    self._forget_idle(now, rate)
                self._buckets[caller] = (tokens - 1.0, now)
            return 0.0

    def _forget_idle(self, now: float, rate: float) -> None:
        """Drop the buckets that have refilled (a full bucket is the same as none)."""
        full = float(self.per_minute)
        for caller, (tokens, then) in list(self._buckets.items()):
            if tokens + (now - then) * rate >= full:
                del self._buckets[caller]
