"""What a store reads of an agent's memory, and the snapshot of it the service hands the UI,
the CLI and the API (with the injected window marked)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from oryxtui.memory.document import NO_GAPS, Gaps
from oryxtui.memory.format import EntrySequence, MemoryEntry, duplicates
from oryxtui.memory.window import InjectedWindow

if TYPE_CHECKING:
    from oryxtui.memory.digest import Coverage


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
