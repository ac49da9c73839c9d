"""What a caller may have at once: a request rate (a token bucket each: the whole minute's
allowance may come at once, then it refills evenly), and event streams open. Kept in this
process: each `serve` counts its own."""

from __future__ import annotations

import threading
import time
from collections import Counter
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


class CostBudget:
    """Seconds of the server's work each caller may spend on costly reads: a bucket of
    `seconds` that refills at `per_second`, charged what each read took; a caller in debt is
    refused (429, with when to try again) until it has refilled."""

    def __init__(
        self,
        seconds: float = 3.0,
        per_second: float = 0.5,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.seconds = seconds
        self.per_second = per_second
        self.monotonic = monotonic
        self._buckets: dict[str, tuple[float, float]] = {}  # caller → (seconds left, when)
        self._lock = threading.Lock()

    def check(self, caller: str, doing: str) -> None:
        """TooManyRequests when `caller` has spent its share; nothing is charged."""
        left = self._left(caller, 0.0)
        if left < 0:
            wait = -left / self.per_second
            raise TooManyRequests(
                f"{caller} has used its share of the server's time for costly reads ({doing}); "
                f"nothing was done — try again in {wait:.1f} s."
            )

    def charge(self, caller: str, seconds: float) -> None:
        self._left(caller, seconds)

    def _left(self, caller: str, spent: float) -> float:
        now = self.monotonic()
        with self._lock:
            left, then = self._buckets.get(caller, (self.seconds, now))
            left = min(self.seconds, left + (now - then) * self.per_second) - spent
            if left >= self.seconds:
                self._buckets.pop(caller, None)  # full: the same as none
            else:
                if len(self._buckets) >= MAX_CALLERS and caller not in self._buckets:
                    self._buckets.clear()  # a flood of callers: every one starts full
                self._buckets[caller] = (left, now)
            return left


class StreamSlots:
    """How many event streams are open, per caller and in all."""

    def __init__(self, total: int, per_caller: int) -> None:
        self.total = total
        self.per_caller = per_caller
        self._open: Counter[str] = Counter()
        self._lock = threading.Lock()

    def take(self, who: str) -> Slot:
        with self._lock:
            if self._open[who] >= self.per_caller:
                raise TooManyRequests(
                    f"{who} has {self.per_caller} event streams open already, the most a key "
                    "may; close one (each dashboard or client needs one)."
                )
            if sum(self._open.values()) >= self.total:
                raise TooManyRequests(
                    f"The server has {self.total} event streams open, its limit; try again "
                    "in a minute."
                )
            self._open[who] += 1
        return Slot(self, who)

    def give_back(self, who: str) -> None:
        with self._lock:
            self._open[who] -= 1
            if self._open[who] <= 0:
                del self._open[who]

    def open(self, who: str | None = None) -> int:
        with self._lock:
            return sum(self._open.values()) if who is None else self._open[who]


class Slot:
    def __init__(self, slots: StreamSlots, who: str) -> None:
        self._slots, self._who, self._held = slots, who, True

    def release(self) -> None:
        if self._held:
            self._held = False
            self._slots.give_back(self._who)
