"""The `markdown` backend: MEMORY.md files, read by `reader`, written by `writer`, every change
recorded in a `history` beside the file (so that an outside edit cannot silently lose what
oryxtui wrote, and anything removed can be brought back)."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Hashable, Sequence
from datetime import datetime
from pathlib import Path

from oryxtui.memory.backends.markdown import sections
from oryxtui.memory.backends.markdown.reader import MemoryFiles
from oryxtui.memory.backends.markdown.writer import MemoryWriter, Written
from oryxtui.memory.document import MemoryDocument, parse
from oryxtui.memory.files import MISSING, stat_signature
from oryxtui.memory.format import (
    Clock,
    EntrySequence,
    MemoryEntry,
    Scope,
    duplicates,
    entry_from_line,
    entry_id,
    entry_line,
)
from oryxtui.memory.history import (
    CLI,
    Actor,
    History,
    Key,
    Lines,
    Log,
    Record,
    Signature,
    change,
    history_path,
    replacement,
    unrecorded,
)
from oryxtui.memory.snapshot import Corpus, MemoryRead, Section
from oryxtui.memory.store import Admit, Change, Watch, no_entry
from oryxtui.notices import notice
from oryxtui.workspace import Workspace

LARGE_FILE_BYTES = 16 << 20
log = logging.getLogger(__name__)


class MarkdownMemoryStore:
    name = "markdown"
    watch = Watch.FILES
    windowed = True
    ranked = False

    def __init__(
        self,
        workspace: Workspace,
        lock_timeout: float = 15.0,
        clock: Clock = datetime.now,
    ) -> None:
        self.workspace = workspace
        self.files = MemoryFiles(LARGE_FILE_BYTES)
        self.writer = MemoryWriter(workspace, self.files, lock_timeout)
        self.history = History(workspace, clock)

    def _path(self, agent: str | None) -> Path:
        """The agent's MEMORY.md, refused when a link takes it (or its folder) outside the
        workspace: an outside file must never be read into a prompt."""
        path = self.workspace.memory_file(agent)
        self.workspace.check_read_target(path)
        return path

    def terms_file(self, agent: str | None) -> Path:
        """Where the check of what a save replaces keeps its term index of the agent's memory
        (`oryxtui/memory/terms_file.py`): MEMORY.md.terms beside it."""
        path = self._path(agent)
        return path.with_name(path.name + ".terms")

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

    def append(
        self,
        agent: str | None,
        time: str,
        content: str,
        scope: Scope,
        by: Actor = CLI,
        op: str = "save",
        may_update: Sequence[Key] = (),
    ) -> MemoryEntry:
        path = self.workspace.memory_file(agent)  # `locked` refuses links and outside paths
        entry = entry_from_line(entry_line(time, content), scope)
        made = dataclasses.replace(change(op, by, after=[entry]), may_update=tuple(may_update))
        with self.writer.locked(path):
            written = self.writer.append(path, [entry])
            # Recorded only once it has landed: a refused save leaves no trace to "restore".
            # Still under the lock, so no outside edit can drop it before it is recorded.
            self._landed(path, made, written)
        return entry

    # Editable ---------------------------------------------------------------------------------

    def replace(
        self,
        agent: str | None,
        entry_id: str,
        change_: Change,
        op: str,
        by: Actor = CLI,
        successor: Key | None = None,
    ) -> tuple[MemoryEntry, MemoryEntry | None]:
        path = self.workspace.memory_file(agent)  # `locked` refuses links and outside paths
        with self.writer.locked(path):
            (old, new), written = self.writer.rewrite(
                path, lambda text: replaced(parse(text), entry_id, change_, op == "replace")
            )
            if new != old:
                made = replacement(op, by, old, new)
                self._landed(path, dataclasses.replace(made, successor=successor), written)
        return old, new

    def remove_duplicates(self, agent: str | None, by: Actor = CLI) -> list[MemoryEntry]:
        path = self.workspace.memory_file(agent)
        with self.writer.locked(path):
            removed, written = self.writer.rewrite(
                path, lambda text: without_duplicates(parse(text))
            )
            if removed:
                self._landed(path, change("dedupe", by, removed), written)
        return removed

    def bring_back(
        self,
        agent: str | None,
        entries: Sequence[MemoryEntry],
        by: Actor = CLI,
        op: str = "restore",
    ) -> list[MemoryEntry]:
        """Write `entries` (admitted already) unless they are there; returns those written.
        An import counts (a line twice in the file is there twice); the rest ask only
        whether the line is in its section. A held save approved (`save`) goes among its
        section's entries where its time puts it; the rest are the newest."""
        path = self.workspace.memory_file(agent)
        with self.writer.locked(path):
            if op == "save":  # a held save approved: where its time puts it, not at the end
                missing = self._absent(path, entries)
                if not missing:
                    return []
                _, written = self.writer.rewrite(path, lambda text: (in_time(text, missing), None))
                self._landed(path, change(op, by, after=missing), written)
                return missing
            return self._put_back(path, lambda: list(entries), by, op)

    def _put_back(
        self,
        path: Path,
        wanted: Callable[[], list[MemoryEntry]],
        by: Actor,
        op: str = "restore",
    ) -> list[MemoryEntry]:
        entries = wanted()
        missing = self._uncounted(path, entries) if op == "import" else self._absent(path, entries)
        if missing:
            written = self.writer.append(path, missing)
            self._landed(path, change(op, by, after=missing), written)
        return missing

    def _absent(self, path: Path, entries: Sequence[MemoryEntry]) -> list[MemoryEntry]:
        """Those of `entries` not in the file (each once). An entry found in the other section
        is there: an editor moved it, it is not lost."""
        if not entries:
            return []
        lines = {e.line for e in entries}
        wanted = dict.fromkeys(Scope, lines)
        # Only the wanted lines are hashed into sets: the file may hold a million entries.
        try:
            with self.files.open(path) as file:
                present = file.present(wanted)
        except UnicodeDecodeError:
            return []  # cannot tell what is there; saving is refused anyway
        missing: list[MemoryEntry] = []
        seen: set[tuple[Scope, str]] = set()
        for entry in entries:
            key = (entry.scope, entry.line)
            if all(entry.line not in present[scope] for scope in Scope) and key not in seen:
                seen.add(key)
                missing.append(entry)
        return missing

    def _uncounted(self, path: Path, entries: Sequence[MemoryEntry]) -> list[MemoryEntry]:
        """Those of `entries` beyond the copies of their line the file holds, in either section
        (so importing an export twice adds nothing, and an entry written twice comes twice)."""
        if not entries:
            return []
        try:
            with self.files.open(path) as file:
                there = file.counted({entry.line for entry in entries})
        except UnicodeDecodeError:
            return []  # cannot tell what is there; saving is refused anyway
        missing: list[MemoryEntry] = []
        for entry in entries:
            if there[entry.line] > 0:
                there[entry.line] -= 1
            else:
                missing.append(entry)
        return missing

    # History ----------------------------------------------------------------------------------

    def _record(self, path: Path, made: Record | None, written: Written | None) -> list[Record]:
        """Record `made` (None: only look) written by `written` (None: nothing was written)."""
        if written is None:
            now = stat_signature(path)
            return self.history.commit(history_path(path), made, now, now, lambda: self._look(path))

        def found() -> tuple[Lines | None, Signature]:  # the file as the change found it
            text = written.found
            whole = text is not None and len(text) <= LARGE_FILE_BYTES
            lines = _lines_of(parse(text)) if whole and text is not None else None
            return lines, written.made_on

        return self.history.commit(history_path(path), made, written.made_on, written.now, found)

    def _landed(self, path: Path, made: Record, written: Written) -> None:
        """Record a change that has landed. A history that cannot be written is a notice, never
        an error: the change is made, and a retry would make it twice."""
        try:
            self._record(path, made, written)
        except Exception as exc:  # whatever it is, the change is on disk
            log.debug("recording a change to %s failed", path, exc_info=True)
            notice(unrecorded(path, exc))

    def _look(self, path: Path) -> tuple[Lines | None, Signature]:
        """The entry lines of the file and its signature; no lines for a file too big to read
        whole (its history records oryxtui's changes, not the memory they were made to)."""
        signature = stat_signature(path)
        if signature[1] > LARGE_FILE_BYTES:
            return None, signature
        loaded = self.files.load(path)
        return _lines_of(loaded.document), loaded.signature

    def reconcile(self, agent: str | None) -> list[Record]:
        """Record what changed behind oryxtui's back since it last looked (nothing while the
        file is empty: an editor mid-save)."""
        path = self._path(agent)
        signature = stat_signature(path)
        if signature[1] == 0 or (signature == MISSING and not history_path(path).exists()):
            return []
        if not path.parent.is_dir():
            return []  # a look never makes a folder
        if signature[1] <= LARGE_FILE_BYTES and self.files.load(path).undecodable:
            return []
        with self.writer.locked(path, create=False):
            return self._record(path, None, None)

    def changes(self, agent: str | None) -> Log:
        return self.history.log(history_path(self._path(agent)))

    def memory_read(self, lines: Lines) -> MemoryRead:
        """A read of a memory that held `lines` (an earlier one, from the history)."""
        core, archival = lines[Scope.CORE], lines[Scope.ARCHIVAL]
        return MemoryRead(
            core=EntrySequence(core, Scope.CORE),
            archival=EntrySequence(archival, Scope.ARCHIVAL),
            core_block=Section(core),
            archival_block=Section(archival),
        )

    def history_problems(self, agent: str | None) -> str | None:
        return self.history.problems(history_path(self._path(agent)))

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
        return self._absent(path, self.history.ours(history_path(path)))

    def restore(self, agent: str | None, admit: Admit, by: Actor = CLI) -> list[MemoryEntry]:
        """Append the lost entries again (as `admit` lets them in), oldest first, once the
        file is stable and parses."""
        path = self.workspace.memory_file(agent)
        self.workspace.check_write_target(path)
        self.writer.wait_until_stable(path)
        with self.writer.locked(path):
            return self._put_back(path, lambda: admit(self.lost(agent)), by)

    def note(self, agent: str | None, record: Record) -> None:
        path = self.workspace.memory_file(agent)
        self.workspace.check_write_target(path)
        with self.writer.locked(path):
            self._record(path, record, None)

    def accept(self, agent: str | None, by: Actor = CLI) -> list[MemoryEntry]:
        """Record the lost entries as deliberately removed, so they are never reported again."""
        path = self.workspace.memory_file(agent)
        self.workspace.check_write_target(path)
        with self.writer.locked(path):
            missing = self.lost(agent)
            if missing:
                self._record(path, change("accept", by, missing), None)
        return missing


def _lines_of(document: MemoryDocument) -> Lines:
    return {Scope.CORE: document.core_lines, Scope.ARCHIVAL: document.archival_lines}


def replaced(
    document: MemoryDocument, wanted: str, change: Change, newest: bool = False
) -> tuple[str, tuple[MemoryEntry, MemoryEntry | None]]:
    """The parsed text with the entry `wanted` changed, every other byte as it was; `newest`:
    the changed entry goes to the end of its section (a replacement, with its own time)."""
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
            if new is not None and new.scope is scope and not newest:
                lines[row] = new.line + ("\r" if lines[row].endswith("\r") else "")
                return "\n".join(lines), (old, new)
            del lines[row]
            result = "\n".join(lines)
            if new is not None:  # moved or replaced: the newest of its section
                result = sections.with_entry(result, new.line, new.scope)
            return result, (old, new)
    raise no_entry(wanted)


def without_duplicates(document: MemoryDocument) -> tuple[str, list[MemoryEntry]]:
    """The parsed text without the entries that repeat an earlier one of their section; every
    other byte as it was. Also returns the removed entries."""
    drop: set[int] = set()
    removed: list[MemoryEntry] = []
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
    lines = [line for row, line in enumerate(document.lines) if row not in drop]
    return "\n".join(lines), removed


def in_time(text: str, entries: Sequence[MemoryEntry]) -> str:
    """The text with each entry put in its section before the first entry written after it
    (one with no time, or none later: as the newest), every other byte as it was."""
    for entry in entries:
        document = parse(text)
        core = entry.scope is Scope.CORE
        spans = document.core_spans if core else document.archival_spans
        seen = document.core_lines if core else document.archival_lines
        rows = [row for start, stop in spans for row in range(start, stop)]
        later = [
            row
            for row, line in zip(rows, seen, strict=True)
            if entry.time is not None
            and (entry_from_line(line, entry.scope).time or "") > entry.time
        ]
        if not later:
            text = sections.with_entry(text, entry.line, entry.scope)
            continue
        lines = list(document.lines)
        ending = "\r" if lines[later[0]].endswith("\r") else ""
        lines.insert(later[0], entry.line + ending)
        text = "\n".join(lines)
    return text
