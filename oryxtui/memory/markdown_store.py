"""The `markdown` backend: MEMORY.md files, read by `reader`, written by `writer`, with what
oryxtui wrote kept in a `journal` so that an outside edit cannot silently lose it."""

from __future__ import annotations

from collections.abc import Hashable
from pathlib import Path

from oryxtui.errors import StaleEntry
from oryxtui.memory import sections
from oryxtui.memory.format import (
    MemoryEntry,
    Scope,
    duplicates,
    entry_from_line,
    entry_id,
    entry_line,
    parse,
)
from oryxtui.memory.journal import Journal
from oryxtui.memory.reader import MemoryFiles, stat_signature
from oryxtui.memory.store import Change, Corpus, MemoryRead, Watch
from oryxtui.memory.writer import MemoryWriter
from oryxtui.workspace import Workspace

LARGE_FILE_BYTES = 16 << 20


class MarkdownMemoryStore:
    name = "markdown"
    watch = Watch.FILES
    windowed = True
    ranked = False

    def __init__(self, workspace: Workspace, lock_timeout: float = 15.0) -> None:
        self.workspace = workspace
        self.files = MemoryFiles(LARGE_FILE_BYTES)
        self.writer = MemoryWriter(workspace, self.files, lock_timeout)
        self.journal = Journal(workspace)

    def _path(self, agent: str | None) -> Path:
        """The agent's MEMORY.md, refused when a link takes it (or its folder) outside the
        workspace: an outside file must never be read into a prompt."""
        path = self.workspace.memory_file(agent)
        self.workspace.check_read_target(path)
        return path

    # Storage ----------------------------------------------------------------------------------

    def read(
        self, agent: str | None, newest_bytes: int | None = None, above_bytes: int | None = None
    ) -> MemoryRead:
        threshold = newest_bytes if above_bytes is None else above_bytes
        with self.files.open(self._path(agent), threshold, newest_bytes is not None) as file:
            return file.read(newest_bytes)

    def search(self, agent: str | None, keyword: str) -> list[MemoryEntry]:
        with self.files.open(self._path(agent)) as file:
            return [entry_from_line(line, Scope.ARCHIVAL) for line in file.recall(keyword)]

    def count_archival(self, agent: str | None) -> int:
        with self.files.open(self._path(agent)) as file:
            return file.count_archival()

    def append(self, agent: str | None, time: str, content: str, scope: Scope) -> MemoryEntry:
        path = self.workspace.memory_file(agent)  # `locked` refuses links and outside paths
        entry = entry_from_line(entry_line(time, content), scope)
        with self.writer.locked(path):
            self.writer.append(path, [entry])
            # Journaled only once it has landed: a refused save leaves no trace to "restore".
            # Still under the lock, so no outside edit can drop it before it is journaled.
            self.journal.record(path, entry)
        return entry

    # Editable ---------------------------------------------------------------------------------

    def replace(
        self, agent: str | None, entry_id: str, change: Change
    ) -> tuple[MemoryEntry, MemoryEntry | None]:
        path = self.workspace.memory_file(agent)  # `locked` refuses links and outside paths
        with self.writer.locked(path):
            old, new = self.writer.rewrite(path, lambda text: replaced(text, entry_id, change))
            # Deliberate: the old line is never reported lost; the new one is oryxtui's.
            self.journal.record(path, old, forgotten=True)
            if new is not None:
                self.journal.record(path, new)
        return old, new

    def remove_duplicates(self, agent: str | None) -> list[MemoryEntry]:
        path = self.workspace.memory_file(agent)
        with self.writer.locked(path):
            removed, kept = self.writer.rewrite(path, without_duplicates)
            for entry in removed:
                if (entry.scope, entry.line) not in kept:  # the same line stays: still journaled
                    self.journal.record(path, entry, forgotten=True)
        return removed

    # Rankable ---------------------------------------------------------------------------------

    def corpus_version(self, agent: str | None) -> Hashable:
        path = self._path(agent)
        return (path, stat_signature(path))

    def corpus(self, agent: str | None) -> Corpus:
        loaded = self.files.load(self._path(agent))  # whole, however big: every entry ranks
        document = loaded.document
        return Corpus(
            document.archival_lines, document.archival_entries(), complete=not loaded.undecodable
        )

    # Restorable -------------------------------------------------------------------------------

    def lost(self, agent: str | None) -> list[MemoryEntry]:
        """Entries oryxtui wrote that are no longer in MEMORY.md (an outside edit dropped them)."""
        path = self._path(agent)
        journaled = self.journal.entries(path)
        if not journaled:
            return []
        wanted = {scope: {e.line for e in journaled if e.scope is scope} for scope in Scope}
        # Only the journaled lines are hashed into sets: the file may hold a million entries.
        try:
            with self.files.open(path) as file:
                present = file.present(wanted)
        except UnicodeDecodeError:
            return []  # cannot tell what is there; saving is refused anyway
        missing: list[MemoryEntry] = []
        seen: set[tuple[Scope, str]] = set()
        for entry in journaled:
            key = (entry.scope, entry.line)
            if entry.line not in present[entry.scope] and key not in seen:
                seen.add(key)
                missing.append(entry)
        return missing

    def restore(self, agent: str | None) -> list[MemoryEntry]:
        """Append the lost entries again, oldest first, once the file is stable and parses."""
        path = self.workspace.memory_file(agent)
        self.workspace.check_write_target(path)
        self.writer.wait_until_stable(path)
        with self.writer.locked(path):
            missing = self.lost(agent)
            if missing:
                self.writer.append(path, missing)
        return missing

    def accept(self, agent: str | None) -> list[MemoryEntry]:
        """Record the lost entries as deliberately removed, so they are never reported again."""
        path = self.workspace.memory_file(agent)
        self.workspace.check_write_target(path)
        with self.writer.locked(path):
            missing = self.lost(agent)
            for entry in missing:
                self.journal.record(path, entry, forgotten=True)
        return missing

    def journal_problems(self, agent: str | None) -> str | None:
        return self.journal.problems(self._path(agent))


def replaced(
    text: str, wanted: str, change: Change
) -> tuple[str, tuple[MemoryEntry, MemoryEntry | None]]:
    """`text` with the entry `wanted` changed, every other byte as it was."""
    document = parse(text)
    for scope, spans, seen in (
        (Scope.CORE, document.core_spans, document.core_lines),
        (Scope.ARCHIVAL, document.archival_spans, document.archival_lines),
    ):
        rows = [row for start, stop in spans for row in range(start, stop)]
        for row, line in zip(rows, seen, strict=True):
            if entry_id(scope, line) != wanted:
                continue
            old = entry_from_line(line, scope)
            new = change(old)
            lines = list(document.lines)
            if new is not None and new.scope is scope:
                lines[row] = new.line + ("\r" if lines[row].endswith("\r") else "")
                return "\n".join(lines), (old, new)
            del lines[row]
            result = "\n".join(lines)
            if new is not None:  # moved: the newest of the other section
                result = sections.with_entry(result, new.line, new.scope)
            return result, (old, new)
    raise StaleEntry(
        f"No entry {wanted} here: it was edited, moved or removed since it was shown; "
        "nothing was changed — show the memory again for its new id."
    )


def without_duplicates(
    text: str,
) -> tuple[str, tuple[list[MemoryEntry], set[tuple[Scope, str]]]]:
    """`text` without the entries that repeat an earlier one of their section; every other
    byte as it was. Also returns the removed entries and the (scope, line) of those kept."""
    document = parse(text)
    drop: set[int] = set()
    removed: list[MemoryEntry] = []
    kept: set[tuple[Scope, str]] = set()
    for scope, spans, seen in (
        (Scope.CORE, document.core_spans, document.core_lines),
        (Scope.ARCHIVAL, document.archival_spans, document.archival_lines),
    ):
        rows = [row for start, stop in spans for row in range(start, stop)]
        entries = [entry_from_line(line, scope) for line in seen]
        repeated = duplicates(entries)
        for index, (row, entry) in enumerate(zip(rows, entries, strict=True)):
            if index in repeated:
                drop.add(row)
                removed.append(entry)
            else:
                kept.add((scope, entry.line))
    lines = [line for row, line in enumerate(document.lines) if row not in drop]
    return "\n".join(lines), (removed, kept)
