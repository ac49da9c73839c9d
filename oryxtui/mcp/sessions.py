"""The MCP sessions open on a server, by the key that opened each: so one key cannot hold more
than its share (each session costs the server memory until it ends or idles out, and the
SDK's own ceiling is per agent, for every client at once). A session is counted from its
opening answer until it is deleted, answered 404 (gone), or idle as long as the SDK keeps an
idle session."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from oryxtui.errors import TooManyRequests

SESSION_IDLE_SECONDS = 1800.0  # what the SDK keeps an idle session for (its default, set)


@dataclass
class _Open:
    who: str
    seen: float


class Seat:
    """A place, held while a session is being opened, for the session it opens (if any)."""

    def __init__(self, count: SessionCount, who: str) -> None:
        self._count, self._who, self._done = count, who, False

    def taken(self, session: str | None) -> None:
        """The opening answer came: `session` opened (None: none did). Only the first counts."""
        if not self._done:
            self._done = True
            self._count._settle(self._who, session)


class SessionCount:
    def __init__(
        self,
        per_key: int,
        idle_seconds: float = SESSION_IDLE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.per_key = per_key
        self.idle_seconds = idle_seconds
        self.clock = clock
        self._open: dict[str, _Open] = {}
        self._opening: dict[str, int] = {}  # seats of sessions being opened, by key
        self._lock = threading.Lock()

    def admit(self, who: str) -> Seat:
        """A seat for one session `who` is opening, counted at once (so requests sent together
        cannot all pass the check before any is counted); TooManyRequests (429), in one
        sentence, when `who` holds as many as it may, those being opened included."""
        with self._lock:
            self._forget_idle()
            held = sum(1 for session in self._open.values() if session.who == who)
            if held + self._opening.get(who, 0) >= self.per_key:
                raise TooManyRequests(
                    f"{who} has {self.per_key} MCP sessions open already, the most a key may; "
                    "end one (its client's DELETE, or quitting the client) or let one idle out."
                )
            self._opening[who] = self._opening.get(who, 0) + 1
        return Seat(self, who)

    def _settle(self, who: str, session: str | None) -> None:
        """The seat of a session being opened is given up; taken by `session` when it opened."""
        with self._lock:
            left = self._opening.get(who, 0) - 1
            if left > 0:
                self._opening[who] = left
            else:
                self._opening.pop(who, None)
            if session is not None:
                self._open[session] = _Open(who, self.clock())

    def used(self, session: str) -> None:
        with self._lock:
            found = self._open.get(session)
            if found is not None:
                found.seen = self.clock()

    def ended(self, session: str) -> None:
        with self._lock:
            self._open.pop(session, None)

    def open(self) -> int:
        """Sessions open now, of every key (those idle too long are forgotten)."""
        with self._lock:
            self._forget_idle()
            return len(self._open)

    def held(self, who: str) -> int:
        with self._lock:
            self._forget_idle()
            return sum(1 for session in self._open.values() if session.who == who)

    def _forget_idle(self) -> None:
        oldest = self.clock() - self.idle_seconds
        for session, found in list(self._open.items()):
            if found.seen < oldest:
                del self._open[session]
