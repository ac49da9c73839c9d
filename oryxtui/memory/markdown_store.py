"""The `markdown` backend: MEMORY.md files, written atomically under a cross-process lock."""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from oryxtui.errors import MemoryWriteError
from oryxtui.memory import sections
from oryxtui.memory.files import exchange, fsync_folder, write_temp
from oryxtui.memory.format import (
    ENTRY_LINE,
    EntrySequence,
    MemoryDocument,
    MemoryEntry,
    RecallIndex,
    Scope,
    clean_entry_line,
    entry_from_line,
    entry_line,
    injected_window,
    parse,
    render_context,
)
from oryxtui.memory.store import MemorySnapshot, Partial, Watch
from oryxtui.workspace import Workspace

StatSignature = tuple[int, int, int, int]
_MISSING: StatSignature = (0, -1, 0, 0)
_TEMP_PREFIX = ".MEMORY.md."
_TEMP_SUFFIX = ".tmp"
_MAX_ATTEMPTS = 50
JOURNAL_SUFFIX = ".journal"
LARGE_FILE_BYTES = 16 << 20


def _signature(stat: os.stat_result) -> StatSignature:
    return (stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)


def stat_signature(path: Path) -> StatSignature:
    try:
        return _signature(os.stat(path))
    except FileNotFoundError:
        return _MISSING


@dataclass
class LoadedFile:
    """One read of MEMORY.md: its bytes' signature, text, and the parse (made on first use)."""

    signature: StatSignature
    text: str
    undecodable: bool

    @cached_property
    def document(self) -> MemoryDocument:
        return parse(self.text)


@dataclass
class _Journal:
    """What was read of a journal: its signature then, its entries, and the bytes consumed."""

    signature: StatSignature
    entries: list[MemoryEntry]
    offset: int
    malformed: int  # complete records that could not be read (a torn write, hand edits)


class MarkdownMemoryStore:
    name = "markdown"
    watch = Watch.FILES

    def __init__(
        self, workspace: Workspace, archival_max_chars: int = 4000, lock_timeout: float = 15.0
    ) -> None:
        self.workspace = workspace
        self.archival_max_chars = archival_max_chars
        self.lock_timeout = lock_timeout
        self._cache: OrderedDict[Path, LoadedFile] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._journal_cache: dict[Path, _Journal] = {}
        # How long a file must stay unchanged before a restore writes to it.
        self.settle_seconds = 0.2
        # Bigger files are read in chunks for recall, lost and the prompt: bounded memory.
        self.large_file_bytes = LARGE_FILE_BYTES

    # Reading ---------------------------------------------------------------------------------

    def _path(self, agent: str | None) -> Path:
        """The agent's MEMORY.md, refused when a link takes it (or its folder) outside the
        workspace: an outside file must never be read into a prompt."""
        path = self.workspace.memory_file(agent)
        self.workspace.check_read_target(path)
        return path

    def read(self, path: Path) -> LoadedFile:
        """The file as it is now; re-read and re-parsed only when its stat signature changed."""
        try:
            with open(path, "rb") as handle:
                signature = _signature(os.fstat(handle.fileno()))
                cached = self._cached(path)
                if cached is not None and cached.signature == signature:
                    return cached
                raw = handle.read()
        except FileNotFoundError:
            return LoadedFile(_MISSING, "", False)
        except OSError as exc:
            raise MemoryWriteError(f"{path} cannot be read ({exc.strerror}).") from None
        try:
            loaded = LoadedFile(signature, raw.decode("utf-8"), False)
        except UnicodeDecodeError:
            loaded = LoadedFile(signature, raw.decode("utf-8", errors="replace"), True)
        self._remember(path, loaded)
        return loaded

    def _cached(self, path: Path) -> LoadedFile | None:
        with self._cache_lock:
            return self._cache.get(path)

    def _remember(self, path: Path, loaded: LoadedFile) -> None:
        with self._cache_lock:
            self._cache[path] = loaded
            self._cache.move_to_end(path)
            while len(self._cache) > 64:
                self._cache.popitem(last=False)

    @contextlib.contextmanager
    def _large(self, path: Path, threshold: int) -> Iterator[tuple[int, int] | None]:
        """(descriptor, size) of a file bigger than `threshold` that is not already parsed in
        the cache, to be read in parts; None means: read it whole with `read`."""
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            yield None  # `read` gives the right answer or the right error
            return
        try:
            stat = os.fstat(fd)
            cached = self._cached(path)
            parsed = cached is not None and cached.signature == _signature(stat)
            large = stat.st_size > threshold and not parsed
            yield (fd, stat.st_size) if large else None
        finally:
            os.close(fd)

    def load(self, agent: str | None) -> str:
        path = self._path(agent)
        max_chars = self.archival_max_chars
        with self._large(path, self.large_file_bytes) as large:
            tail = large and sections.read_tail(*large, max(1 << 16, 16 * max_chars))
            if tail:
                window = injected_window(tail.archival_lines, max_chars, tail.archival_gaps)
                if window.start > 0:  # the newest lines read hold more than the window takes
                    return render_context(tail.core_lines, window, tail.core_gaps)
        document = self.read(path).document
        window = injected_window(document.archival_lines, max_chars, document.archival_gaps)
        return render_context(document.core_lines, window, document.core_gaps)

    def recall(self, agent: str | None, keyword: str) -> list[MemoryEntry]:
        path = self._path(agent)
        with self._large(path, self.large_file_bytes) as large:
            if large:
                return [
                    entry_from_line(lines[row], Scope.ARCHIVAL)
                    for scope, lines in sections.all_lines(*large, errors="replace")
                    if scope is Scope.ARCHIVAL
                    for row in RecallIndex(lines).positions(keyword)
                ]
        document = self.read(path).document
        lines = document.archival_lines
        return [
            entry_from_line(lines[row], Scope.ARCHIVAL)
            for row in document.recall_positions(keyword)
        ]

    def entries(self, agent: str | None, newest_bytes: int | None = None) -> MemorySnapshot:
        path = self._path(agent)
        if newest_bytes is not None:
            with self._large(path, newest_bytes) as large:
                tail = large and sections.read_tail(*large, newest_bytes)
                if large and tail:
                    return MemorySnapshot(
                        agent=agent,
                        backend=self.name,
                        core=EntrySequence(tail.core_lines, Scope.CORE),
                        archival=EntrySequence(tail.archival_lines, Scope.ARCHIVAL),
                        window=injected_window(
                            tail.archival_lines, self.archival_max_chars, tail.archival_gaps
                        ),
                        memory_file=path,
                        partial=Partial(large[1], tail.older_bytes),
                    )
        loaded = self.read(path)
        document = loaded.document
        warnings = []
        if loaded.undecodable:
            warnings.append(
                f"{path} is not valid UTF-8: undecodable bytes are shown as �, "
                "and saving is refused until the file is fixed."
            )
        if later := document.later_headers():
            rows = ", ".join(str(row + 1) for row in later[:3]) + (", …" if len(later) > 3 else "")
            warnings.append(
                f"{path} repeats a section header (line {rows}); like OryxOS, oryxtui reads only "
                "the first section of each kind, so the lines under a repeated header are not "
                "memory — merge them into the first section."
            )
        return MemorySnapshot(
            agent=agent,
            backend=self.name,
            core=document.core_entries(),
            archival=document.archival_entries(),
            window=injected_window(
                document.archival_lines, self.archival_max_chars, document.archival_gaps
            ),
            memory_file=path,
            warning=" ".join(warnings) or None,
            blank_file=not self._has_text(loaded.text),
        )

    def count_archival(self, agent: str | None) -> int:
        path = self._path(agent)
        with self._large(path, self.large_file_bytes) as large:
            if large:
                return sum(
                    len(lines)
                    for scope, lines in sections.all_lines(*large, errors="replace")
                    if scope is Scope.ARCHIVAL
                )
        return len(self.read(path).document.archival_lines)

    # Writing ---------------------------------------------------------------------------------

    def append(self, agent: str | None, time: str, content: str, scope: Scope) -> MemoryEntry:
        path = self.workspace.memory_file(agent)  # `_writing` refuses links and outside paths
        entry = entry_from_line(entry_line(time, content), scope)
        with self._writing(path):
            self._append_locked(path, [entry])
            # Journaled only once it has landed: a refused save leaves no trace to "restore".
            # Still under the lock, so no outside edit can drop it before it is journaled.
            self._journal(path, entry)
        return entry

    @contextlib.contextmanager
    def _writing(self, path: Path) -> Iterator[None]:
        """The cross-process lock on MEMORY.md.lock, with every refusal as one sentence."""
        from filelock import FileLock, Timeout  # here: reading never locks, so never pays for it

        self.workspace.check_write_target(path)
        lock_path = path.with_name(path.name + ".lock")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.workspace.check_write_target(path)
            if lock_path.is_symlink():
                raise MemoryWriteError(
                    f"{lock_path} is a symbolic link; remove it so oryxtui can lock safely."
                )
            with FileLock(lock_path, timeout=self.lock_timeout):
                yield
        except Timeout:
            raise MemoryWriteError(
                f"{path} stayed locked by another writer for {self.lock_timeout:.0f} s; "
                "nothing was saved — try again."
            ) from None
        except OSError as exc:
            raise MemoryWriteError(
                f"Could not save to {path} ({exc.strerror or exc}); nothing was written."
            ) from None

    # The journal: what oryxtui appended, so an outside edit that drops entries can be undone ---

    @staticmethod
    def journal_path(path: Path) -> Path:
        return path.with_name(path.name + JOURNAL_SUFFIX)

    def _journal(self, path: Path, entry: MemoryEntry) -> None:
        journal = self.journal_path(path)
        if journal.is_symlink():
            raise MemoryWriteError(f"{journal} is a symbolic link; remove it.")
        record = json.dumps({"scope": entry.scope.value, "line": entry.line}, ensure_ascii=False)
        with open(journal, "a+b") as handle:
            size = os.fstat(handle.fileno()).st_size
            # A writer killed mid-record leaves a torn line: start ours on a line of its own.
            torn = size > 0 and os.pread(handle.fileno(), 1, size - 1) != b"\n"
            handle.write((("\n" if torn else "") + record + "\n").encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())

    def _journal_entries(self, path: Path) -> list[MemoryEntry]:
        """Every journaled entry. The journal only grows, so only what was added since the last
        call is read: a long-lived agent's journal can hold a great many saves."""
        journal = self.journal_path(path)
        self.workspace.check_read_target(journal)  # restore writes what it holds: never outside
        signature = stat_signature(journal)
        cached = self._journal_cache.get(journal)
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
            entry = _journal_record(raw)
            if entry is None:
                malformed += 1
            else:
                entries.append(entry)
        self._journal_cache[journal] = _Journal(
            signature, entries, offset + len(complete), malformed
        )
        return entries

    def journal_problems(self, agent: str | None) -> str | None:
        """A sentence about journal records that could not be read, if there are any."""
        path = self._path(agent)
        self._journal_entries(path)
        cached = self._journal_cache.get(self.journal_path(path))
        if cached is None or not cached.malformed:
            return None
        count = cached.malformed
        many = count != 1
        return (
            f"{count} record{'s' if many else ''} in {self.journal_path(path)} "
            f"{'are' if many else 'is'} not a saved entry (a writer killed mid-record, or a hand "
            f"edit) and {'were' if many else 'was'} skipped."
        )

    def lost(self, agent: str | None) -> list[MemoryEntry]:
        """Entries oryxtui wrote that are no longer in MEMORY.md (an outside edit dropped them)."""
        path = self._path(agent)
        journaled = self._journal_entries(path)
        if not journaled:
            return []
        wanted = {scope: {e.line for e in journaled if e.scope is scope} for scope in Scope}
        # Only the journaled lines are hashed into sets: the file may hold a million entries.
        present: dict[Scope, set[str]] = {scope: set() for scope in Scope}
        try:
            with self._large(path, self.large_file_bytes) as large:
                if large:
                    for scope, lines in sections.all_lines(*large, errors="strict"):
                        present[scope] |= wanted[scope].intersection(lines)
                else:
                    loaded = self.read(path)
                    if loaded.undecodable:
                        raise UnicodeDecodeError("utf-8", b"", 0, 1, "undecodable")
                    document = loaded.document
                    present[Scope.CORE] = wanted[Scope.CORE].intersection(document.core_lines)
                    present[Scope.ARCHIVAL] = wanted[Scope.ARCHIVAL].intersection(
                        document.archival_lines
                    )
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
        self._wait_until_stable(path)
        with self._writing(path):
            missing = self.lost(agent)
            if missing:
                self._append_locked(path, missing)
        return missing

    @staticmethod
    def _has_text(text: str) -> bool:
        return bool(text) and not text.isspace()  # strip() would copy tens of MB

    def _wait_until_stable(self, path: Path, limit: float = 10.0) -> None:
        """Never write over a file mid-save (an editor that truncates, then writes)."""
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            before = stat_signature(path)
            time.sleep(self.settle_seconds)
            # A missing file was deleted, not half-saved: restoring recreates it.
            if stat_signature(path) == before and (
                before == _MISSING or self._has_text(self.read(path).text)
            ):
                return
        raise MemoryWriteError(
            f"{path} is empty or kept changing (an editor mid-save?); nothing was restored — "
            "try again when it is saved."
        )

    def _append_locked(self, path: Path, entries: list[MemoryEntry]) -> None:
        self._remove_stale_temp_files(path.parent)
        for _ in range(_MAX_ATTEMPTS):
            self.workspace.check_write_target(path)
            if len(entries) == 1:
                done = self._append_to_large(path, entries[0])
                if done is not None:
                    if done:
                        return
                    continue
            loaded = self.read(path)
            if loaded.undecodable:
                raise _undecodable(path)
            if loaded.signature != _MISSING and not loaded.text:
                # Empty: perhaps an editor that truncates, then writes, is half way through.
                time.sleep(self.settle_seconds)
                if stat_signature(path) != loaded.signature:
                    continue
            first, *rest = entries
            new_text = loaded.document.with_entry(first.line, first.scope)
            for entry in rest:  # only a restore adds several at once
                new_text = parse(new_text).with_entry(entry.line, entry.scope)
            temp = write_temp(path, [new_text.encode("utf-8")], _TEMP_PREFIX, _TEMP_SUFFIX)
            # Someone who ignores the lock (an editor, upstream) may have replaced the file since
            # we read it: then re-read and redo, so their edit is never overwritten.
            if stat_signature(path) != loaded.signature:
                os.unlink(temp)
                continue
            if self._put_in_place(temp, path, loaded.signature, new_text):
                return
        raise MemoryWriteError(
            f"{path} kept changing while saving; nothing was written — try again."
        )

    def _append_to_large(self, path: Path, entry: MemoryEntry) -> bool | None:
        """A big file is copied into the new one with the entry spliced in, never held whole:
        the bytes are exactly those of the whole-file path. True when saved, False to redo (the
        file changed meanwhile), None when this does not apply (a small file, a file already
        parsed in the cache, no heading for the entry's section yet)."""
        with self._large(path, self.large_file_bytes) as large:
            if not large:
                return None
            fd, size = large
            read = _signature(os.fstat(fd))
            place = sections.insertion_point(fd, size, entry.scope)
            if place is None:
                return None
            line = entry.line.encode("utf-8")
            try:
                chunks = sections.copy_with(fd, size, place, line)
                temp = write_temp(path, chunks, _TEMP_PREFIX, _TEMP_SUFFIX)
            except UnicodeDecodeError:
                raise _undecodable(path) from None
        if stat_signature(path) != read:
            os.unlink(temp)
            return False
        return self._put_in_place(temp, path, read, None)

    def _put_in_place(self, temp: Path, path: Path, read: StatSignature, text: str | None) -> bool:
        """Make `temp` the file at `path`, unless an outside save lands at this very instant.

        False means `path` holds the outside writer's file, untouched, and the caller redoes.
        """
        with open(temp, "rb") as ours:
            written = _signature(os.fstat(ours.fileno()))
            if not self._switch(temp, path, read):
                return False
            placed = _signature(os.fstat(ours.fileno()))
        # Remember what we wrote, saving the next save a re-read, only if nobody has touched it
        # since (an editor that truncates in place may already be at work on it): the signature
        # is taken from the file itself, as another file may already be at `path`.
        if text is not None and placed[:3] == written[:3]:
            self._remember(path, LoadedFile(placed, text, False))
        return True

    @classmethod
    def _switch(cls, temp: Path, path: Path, read: StatSignature) -> bool:
        ours = stat_signature(temp)[0]
        try:
            return cls._switch_in(temp, path, read)
        except OSError:
            # Failed before anything moved (a full disk, a read-only folder): `temp` is still
            # our new file, a whole copy of MEMORY.md that must not be left behind. (Another
            # file under that name is an outside save being given back: that one stays.)
            if stat_signature(temp)[0] == ours:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(temp)
            raise

    @staticmethod
    def _switch_in(temp: Path, path: Path, read: StatSignature) -> bool:
        if read == _MISSING:
            try:
                os.link(temp, path)  # creates the file, never replaces one
            except FileExistsError:
                os.unlink(temp)
                return False
            except OSError:  # a file system without hard links
                os.replace(temp, path)
            else:
                os.unlink(temp)
            fsync_folder(path.parent)
            return True
        try:
            swapped = exchange(temp, path)
        except FileNotFoundError:  # deleted since we read it
            os.unlink(temp)
            return False
        if not swapped:  # no atomic exchange here: a plain rename, with its tiny window
            os.replace(temp, path)
            fsync_folder(path.parent)
            return True
        # The file we displaced is now under the temp name. A rename changes ctime, so compare
        # inode, size and mtime: another inode is an editor's rename, another mtime an editor
        # that wrote into the file in place.
        if stat_signature(temp)[:3] == read[:3]:
            os.unlink(temp)  # before the fsync, so a failing disk leaves no copy behind
            fsync_folder(path.parent)
            return True
        with contextlib.suppress(FileNotFoundError):
            exchange(temp, path)  # give the outside save its place back, then redo
        os.unlink(temp)
        return False

    @staticmethod
    def _remove_stale_temp_files(folder: Path) -> None:
        """Temp files of writers killed mid-save; safe to delete while we hold the lock."""
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name.startswith(_TEMP_PREFIX) and entry.name.endswith(_TEMP_SUFFIX):
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(entry.path)


def _journal_record(raw: str) -> MemoryEntry | None:
    """One journal line as the entry it records, cleaned as a save is: the journal is a file
    anyone can edit, so a record cannot forge a section or a line. None if it is no record."""
    try:
        record = json.loads(raw)
        scope = Scope(record["scope"])
        match = ENTRY_LINE.fullmatch(str(record["line"]))
    except (ValueError, KeyError, TypeError, RecursionError):
        return None
    if match is None:
        return None
    return entry_from_line(clean_entry_line(match[1], match[2]), scope)


def _undecodable(path: Path) -> MemoryWriteError:
    return MemoryWriteError(
        f"{path} is not valid UTF-8, so saving into it could destroy bytes; "
        "nothing was written — fix the file's encoding first."
    )
