"""What a long-term memory backend offers (storage, and optional capabilities callers ask for),
what it reads, and the snapshot the service hands the UI."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from oryxtui.memory.format import (
    NO_GAPS,
    EntrySequence,
    Gaps,
    InjectedWindow,
    MemoryEntry,
    Scope,
    duplicates,
)

if TYPE_CHECKING:
    from oryxtui.memory.digest import Coverage
    from oryxtui.memory.history import Actor, Lines, Log, Record


class Watch(Enum):
    """How a viewer learns that a store's memory changed."""

    FILES = "files"  # MEMORY.md files: watch them
    DATABASE = "database"  # rows in oryxos.db: watch the database file
    POLL = "poll"  # a server: ask it again now and then


@dataclass(frozen=True)
class Partial:
    """The file was too big to read whole: `archival` holds only its newest entries."""

    file_bytes: int
    older_bytes: int  # archival bytes left out; count them with `count_archival`


@dataclass(frozen=True)
class Section:
    """A section as the memory block shows it: its lines, and the blank lines between them."""

    lines: Sequence[str]
    gaps: Gaps = field(default_factory=lambda: NO_GAPS)


@dataclass(frozen=True)
class MemoryRead:
    """One read of an agent's memory by a store: its entries, and the text the memory block is
    made of. `archival_block` shows the newest entries of `archival` (all, or as many as the
    store's block ever holds); the service cuts the injected window from it."""

    core: Sequence[MemoryEntry]
    archival: Sequence[MemoryEntry]
    core_block: Section
    archival_block: Section
    memory_file: Path | None = None
    warning: str | None = None
    blank_file: bool = False
    partial: Partial | None = None


@dataclass(frozen=True)
class MemorySnapshot:
    """Everything one agent remembers, with the injected archival window marked."""

    agent: str | None
    backend: str
    core: Sequence[MemoryEntry]
    archival: Sequence[MemoryEntry]
    window: InjectedWindow
    memory_file: Path | None = None  # the MEMORY.md it is kept in, which a person may edit
    warning: str | None = None
    # The file is missing or empty: maybe deleted, maybe an editor mid-save (truncate, then write).
    blank_file: bool = False
    partial: Partial | None = None
    # The archival lines oryxtui wrote as digests (its history says): only those count, so an
    # entry that merely looks like one cannot mark others as covered.
    digest_lines: frozenset[str] = frozenset()

    @cached_property
    def core_duplicates(self) -> frozenset[int]:
        """Core entries that repeat an earlier one (made once; the dashboard's worker asks)."""
        return duplicates(self.core)

    @cached_property
    def archival_duplicates(self) -> frozenset[int]:
        return duplicates(self.archival)

    @cached_property
    def digests(self) -> frozenset[int]:
        """Archival entries that are digests (made once, in the dashboard's worker)."""
        from oryxtui.memory.digest import digest_rows

        if not self.digest_lines:
            return frozenset()
        lines = self.archival_lines()
        return frozenset(row for row in digest_rows(lines) if lines[row] in self.digest_lines)

    @cached_property
    def coverage(self) -> Coverage:
        """What the digests cover: the first `count` ordinary archival entries."""
        from oryxtui.memory.digest import Coverage

        return Coverage.of(self.archival, self.digests)

    def digest_covers(self, row: int) -> tuple[int, int] | None:
        """The first and last archival rows the digest at `row` covers (None: it is no digest,
        or covers nothing that is here)."""
        from oryxtui.memory.digest import count_of

        if row not in self.digests:
            return None
        span = self.coverage.ordinary(len(self.archival))[: count_of(self.archival[row])]
        return (span[0], span[-1]) if span else None

    @cached_property
    def covered(self) -> frozenset[int]:
        """Archival entries a digest covers: the oldest ordinary ones, as many as it says."""
        return frozenset(self.coverage.covered(len(self.archival)))

    @property
    def window_start(self) -> int:
        """Index of the first archival entry inside the injected window."""
        return self.window.start

    def archival_lines(self) -> Sequence[str]:
        """The raw archival lines (what recall and the filter match against)."""
        archival = self.archival
        return archival.lines if isinstance(archival, EntrySequence) else [e.line for e in archival]

    def to_json(self) -> dict[str, object]:
        return {
            "agent": self.agent,
            "backend": self.backend,
            "core": [entry.to_json() for entry in self.core],
            "archival": [entry.to_json() for entry in self.archival],
            "window_start": self.window_start,
        }


@dataclass(frozen=True)
class Corpus:
    """The archival entries as ranked recall sees them: each one's `text` (what upstream hashes
    and embeds: the whole line in a file, the content column in a table) and the entry."""

    texts: Sequence[str]
    entries: Sequence[MemoryEntry]
    # Each entry's time, "yyyy-MM-dd HH:mm:ss" local; None: read it from the line.
    times: Sequence[str | None] | None = None
    # False when the entries could not all be read as they are (bytes that are not UTF-8):
    # then nothing is dropped from the index because it seems to be gone.
    complete: bool = True


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
    ) -> MemoryEntry:
        """Store one sanitised entry stamped `time`, saved by `by` (recorded as `op`: a save,
        or a digest oryxtui wrote)."""
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


Change = Callable[[MemoryEntry], "MemoryEntry | None"]
# The entries as they may go into a memory (the service's admission), or an error and none.
Admit = Callable[[Sequence[MemoryEntry]], list[MemoryEntry]]


@runtime_checkable
class Editable(Protocol):
    """A store whose entries can be changed one at a time (files and tables)."""

    def replace(
        self, agent: str | None, entry_id: str, change: Change, op: str, by: Actor = ...
    ) -> tuple[MemoryEntry, MemoryEntry | None]:
        """Under the store's lock: find the entry `entry_id` (StaleEntry if it is not there),
        put `change(entry)` in its place (None: remove it; another scope: move it to the end
        of that section), keep everything else as it is, and record it in the history as `op`
        by `by`; returns (the entry as it was, the entry now)."""
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
