"""The journal beside each MEMORY.md: every entry oryxtui wrote, one JSON line each, so that
entries an outside edit dropped can be found and put back."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from oryxtui.errors import MemoryWriteError
from oryxtui.memory.format import ENTRY_LINE, MemoryEntry, Scope, clean_entry_line, entry_from_line
from oryxtui.memory.reader import StatSignature, stat_signature
from oryxtui.workspace import Workspace

JOURNAL_SUFFIX = ".journal"


def journal_path(memory_file: Path) -> Path:
    return memory_file.with_name(memory_file.name + JOURNAL_SUFFIX)


@dataclass
class _Read:
    """What was read of a journal: its signature then, its entries, and the bytes consumed."""

    signature: StatSignature
    entries: list[MemoryEntry]
    offset: int
    malformed: int  # complete records that could not be read (a torn write, hand edits)


class Journal:
    """Appends records durably; reads them incrementally (the journal only grows)."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self._read: dict[Path, _Read] = {}

    def record(self, memory_file: Path, entry: MemoryEntry, forgotten: bool = False) -> None:
        """Journal an entry that has landed in `memory_file`, or with `forgotten` one that was
        deliberately removed from it, so it is never reported lost (call under its lock)."""
        journal = journal_path(memory_file)
        if journal.is_symlink():
            raise MemoryWriteError(f"{journal} is a symbolic link; remove it.")
        fields: dict[str, object] = {"scope": entry.scope.value, "line": entry.line}
        if forgotten:
            fields["forgotten"] = True
        record = json.dumps(fields, ensure_ascii=False)
        with open(journal, "a+b") as handle:
            size = os.fstat(handle.fileno()).st_size
            # A writer killed mid-record leaves a torn line: start ours on a line of its own.
            torn = size > 0 and os.pread(handle.fileno(), 1, size - 1) != b"\n"
            handle.write((("\n" if torn else "") + record + "\n").encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())

    def entries(self, memory_file: Path) -> list[MemoryEntry]:
        """Every journaled entry. Only what was added since the last call is read: a long-lived
        agent's journal can hold a great many saves."""
        journal = journal_path(memory_file)
        self.workspace.check_read_target(journal)  # restore writes what it holds: never outside
        signature = stat_signature(journal)
        cached = self._read.get(journal)
        if cached is not None and cached.signature == signature:
            return cached.entries
        # Same file, not shorter: read on from where the last call stopped; else from the start.
        grown = (
            cached is not None
            and cached.signature[0] == signature[0]
            and signature[1] >= cached.offset
        )
        entries, offset, malformed = (
            (list(cached.entries), cached.offset, cached.malformed)
            if grown and cached
            else ([], 0, 0)
        )
        try:
            with open(journal, "rb") as handle:
                handle.seek(offset)
                data = handle.read()
        except FileNotFoundError:
            data = b""
        complete = data[: data.rfind(b"\n") + 1]  # a torn last line waits for its line break
        for raw in complete.decode("utf-8", errors="replace").split("\n"):
            if not raw.strip():
                continue
            found = _record(raw)
            if found is None:
                malformed += 1
            elif found[1]:  # deliberately removed: no longer oryxtui's to restore
                entries = [
                    e for e in entries if (e.scope, e.line) != (found[0].scope, found[0].line)
                ]
            else:
                entries.append(found[0])
        self._read[journal] = _Read(signature, entries, offset + len(complete), malformed)
        return entries

    def problems(self, memory_file: Path) -> str | None:
        """A sentence about journal records that could not be read, if there are any."""
        self.entries(memory_file)
        journal = journal_path(memory_file)
        cached = self._read.get(journal)
        if cached is None or not cached.malformed:
            return None
        count = cached.malformed
        many = count != 1
        return (
            f"{count} record{'s' if many else ''} in {journal} "
            f"{'are' if many else 'is'} not a saved entry (a writer killed mid-record, or a hand "
            f"edit) and {'were' if many else 'was'} skipped."
        )


def _record(raw: str) -> tuple[MemoryEntry, bool] | None:
    """One journal line as the entry it records and whether it was forgotten, cleaned as a
    save is: the journal is a file anyone can edit, so a record cannot forge a section or a
    line. None if it is no record."""
    try:
        record = json.loads(raw)
        scope = Scope(record["scope"])
        match = ENTRY_LINE.fullmatch(str(record["line"]))
        forgotten = record.get("forgotten") is True
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None
    if match is None:
        return None
    return entry_from_line(clean_entry_line(match[1], match[2]), scope), forgotten
