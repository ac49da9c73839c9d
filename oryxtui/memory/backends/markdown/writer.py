"""Writing MEMORY.md: under a cross-process lock, into a temp file, switched into place
atomically, and never over a save someone made without the lock (an editor, upstream OryxOS).
A crash at any instant leaves the old file or the new one."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple, TypeVar

from oryxtui.errors import MemoryWriteError
from oryxtui.memory.backends.markdown import sections
from oryxtui.memory.backends.markdown.reader import (
    ChunkedFile,
    LoadedFile,
    MemoryFiles,
    WholeFile,
    has_text,
)
from oryxtui.memory.files import (
    MISSING,
    StatSignature,
    exchange,
    file_lock,
    fsync_folder,
    signature_of,
    stat_signature,
    write_temp,
)
from oryxtui.memory.format import MemoryEntry, Scope
from oryxtui.workspace import Workspace

Result = TypeVar("Result")


class Written(NamedTuple):
    """What a write changed: the signature of the file it changed and of the file it left,
    and the text it changed when that was read whole (a big file's splice never is)."""

    made_on: StatSignature
    now: StatSignature
    found: str | None


TEMP_PREFIX = ".MEMORY.md."
TEMP_SUFFIX = ".tmp"
MAX_ATTEMPTS = 50


class MemoryWriter:
    def __init__(
        self, workspace: Workspace, files: MemoryFiles, lock_timeout: float = 15.0
    ) -> None:
        self.workspace = workspace
        self.files = files
        self.lock_timeout = lock_timeout
        # How long an empty or changing file must stay still before it is written to.
        self.settle_seconds = 0.2

    def locked(self, path: Path, create: bool = True) -> contextlib.AbstractContextManager[None]:
        """The cross-process lock on MEMORY.md.lock (with `create`, its folder is made)."""
        return file_lock(self.workspace, path, self.lock_timeout, create)

    def wait_until_stable(self, path: Path, limit: float = 10.0) -> None:
        """Never write over a file mid-save (an editor that truncates, then writes)."""
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            before = stat_signature(path)
            time.sleep(self.settle_seconds)
            # A missing file was deleted, not half-saved: writing recreates it.
            if stat_signature(path) == before and (
                before == MISSING or has_text(self.files.load(path).text)
            ):
                return
        raise MemoryWriteError(
            f"{path} is empty or kept changing (an editor mid-save?); nothing was restored — "
            "try again when it is saved."
        )

    def rewrite(
        self, path: Path, change: Callable[[str], tuple[str, Result]]
    ) -> tuple[Result, Written]:
        """Replace the file's text by `change(text)[0]` and return `change(text)[1]` (call under
        `locked`); read whole, and redone if someone saves the file meanwhile."""
        _remove_stale_temp_files(path.parent)
        for _ in range(MAX_ATTEMPTS):
            self.workspace.check_write_target(path)
            loaded = self.files.load(path)
            if loaded.undecodable:
                raise _undecodable(path)
            if loaded.signature != MISSING and not loaded.text:
                time.sleep(self.settle_seconds)  # an editor mid-save?
                if stat_signature(path) != loaded.signature:
                    continue
            text, result = change(loaded.text)
            if text == loaded.text:  # nothing to change: nothing is written
                return result, Written(loaded.signature, loaded.signature, loaded.text)
            temp = write_temp(path, [text.encode("utf-8")], TEMP_PREFIX, TEMP_SUFFIX)
            if stat_signature(path) != loaded.signature:
                os.unlink(temp)
                continue
            placed = self._put_in_place(temp, path, loaded.signature, text)
            if placed is not None:
                return result, Written(loaded.signature, placed, loaded.text)
        raise MemoryWriteError(
            f"{path} kept changing while saving; nothing was written — try again."
        )

    def append(self, path: Path, entries: Sequence[MemoryEntry]) -> Written:
        """Put `entries` in as the newest of their sections (call under `locked`)."""
        _remove_stale_temp_files(path.parent)
        for _ in range(MAX_ATTEMPTS):
            self.workspace.check_write_target(path)
            written = self._append_once(path, entries)
            if written is not None:
                return written
        raise MemoryWriteError(
            f"{path} kept changing while saving; nothing was written — try again."
        )

    def _append_once(self, path: Path, entries: Sequence[MemoryEntry]) -> Written | None:
        """One attempt; None when someone saved the file meanwhile (then read it again)."""
        made = self._new_file(path, entries)
        if made is None:
            return None
        read, temp, text, found = made
        # Someone who ignores the lock may have replaced the file since we read it: then
        # read again and redo, so their edit is never overwritten.
        if stat_signature(path) != read:
            os.unlink(temp)
            return None
        placed = self._put_in_place(temp, path, read, text)
        return None if placed is None else Written(read, placed, found)

    def _new_file(
        self, path: Path, entries: Sequence[MemoryEntry]
    ) -> tuple[StatSignature, Path, str | None, str | None] | None:
        """The file with the entries put in, written to a temp file: (the signature of the file
        it was made from, the temp file, its new text and the text it was made from when it was
        made whole). None: the file is empty and changing (an editor mid-save): read again."""
        with self.files.open(path) as file:
            if isinstance(file, ChunkedFile) and (made := _spliced(path, file, entries)):
                return made  # a big file, never held whole
            # A big file is read whole only for several entries, or a header to add.
            loaded = file.loaded if isinstance(file, WholeFile) else self.files.load(path)
        if loaded.undecodable:
            raise _undecodable(path)
        if loaded.signature != MISSING and not loaded.text:
            # Empty: perhaps an editor that truncates, then writes, is half way through.
            time.sleep(self.settle_seconds)
            if stat_signature(path) != loaded.signature:
                return None
        grouped: dict[Scope, list[str]] = {scope: [] for scope in Scope}
        for entry in entries:  # several at once: a restore, an import
            grouped[entry.scope].append(entry.line)
        text = sections.with_entries(loaded.text, grouped)
        temp = write_temp(path, [text.encode("utf-8")], TEMP_PREFIX, TEMP_SUFFIX)
        return loaded.signature, temp, text, loaded.text

    def _put_in_place(
        self, temp: Path, path: Path, read: StatSignature, text: str | None
    ) -> StatSignature | None:
        """Make `temp` the file at `path`, unless an outside save lands at this very instant;
        returns the signature of the file as it was put in place.

        None means `path` holds the outside writer's file, untouched, and the caller redoes.
        """
        with open(temp, "rb") as ours:
            written = signature_of(os.fstat(ours.fileno()))
            if not _switch(temp, path, read):
                return None
            placed = signature_of(os.fstat(ours.fileno()))
        # Remember what we wrote, saving the next save a re-read, only if nobody has touched it
        # since (an editor that truncates in place may already be at work on it): the signature
        # is taken from the file itself, as another file may already be at `path`.
        untouched = placed[:3] == written[:3]
        if text is not None and untouched:
            self.files.cache.put(path, LoadedFile(placed, text, False))
        # Touched already: the signature of what we wrote, which the file no longer has, so
        # whoever looks next sees that someone else wrote after us.
        return placed if untouched else written


def _spliced(
    path: Path, file: ChunkedFile, entries: Sequence[MemoryEntry]
) -> tuple[StatSignature, Path, None, None] | None:
    """One entry copied into a big file's new version chunk by chunk; None when that cannot
    be done (several entries, or no header for the entry's section yet)."""
    if len(entries) != 1:
        return None
    read = signature_of(os.fstat(file.fd))
    place = sections.insertion_point(file.fd, file.size, entries[0].scope)
    if place is None:
        return None
    line = entries[0].line.encode("utf-8")
    try:
        chunks = sections.copy_with(file.fd, file.size, place, line)
        return read, write_temp(path, chunks, TEMP_PREFIX, TEMP_SUFFIX), None, None
    except UnicodeDecodeError:
        raise _undecodable(path) from None


def _switch(temp: Path, path: Path, read: StatSignature) -> bool:
    ours = stat_signature(temp)[0]
    try:
        return _switch_in(temp, path, read)
    except OSError:
        # Failed before anything moved (a full disk, a read-only folder): `temp` is still our
        # new file, a whole copy of MEMORY.md that must not be left behind. (Another file under
        # that name is an outside save being given back: that one stays.)
        if stat_signature(temp)[0] == ours:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp)
        raise


def _switch_in(temp: Path, path: Path, read: StatSignature) -> bool:
    if read == MISSING:
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
    # inode, size and mtime: another inode is an editor's rename, another mtime an editor that
    # wrote into the file in place.
    if stat_signature(temp)[:3] == read[:3]:
        os.unlink(temp)  # before the fsync, so a failing disk leaves no copy behind
        fsync_folder(path.parent)
        return True
    with contextlib.suppress(FileNotFoundError):
        exchange(temp, path)  # give the outside save its place back, then redo
    os.unlink(temp)
    return False


def _remove_stale_temp_files(folder: Path) -> None:
    """Temp files of writers killed mid-save; safe to delete while we hold the lock."""
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.name.startswith(TEMP_PREFIX) and entry.name.endswith(TEMP_SUFFIX):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.path)


def _undecodable(path: Path) -> MemoryWriteError:
    return MemoryWriteError(
        f"{path} is not valid UTF-8, so saving into it could destroy bytes; "
        "nothing was written — fix the file's encoding first."
    )
