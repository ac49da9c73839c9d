"""The interface every long-term memory backend implements, and the snapshot it hands the UI."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Protocol

from oryxtui.memory.format import (
    EntrySequence,
    InjectedWindow,
    MemoryEntry,
    Scope,
)


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


class LongTermMemoryStore(Protocol):
    """A backend. `agent` is a validated name, or None for the global memory."""

    name: str
    watch: Watch

    def append(self, agent: str | None, time: str, content: str, scope: Scope) -> MemoryEntry:
        """Store one sanitised entry stamped `time`."""
        ...

    def load(self, agent: str | None) -> str:
        """The memory block exactly as injected: core in full, archival windowed."""
        ...

    def recall(self, agent: str | None, keyword: str) -> list[MemoryEntry]:
        """Archival entries whose line contains `keyword`, case-insensitively, oldest first."""
        ...

    def entries(self, agent: str | None, newest_bytes: int | None = None) -> MemorySnapshot:
        """All entries, structured, for the UI and `memory show --json`. With `newest_bytes`, a
        store may return only about that much of the newest archival entries (`partial`)."""
        ...

    def count_archival(self, agent: str | None) -> int:
        """How many archival entries there are, without holding them all in memory."""
        ...

    def lost(self, agent: str | None) -> list[MemoryEntry]:
        """Entries this store wrote that are gone from it (an outside edit); [] if none can be."""
        ...

    def restore(self, agent: str | None) -> list[MemoryEntry]:
        """Write the lost entries again; returns them."""
        ...

    def journal_problems(self, agent: str | None) -> str | None:
        """A sentence about records of the store's journal that could not be read, if any."""
        ...
