"""Reading MEMORY.md: one API, two ways, chosen once per read.

A file is read whole and parsed (the parse is cached by the file's stat signature), unless it
is bigger than a threshold and not already parsed: then it is read in parts (`sections`), in
bounded memory. Both give the same answers; only their cost differs.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Protocol

from oryxtui.errors import MemoryWriteError
from oryxtui.memory.backends.markdown import sections
from oryxtui.memory.document import MemoryDocument, parse
from oryxtui.memory.files import MISSING, StatSignature, signature_of
from oryxtui.memory.format import EntrySequence, RecallIndex, Scope
from oryxtui.memory.snapshot import MemoryRead, Partial, Section

CACHED_FILES = 64


def has_text(text: str) -> bool:
    return bool(text) and not text.isspace()  # strip() would copy tens of MB


@dataclass
class LoadedFile:
    """One read of MEMORY.md: its bytes' signature, text, and the parse (made on first use)."""

    signature: StatSignature
    text: str
    undecodable: bool

    @cached_property
    def document(self) -> MemoryDocument:
        return parse(self.text)


class FileCache:
    """The last files read whole, by path; an entry is good while the file's stat signature is
    the same. Shared by the threads of one process."""

    def __init__(self, size: int = CACHED_FILES) -> None:
        self.size = size
        self._files: OrderedDict[Path, LoadedFile] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._files)

    def get(self, path: Path) -> LoadedFile | None:
        with self._lock:
            return self._files.get(path)

    def put(self, path: Path, loaded: LoadedFile) -> None:
        with self._lock:
            self._files[path] = loaded
            self._files.move_to_end(path)
            while len(self._files) > self.size:
                self._files.popitem(last=False)

    def load(self, path: Path) -> LoadedFile:
        """The file as it is now; re-read and re-parsed only when its stat signature changed."""
        try:
            with open(path, "rb") as handle:
                signature = signature_of(os.fstat(handle.fileno()))
                cached = self.get(path)
                if cached is not None and cached.signature == signature:
                    return cached
                raw = handle.read()
        except FileNotFoundError:
            return LoadedFile(MISSING, "", False)
        except OSError as exc:
            raise MemoryWriteError(f"{path} cannot be read ({exc.strerror}).") from None
        try:
            loaded = LoadedFile(signature, raw.decode("utf-8"), False)
        except UnicodeDecodeError:
            loaded = LoadedFile(signature, raw.decode("utf-8", errors="replace"), True)
        self.put(path, loaded)
        return loaded


class MemoryFile(Protocol):
    """What can be read of one MEMORY.md, however it is read."""

    def read(self, newest_bytes: int | None) -> MemoryRead:
        """Every entry; with `newest_bytes`, perhaps only about that much of the newest
        archival ones (`partial`)."""
        ...

    def recall(self, keyword: str) -> list[str]:
        """The archival lines holding `keyword`, case-insensitively, oldest first."""
        ...

    def count_archival(self) -> int: ...

    def present(self, wanted: dict[Scope, set[str]]) -> dict[Scope, set[str]]:
        """Which of the `wanted` lines each section holds; UnicodeDecodeError if the file is
        not UTF-8 (then nothing can be said)."""
        ...

    def counted(self, wanted: set[str]) -> Counter[str]:
        """How often each of the `wanted` lines stands in the two sections; UnicodeDecodeError
        if the file is not UTF-8."""
        ...


class WholeFile:
    """A file read whole and parsed."""

    def __init__(self, path: Path, loaded: LoadedFile) -> None:
        self.path = path
        self.loaded = loaded

    def read(self, newest_bytes: int | None) -> MemoryRead:
        loaded, path = self.loaded, self.path
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
        return MemoryRead(
            core=document.core_entries(),
            archival=document.archival_entries(),
            core_block=Section(document.core_lines, document.core_gaps),
            archival_block=Section(document.archival_lines, document.archival_gaps),
            memory_file=path,
            warning=" ".join(warnings) or None,
            blank_file=not has_text(loaded.text),
        )

    def recall(self, keyword: str) -> list[str]:
        document = self.loaded.document
        lines = document.archival_lines
        return [lines[row] for row in document.recall_positions(keyword)]

    def count_archival(self) -> int:
        return len(self.loaded.document.archival_lines)

    def present(self, wanted: dict[Scope, set[str]]) -> dict[Scope, set[str]]:
        if self.loaded.undecodable:
            raise UnicodeDecodeError("utf-8", b"", 0, 1, "undecodable")
        document = self.loaded.document
        return {
            Scope.CORE: wanted[Scope.CORE].intersection(document.core_lines),
            Scope.ARCHIVAL: wanted[Scope.ARCHIVAL].intersection(document.archival_lines),
        }

    def counted(self, wanted: set[str]) -> Counter[str]:
        if self.loaded.undecodable:
            raise UnicodeDecodeError("utf-8", b"", 0, 1, "undecodable")
        document = self.loaded.document
        lines = (*document.core_lines, *document.archival_lines)
        return Counter(line for line in lines if line in wanted)


class ChunkedFile:
    """A big file read in parts: the headings found in its bytes, each section walked in
    chunks of whole lines, or only its newest part read."""

    def __init__(self, path: Path, fd: int, size: int, load: Callable[[Path], LoadedFile]) -> None:
        self.path = path
        self.fd = fd
        self.size = size
        self.load = load  # for the rare read that must be whole after all

    def read(self, newest_bytes: int | None) -> MemoryRead:
        tail = newest_bytes is not None and sections.read_tail(self.fd, self.size, newest_bytes)
        if not tail:  # as cheap whole (or not UTF-8 in the part read): the whole-file answer
            return WholeFile(self.path, self.load(self.path)).read(None)
        return MemoryRead(
            core=EntrySequence(tail.core_lines, Scope.CORE),
            archival=EntrySequence(tail.archival_lines, Scope.ARCHIVAL),
            core_block=Section(tail.core_lines, tail.core_gaps),
            archival_block=Section(tail.archival_lines, tail.archival_gaps),
            memory_file=self.path,
            partial=Partial(self.size, tail.older_bytes),
        )

    def _archival(self, errors: str) -> Iterator[list[str]]:
        for scope, lines in sections.all_lines(self.fd, self.size, errors=errors):
            if scope is Scope.ARCHIVAL:
                yield lines

    def recall(self, keyword: str) -> list[str]:
        return [
            lines[row]
            for lines in self._archival("replace")
            for row in RecallIndex(lines).positions(keyword)
        ]

    def count_archival(self) -> int:
        return sum(len(lines) for lines in self._archival("replace"))

    def present(self, wanted: dict[Scope, set[str]]) -> dict[Scope, set[str]]:
        found: dict[Scope, set[str]] = {scope: set() for scope in Scope}
        for scope, lines in sections.all_lines(self.fd, self.size, errors="strict"):
            found[scope] |= wanted[scope].intersection(lines)
        return found

    def counted(self, wanted: set[str]) -> Counter[str]:
        found: Counter[str] = Counter()
        for _, lines in sections.all_lines(self.fd, self.size, errors="strict"):
            found.update(line for line in lines if line in wanted)
        return found


class MemoryFiles:
    """Opens MEMORY.md files the cheapest right way and caches the ones read whole."""

    def __init__(self, large_file_bytes: int) -> None:
        # Bigger files are read in parts when all of them is asked for: bounded memory.
        self.large_file_bytes = large_file_bytes
        self.cache = FileCache()

    def load(self, path: Path) -> LoadedFile:
        return self.cache.load(path)

    @contextlib.contextmanager
    def open(
        self, path: Path, threshold: int | None = None, newest: bool = False
    ) -> Iterator[MemoryFile]:
        """The file, to be read whole, or in parts when it is bigger than `threshold` (by
        default `large_file_bytes`). A file already parsed is read whole from the cache,
        unless only its `newest` part is wanted: a big file always shows as its newest part."""
        threshold = self.large_file_bytes if threshold is None else threshold
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            yield WholeFile(path, self.load(path))  # the right answer, or the right error
            return
        try:
            stat = os.fstat(fd)
            cached = self.cache.get(path)
            parsed = cached is not None and cached.signature == signature_of(stat)
            if stat.st_size > threshold and (newest or not parsed):
                yield ChunkedFile(path, fd, stat.st_size, self.load)
            else:
                yield WholeFile(path, self.load(path))
        finally:
            os.close(fd)
