"""What a long-term memory backend offers: storage, and the capabilities callers may ask for
(restore, history, single-entry changes, ranking). What it reads is `snapshot`'s."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Sequence
from contextlib import AbstractContextManager
from enum import Enum
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from oryxtui.errors import StaleEntry
from oryxtui.memory.format import MemoryEntry, Scope
from oryxtui.memory.snapshot import Corpus, MemoryRead

if TYPE_CHECKING:
    from oryxtui.memory.events import Event
    from oryxtui.memory.history import Actor, Key, Lines, Log, Record


def no_entry(entry_id: str) -> StaleEntry:
    """The refusal of a change to an entry that is not there (any more)."""
    shown = entry_id if len(entry_id) <= 64 and entry_id.isprintable() else repr(entry_id[:64])
    return StaleEntry(
        f"No entry {shown} here: it was edited, moved or removed since it was shown; "
        "nothing was changed — show the memory again for its new id."
    )


class Watch(Enum):
    """How a viewer learns that a store's memory changed."""

    FILES = "files"  # MEMORY.md files: watch them
    DATABASE = "database"  # rows in oryxos.db: watch the database file
    NOTIFY = "notify"  # rows in a shared database: listen to its notifications
    POLL = "poll"  # a server: ask it again now and then


class LongTermMemoryStore(Protocol):
    """Storage for one workspace's memory. `agent` is a validated name, or None for the global
    memory. What the memory block holds is the service's business, not the store's."""

    name: str
    watch: Watch
    # True: the service cuts the archival block to the newest `archival_max_chars`. False: the
    # block is already what upstream injects for this backend (sqlite: the newest 100 rows).
    windowed: bool
    ranked: bool  # True: `search` answers most relevant first (a server that ranks)

    def append(
        self,
        agent: str | None,
        time: str,
        content: str,
        scope: Scope,
        by: Actor = ...,
        op: str = "save",
        may_update: Sequence[Key] = (),
    ) -> MemoryEntry:
        """Store one sanitised entry stamped `time`, saved by `by` (recorded as `op`: a save,
        or a digest oryxtui wrote, with the entries it probably replaces)."""
        ...

    def read(
        self, agent: str | None, newest_bytes: int | None = None, above_bytes: int | None = None
    ) -> MemoryRead:
        """Every entry. With `newest_bytes`, a store holding more than `above_bytes` (by default
        `newest_bytes`) may give only about `newest_bytes` of the newest archival entries
        (`partial`): enough for the block or the screen, in bounded memory."""
        ...

    def search(self, agent: str | None, keyword: str) -> list[MemoryEntry]:
        """Archival entries matching `keyword`: case-insensitively holding it, oldest first
        (a `ranked` store: most relevant first)."""
        ...

    def count_archival(self, agent: str | None) -> int:
        """How many archival entries there are, without holding them all in memory."""
        ...


@runtime_checkable
class Restorable(Protocol):
    """A store that others may rewrite behind oryxtui's back (a file), so that what they
    dropped of what oryxtui wrote (its history knows) can be put back."""

    def lost(self, agent: str | None) -> list[MemoryEntry]:
        """Entries this store wrote that are gone from it (an outside edit)."""
        ...

    def restore(self, agent: str | None, admit: Admit, by: Actor = ...) -> list[MemoryEntry]:
        """Write the lost entries again, with their times, as `admit` lets them in (it raises
        before anything is written if one may not); returns them."""
        ...

    def accept(self, agent: str | None, by: Actor = ...) -> list[MemoryEntry]:
        """Forget the lost entries: their removal was meant; returns them."""
        ...


@runtime_checkable
class Recorded(Protocol):
    """A store that keeps the history of every change to its memory (files and tables)."""

    def reconcile(self, agent: str | None) -> list[Record]:
        """Record what another program changed since oryxtui last looked; returns it."""
        ...

    def changes(self, agent: str | None) -> Log:
        """The history as recorded (oldest first)."""
        ...

    def memory_read(self, lines: Lines) -> MemoryRead:
        """A read of a memory that held `lines`, its block as this store shows it."""
        ...

    def bring_back(
        self,
        agent: str | None,
        entries: Sequence[MemoryEntry],
        by: Actor = ...,
        op: str = "restore",
    ) -> list[MemoryEntry]:
        """Write `entries` (admitted by the service) again, with their times, unless they are
        there; returns those written (recorded as `op`: restore, or import, which counts: an
        entry there once and given twice is written once more)."""
        ...

    def history_problems(self, agent: str | None) -> str | None:
        """A sentence about lines of the history that could not be read, if any."""
        ...

    def note(self, agent: str | None, record: Record) -> None:
        """Record a mark that changes no line (an approval, a held save, …), under the
        memory's lock, as every change is recorded."""
        ...


@runtime_checkable
class Shared(Protocol):
    """A store that many hosts write at once (a shared database)."""

    def agents(self) -> list[str]:
        """Every agent with memory, a history or sessions in it (folders or not)."""
        ...

    def exclusive(self, agent: str | None, what: str) -> AbstractContextManager[None]:
        """One process at a time, on every host, for `what` of the agent (a digest)."""
        ...


@runtime_checkable
class Listened(Protocol):
    """A store whose changes are announced (a shared database's notifications)."""

    def listen(
        self,
        stop: threading.Event,
        heard: Callable[[Event], None],
        lost: Callable[[str], None],
    ) -> None:
        """Until `stop`: `heard(event)` for what others changed (a `MemoryChange`,
        `SessionMoved`, `IndexProgress`, `KeysChange`…), `heard(Reset())` when everything must
        be read again; `lost(sentence)` when announcements stopped."""
        ...


Change = Callable[[MemoryEntry], "MemoryEntry | None"]
# The entries as they may go into a memory (the service's admission), or an error and none.
Admit = Callable[[Sequence[MemoryEntry]], list[MemoryEntry]]


@runtime_checkable
class Editable(Protocol):
    """A store whose entries can be changed one at a time (files and tables)."""

    def replace(
        self,
        agent: str | None,
        entry_id: str,
        change: Change,
        op: str,
        by: Actor = ...,
        successor: Key | None = None,
    ) -> tuple[MemoryEntry, MemoryEntry | None]:
        """Under the store's lock: find the entry `entry_id` (StaleEntry if it is not there),
        put `change(entry)` in its place (None: remove it; another scope, or op "replace":
        at the end of that section), keep everything else as it is, and record it in the
        history as `op` by `by` (with the `successor` that took its place, if another entry
        did); returns (the entry as it was, the entry now)."""
        ...

    def remove_duplicates(self, agent: str | None, by: Actor = ...) -> list[MemoryEntry]:
        """Keep the oldest of entries that are the same (`normalised`, per section) and remove
        the rest, in one write; returns the removed ones."""
        ...


@runtime_checkable
class Rankable(Protocol):
    """A store whose archival entries oryxtui ranks itself (files and tables; not a server
    that ranks)."""

    def corpus_version(self, agent: str | None) -> Hashable:
        """Cheap to ask; equal while the archival entries are the same."""
        ...

    def corpus(self, agent: str | None) -> Corpus: ...
