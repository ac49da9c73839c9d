"""The memories an attached dashboard has read from a server, kept current by the changes the
server's event stream sends: a save on the server is applied here, not read again whole.

A copy is kept by the ids the server gives its entries, and a change is applied as the history
replays it (`Replay`, on ids instead of lines), so a copy follows the server exactly. One that
cannot — a change not sent whole, a problem, or counts that differ from the server's after it
— is dropped, and the next read fetches the memory (what it lacks, and only then)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import Any

from oryxtui.memory.events import MemoryChange, ToldEntry
from oryxtui.memory.format import MemoryEntry, Scope, entry_from_line
from oryxtui.memory.history.records import MARKS, Record
from oryxtui.memory.history.replay import Replay
from oryxtui.memory.snapshot import MemorySnapshot
from oryxtui.memory.window import InjectedWindow, injected_window

KEEP = 32  # agents whose memory is kept (the most recently read)
REVIEW_OPS = frozenset({*MARKS, "reject"})  # changes to what awaits review


@dataclass
class Copy:
    """One agent's memory as the server last told it: its entries' ids in each section, the
    entries by id, which are digests, and the newest change it holds."""

    n: int
    backend: str
    window_chars: int | None  # None: the memory block holds every archival entry
    ids: dict[Scope, list[str]]
    entries: dict[str, MemoryEntry]
    digests: set[str] = field(default_factory=set)
    held: list[Any] | None = None  # what awaits review, as last read (None: read it)

    def apply(self, record: Record, ids: tuple[tuple[str, ...], tuple[str, ...]]) -> None:
        """The change, on ids: as the history replays it on lines."""
        by_id = replace(
            record,
            before=tuple((scope, i) for (scope, _), i in zip(record.before, ids[0], strict=True)),
            after=tuple((scope, i) for (scope, _), i in zip(record.after, ids[1], strict=True)),
        )
        replay = Replay(memory=self.ids)
        replay.apply(by_id)
        if replay.memory is None:
            raise ValueError("the copy grew past what a history keeps")
        self.ids = replay.memory
        for (scope, line), entry_id in zip(record.after, ids[1], strict=True):
            entry = entry_from_line(line, scope)
            self.entries[entry_id] = ToldEntry(scope, entry.time, entry.content, line, entry_id)
        if record.op == "digest":
            self.digests.update(ids[1])
        if record.op in REVIEW_OPS:
            self.held = None
        self.n = max(self.n, record.n)
        if len(self.entries) > 2 * self.count + 64:  # entries removed long ago: let them go
            kept = {i for scope in Scope for i in self.ids[scope]}
            self.entries = {i: e for i, e in self.entries.items() if i in kept}

    @property
    def count(self) -> int:
        return len(self.ids[Scope.CORE]) + len(self.ids[Scope.ARCHIVAL])

    def snapshot(self, agent: str | None) -> MemorySnapshot:
        core = [self.entries[i] for i in self.ids[Scope.CORE]]
        archival = [self.entries[i] for i in self.ids[Scope.ARCHIVAL]]
        lines = [entry.line for entry in archival]
        digests = frozenset(self.entries[i].line for i in self.digests if i in self.entries)
        return MemorySnapshot(
            agent,
            self.backend,
            core,
            archival,
            window_of(lines, self.window_chars),
            digest_lines=digests & frozenset(lines),
        )


def window_of(lines: list[str], window_chars: int | None) -> InjectedWindow:
    """The injected window: the newest entries within `window_chars`, or all of them."""
    if window_chars is None:
        return InjectedWindow(0, tuple(lines))
    return injected_window(lines, window_chars)


class Copies:
    """The copies of one server's memories, agent by agent; thread-safe (the event stream's
    thread applies changes, the dashboard's workers read)."""

    def __init__(self, keep: int = KEEP) -> None:
        self.keep = keep
        self._copies: OrderedDict[str | None, Copy] = OrderedDict()
        self._lock = threading.Lock()
        self.applied = 0  # changes applied to a copy
        self.dropped = 0  # copies dropped: a change they could not follow

    def take(self, agent: str | None, data: dict[str, Any], snapshot: MemorySnapshot) -> None:
        """Keep a copy of what the server answered, if it says which change it holds and
        this client computes the same injected window from it (a file whose blank lines move
        the window is read again each time instead)."""
        n, window_chars = data.get("history"), data.get("window_chars")
        if not isinstance(n, int) or snapshot.warning:
            self.forget(agent)
            return
        window_chars = window_chars if isinstance(window_chars, int) else None
        archival = snapshot.archival
        if (
            window_of([entry.line for entry in archival], window_chars).start
            != snapshot.window.start
        ):
            self.forget(agent)
            return
        copy = Copy(
            n,
            snapshot.backend,
            window_chars,
            {
                Scope.CORE: [entry.id for entry in snapshot.core],
                Scope.ARCHIVAL: [entry.id for entry in archival],
            },
            {entry.id: entry for entry in (*snapshot.core, *archival)},
            {entry.id for entry in archival if entry.line in snapshot.digest_lines},
        )
        with self._lock:
            self._copies[agent] = copy
            self._copies.move_to_end(agent)
            while len(self._copies) > self.keep:
                self._copies.popitem(last=False)

    def snapshot(self, agent: str | None) -> MemorySnapshot | None:
        with self._lock:
            copy = self._copies.get(agent)
            return None if copy is None else copy.snapshot(agent)

    def held(self, agent: str | None) -> list[Any] | None:
        with self._lock:
            copy = self._copies.get(agent)
            return None if copy is None else copy.held

    def keep_held(self, agent: str | None, held: list[Any]) -> None:
        with self._lock:
            copy = self._copies.get(agent)
            if copy is not None:
                copy.held = held

    def follow(self, change: MemoryChange) -> None:
        """Apply a change the server told; a copy that cannot follow it is dropped."""
        agent, record, ids = change.agent, change.record, change.ids
        with self._lock:
            copy = self._copies.get(agent)
            if copy is None:
                return
            if record is None or ids is None or change.problem is not None:
                self._drop(agent)
                return
            if record.n <= copy.n:
                return  # the copy was read after this change: it holds it
            try:
                copy.apply(record, ids)
            except ValueError:
                self._drop(agent)
                return
            if change.counts is not None and change.counts != (
                len(copy.ids[Scope.CORE]),
                len(copy.ids[Scope.ARCHIVAL]),
            ):
                self._drop(agent)
                return
            self.applied += 1

    def _drop(self, agent: str | None) -> None:
        self._copies.pop(agent, None)
        self.dropped += 1

    def forget(self, agent: str | None = None, every: bool = False) -> None:
        """Read again next time: the agent's memory, or every one (`every`)."""
        with self._lock:
            if every:
                self._copies.clear()
            else:
                self._copies.pop(agent, None)
