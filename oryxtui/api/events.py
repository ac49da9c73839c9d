"""What changed, as a numbered stream: the log every `/api/v1/events` connection reads (the
feeds that fill it are in `feed`).

Ids are `<stream>.<n>`: `stream` is new each time the server starts, `n` counts up. A client
that reconnects with the last id it saw (`Last-Event-ID`, or `?since=`) gets every event after
it — nothing missed — while the server still holds them (the newest `KEEP`). An id from an
earlier run of the server, or older than what is held, is answered with a `reset` event:
reload everything, then follow on. So a client never silently misses a change."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import secrets
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from oryxtui.memory.events import Event, StoreState, to_json

log = logging.getLogger("oryxtui.api")
KEEP = 10_000
INTERNAL = frozenset({"keys"})  # kinds the server tells itself, never a client
EVERYONE = frozenset({"reset", "agents", "store"})  # kinds every stream is told, whatever its reach
_EVENT_ID = re.compile(r"([0-9a-f]{8})\.([0-9]{1,18})")


@dataclass(frozen=True)
class Logged:
    """An event as the log holds it: its number, and what a client receives."""

    n: int
    data: dict[str, Any]  # kind, agent, … ; what the client receives as JSON
    json: str = field(default="", compare=False)  # `data` as JSON, made once for every stream

    @property
    def agent(self) -> str | None:
        return self.data.get("agent")

    @property
    def kind(self) -> str:
        return str(self.data["kind"])


class EventLog:
    """The newest KEEP events of this server, numbered; thread-safe to publish into, and
    awaited by the streams. A publication rings one bell per event loop, however many
    streams wait on it, and each event is turned into JSON once."""

    def __init__(self, keep: int = KEEP) -> None:
        self.stream = secrets.token_hex(4)
        self._events: deque[Logged] = deque(maxlen=keep)
        self._last = 0
        self._lock = threading.Lock()
        self._bells: dict[asyncio.AbstractEventLoop, asyncio.Event] = {}
        # The shared database this server reads is out of reach (its listener lost it): told
        # to every stream as a `store` event, and to a new one in its first event.
        self.store_down = False
        # Told of every event before the streams are (in the publisher's thread).
        self.listeners: list[Callable[[Event], None]] = []

    def store(self, down: bool) -> None:
        """Tell every stream the shared database went out of reach, or came back."""
        if down != self.store_down:
            self.store_down = down
            self.publish(StoreState(down))

    @property
    def last(self) -> int:
        return self._last

    def id_of(self, n: int) -> str:
        return f"{self.stream}.{n}"

    def publish(self, event: Event) -> None:
        for listener in self.listeners:  # (the server's metrics)
            try:
                listener(event)
            except Exception:  # a listener's fault never keeps an event from the streams
                log.exception("an event listener failed")
        data = to_json(event) | {"time": datetime.now().isoformat(timespec="milliseconds")}
        text = json.dumps(data, ensure_ascii=False)
        with self._lock:
            self._last += 1
            self._events.append(Logged(self._last, data, text))
            loops = list(self._bells)
        for loop in loops:
            try:
                loop.call_soon_threadsafe(self._ring, loop)
            except RuntimeError:  # that loop has closed
                with self._lock:
                    self._bells.pop(loop, None)

    def _ring(self, loop: asyncio.AbstractEventLoop) -> None:
        """On `loop`: wake every stream waiting there; later waiters wait on a new bell."""
        with self._lock:
            bell = self._bells.get(loop)
            self._bells[loop] = asyncio.Event()
        if bell is not None:
            bell.set()

    def position(self, last_seen: str | None) -> int | None:
        """Where a client resumes: the n after which it has seen everything, or None when it
        must reload (an id of another run, malformed, or older than what is held)."""
        found = _EVENT_ID.fullmatch(last_seen.strip()) if last_seen else None
        if found is None or found.group(1) != self.stream:
            return None
        n = int(found.group(2))
        with self._lock:
            oldest = self._events[0].n if self._events else self._last + 1
            if n > self._last or n < oldest - 1:
                return None
        return n

    def after(self, n: int) -> list[Logged] | None:
        """The events after n, or None when some of them are no longer held."""
        with self._lock:
            if n >= self._last:
                return []
            if not self._events or self._events[0].n > n + 1:
                return None
            start = n + 1 - self._events[0].n
            return [self._events[i] for i in range(start, len(self._events))]

    async def wait(self, n: int, timeout: float) -> bool:
        """True when there is an event after n (at once or within `timeout` seconds)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._last > n:
                return True
            bell = self._bells.get(loop)
            if bell is None:
                bell = self._bells[loop] = asyncio.Event()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await bell.wait()
        return self._last > n
