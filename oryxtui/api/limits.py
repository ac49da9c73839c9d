"""A request rate per caller: a token bucket each (the whole minute's allowance may come at
once, then it refills evenly). Kept in this process: each `serve` counts its own requests."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from oryxtui.errors import TooManyRequests


class RateLimit:
    def __init__(self, per_minute: int, monotonic: Callable[[], float] = time.monotonic) -> None:
        self.per_minute = per_minute
        self.monotonic = monotonic
        self._buckets: dict[str, tuple[float, float]] = {}  # caller → (tokens, when)
        self._lock = threading.Lock()

    def spend(self, caller: str) -> None:
        """One request by `caller`, or TooManyRequests saying when to try again."""
        if self.per_minute <= 0:
            return
        now = self.monotonic()
        rate = self.per_minute / 60.0
        with self._lock:
            tokens, then = self._buckets.get(caller, (float(self.per_minute), now))
            tokens = min(float(self.per_minute), tokens + (now - then) * rate)
            if tokens < 1.0:
                self._buckets[caller] = (tokens, now)
                wait = (1.0 - tokens) / rate
                raise TooManyRequests(
                    f"More than {self.per_minute} requests a minute from {caller}; nothing was "
                    f"done — try again in {wait:.1f} s."
                )
            self._buckets[caller] = (tokens - 1.0, now)
