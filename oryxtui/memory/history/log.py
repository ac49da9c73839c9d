"""A history file: read incrementally (it only grows, until compacted), appended to durably,
and compacted. Every write is the caller's, under the memory's lock."""

from __future__ import annotations

import json
import operator
import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from oryxtui.errors import MemoryWriteError
from oryxtui.memory.files import (
    StatSignature,
    fsync_folder,
    signature_of,
    stat_signature,
    write_temp,
)
from oryxtui.memory.format import Clock, MemoryEntry
from oryxtui.memory.history.records import (
    MAX_NUMBER,
    Lines,
    Record,
    Signature,
    cleaned,
    parsed,
)
from oryxtui.memory.history.replay import Replay, finding, keys_of
from oryxtui.privacy import private_opener
from oryxtui.workspace import Workspace

HISTORY_SUFFIX = ".journal"  # the journal's name: old journals are the start of a history
DEFAULT_KEEP = 5000  # records kept when a history is compacted (at half as many again)
# A history file of more than this is not read: a forged one cannot make oryxtui hold more.
MAX_HISTORY_BYTES = 256 << 20
# A history grown past this (plus a few copies of its memory) is compacted to half of it: the
# changes it records cannot make it grow without bound (a forged history's lines, recorded
# again as an outside removal, would otherwise double it).
HISTORY_BUDGET_BYTES = 16 << 20
MEMORY_COPIES = 4
TIME_SPEC = "seconds"


# How oryxtui begins every record it writes: a history whose lines all begin so, numbered in
# order, is appended to after reading only its last records (`History.tail`). Found after a
# line break (a literal the expression engine skips to), not at `^` in MULTILINE (20× slower).
_NUMBERED = re.compile(rb'\n\{"n": (\d+), ')


def history_path(memory_file: Path) -> Path:
    return memory_file.with_name(memory_file.name + HISTORY_SUFFIX)


@dataclass
class Log:
    """What was read of a history file: its records, their replay, and where reading stopped."""

    file_signature: StatSignature
    offset: int
    records: list[Record]
    replay: Replay
    malformed: int = 0  # complete lines that are no record (a torn write, a hand edit)

    @property
    def last(self) -> int:
        return self.records[-1].n if self.records else 0

    @property
    def signature(self) -> Signature | None:
        """The signature of the memory as the last record left it."""
        for record in reversed(self.records):
            if record.signature is not None:
                return record.signature
            if record.op != "seen":
                return None
        return None


@dataclass(frozen=True)
class Tail:
    """What a save needs of a history it has not read whole: the file as it was, its lines, the
    last record's number and the memory's signature as the history left it."""

    file_signature: StatSignature
    size: int
    lines: int
    last: int
    signature: Signature | None


class History:
    """Reads histories incrementally (they only grow, until compacted) and appends to them
    durably. Every write is the caller's, under the memory's lock."""

    def __init__(
        self,
        workspace: Workspace,
        clock: Clock = datetime.now,
        keep: int = DEFAULT_KEEP,
    ) -> None:
        self.workspace = workspace
        self.clock = clock
        self.keep = keep
        self._logs: dict[Path, Log] = {}
        self._tails: dict[Path, Tail] = {}  # of histories a save appended to without reading
        self._lock = threading.Lock()  # the dashboard's workers read logs from several threads

    def log(self, path: Path) -> Log:
        """Everything recorded in `path`; only what was added since the last call is read (and
        added to the log in place: a long history is never copied)."""
        with self._lock:
            signature = stat_signature(path)
            log = self._logs.get(path)
            if log is not None and log.file_signature == signature:
                return log  # nothing read: nothing to check
        self.workspace.check_read_target(path)  # bring back writes what it holds: never outside
        with self._lock:
            log = self._logs.get(path)
            grown = (
                log is not None
                and log.file_signature[0] == signature[0]
                and signature[1] >= log.offset
            )
            if not grown or log is None:
                log = Log(signature, 0, [], Replay())
            try:
                with open(path, "rb") as handle:
                    size = os.fstat(handle.fileno()).st_size
                    if size > MAX_HISTORY_BYTES:
                        raise MemoryWriteError(
                            f"{path} is {size >> 20} MB, more than oryxtui reads of a history; "
                            "move it aside and oryxtui starts a new one."
                        )
                    handle.seek(log.offset)
                    data = handle.read(size - log.offset)
            except FileNotFoundError:
                data = b""
            complete = data[: data.rfind(b"\n") + 1]  # a torn last line waits for its break
            for raw in complete.decode("utf-8", errors="replace").split("\n"):
                if not raw.strip():
                    continue
                record = parsed(raw, log.last)
                if record is None:
                    log.malformed += 1
                    continue
                log.records.append(record)
                log.replay.apply(record)
            log.offset += len(complete)
            log.file_signature = signature
            self._logs[path] = log
            return log

    def ours(self, path: Path) -> list[MemoryEntry]:
        """The entries oryxtui wrote that nobody meant to remove, oldest first."""
        log = self.log(path)
        with self._lock:
            keys = list(log.replay.ours)
        return [cleaned(key) for key in keys]

    def problems(self, path: Path) -> str | None:
        """A sentence about lines of the history that could not be read, if there are any."""
        count = self.log(path).malformed
        if not count:
            return None
        many = count != 1
        return (
            f"{count} record{'s' if many else ''} in {path} "
            f"{'are' if many else 'is'} not a change (a writer killed mid-record, or a hand "
            f"edit) and {'were' if many else 'was'} skipped."
        )

    def commit(
        self,
        path: Path,
        made: Record | None,
        made_on: Signature | None,
        now: Signature,
        found: Callable[[], tuple[Lines | None, Signature]],
    ) -> list[Record]:
        """Record `made`, a change made to the memory found with signature `made_on`, which
        left it with signature `now`. If the history did not leave the memory that way, someone
        changed it behind oryxtui's back first: `found()` gives the memory as the change found
        it, and the difference is recorded before the change. With `made` None, only look:
        `found()` gives the memory as it is now. Call under the memory's lock; returns what was
        recorded. (`found()` may give None for the memory: too big to keep a copy of; then the
        history records changes but not the memory they were made to.)"""
        with self._lock:
            unread = path not in self._logs
        if made is not None and made_on is not None and unread:
            # A process that has not read this history (a hook's save): when it left the
            # memory as the change found it, the change follows its last record.
            tail = self.tail(path)
            if tail is not None and tail.signature == made_on:
                appended = self._append_after(path, tail, replace(made, signature=now))
                if appended is not None:
                    return appended
        log = self.log(path)
        pending = pending_records(log, made, made_on, now, found)
        return self._append(path, log, pending) if pending else []

    def tail(self, path: Path) -> Tail | None:
        """The end of a history, read without reading its records but the last: None when it
        is not plainly as oryxtui writes it — a line not numbered so, numbers out of order, a
        last record that does not read (then it is read whole, and such lines skipped)."""
        known = self._tails.get(path)
        if known is not None and known.file_signature == stat_signature(path):
            return known
        self.workspace.check_read_target(path)
        try:
            with open(path, "rb") as handle:
                stat = os.fstat(handle.fileno())
                if stat.st_size > MAX_HISTORY_BYTES:
                    return None
                data = handle.read(stat.st_size)
        except FileNotFoundError:
            return None
        complete = data[: data.rfind(b"\n") + 1]
        numbers = [int(number) for number in _NUMBERED.findall(b"\n" + complete)]
        if not numbers or len(numbers) != complete.count(b"\n"):
            return None
        if numbers[0] < 1 or numbers[-1] > MAX_NUMBER:
            return None
        if not all(map(operator.lt, numbers, numbers[1:])):
            return None
        # The memory's signature as the history left it (`Log.signature`): the last record's,
        # past records of a look that found nothing.
        signature, end = None, len(complete) - 1
        for index in range(len(numbers) - 1, -1, -1):
            start = complete.rfind(b"\n", 0, end) + 1
            raw = complete[start:end].decode("utf-8", errors="replace")
            record = parsed(raw, numbers[index - 1] if index else 0)
            if record is None or record.n != numbers[index]:
                return None  # (not a record, or one of upstream's journal, numbered on reading)
            if record.signature is not None or record.op != "seen":
                signature = record.signature
                break
            end = start - 1
        return Tail(signature_of(stat), stat.st_size, len(numbers), numbers[-1], signature)

    def _append_after(self, path: Path, tail: Tail, made: Record) -> list[Record] | None:
        """`made` appended after `tail`; None when the history is due to be compacted (then it
        is read whole)."""
        (record,) = numbered(tail.last, [made], self.clock)
        data = json.dumps(record.stored(), ensure_ascii=False) + "\n"
        if tail.lines >= self.keep + self.keep // 2 or tail.size + len(data) > self._budget(path):
            return None
        size, inode, torn, written, after = self._write(path, data)
        with self._lock:
            if (size, inode) == (tail.size, tail.file_signature[0]) and not torn:
                lines = tail.lines + 1
                self._tails[path] = Tail(after, size + written, lines, record.n, made.signature)
            else:
                self._tails.pop(path, None)
        return [record]

    def _write(self, path: Path, data: str) -> tuple[int, int, bool, int, StatSignature]:
        """`data` appended durably: the size and inode the file had, whether a torn last line
        was ended first, the bytes written, and what the file looks like after."""
        if path.is_symlink():
            raise MemoryWriteError(f"{path} is a symbolic link; remove it.")
        with open(path, "a+b", opener=private_opener) as handle:
            before = os.fstat(handle.fileno())
            size = before.st_size
            # A writer killed mid-record leaves a torn line: start ours on a line of its own.
            torn = size > 0 and os.pread(handle.fileno(), 1, size - 1) != b"\n"
            written = (("\n" if torn else "") + data).encode("utf-8")
            handle.write(written)
            handle.flush()
            os.fsync(handle.fileno())
            after = signature_of(os.fstat(handle.fileno()))
        return size, before.st_ino, torn, len(written), after

    def _append(self, path: Path, log: Log, pending: list[Record]) -> list[Record]:
        records = numbered(log.last, pending, self.clock)
        data = "".join(json.dumps(r.stored(), ensure_ascii=False) + "\n" for r in records)
        size, inode, torn, written, after = self._write(path, data)
        with self._lock:
            if (log.offset, log.file_signature[0]) == (size, inode) and not torn:
                # Read up to where we wrote: take our records as they are, without reading
                # them back.
                for record in records:
                    log.records.append(record)
                    log.replay.apply(record)
                log.offset += written
                log.file_signature = after
        log = self.log(path)
        budget = self._budget(path)
        if len(log.records) > self.keep + self.keep // 2 or log.offset > budget:
            self._compact(path, log, budget // 2)
        return records

    def _budget(self, path: Path) -> int:
        """The bytes a history may take before it is compacted: a fixed allowance and a few
        copies of the memory it records."""
        memory = path.with_name(path.name.removesuffix(HISTORY_SUFFIX))
        try:
            size = memory.stat().st_size
        except OSError:
            size = 0
        return HISTORY_BUDGET_BYTES + MEMORY_COPIES * size

    def _compact(self, path: Path, log: Log, max_bytes: int) -> None:
        """Fold all but the newest records into a baseline (the memory as they left it):
        at most `keep` are kept, and only as many as fit in `max_bytes`."""
        newest: list[bytes] = []
        size = 0
        for record in reversed(log.records[-self.keep :]):
            line = (json.dumps(record.stored(), ensure_ascii=False) + "\n").encode()
            if size + len(line) > max_bytes and newest:
                break
            newest.append(line)
            size += len(line)
        newest.reverse()
        folded = log.records[: len(log.records) - len(newest)]
        if not folded:
            return
        lines = [(json.dumps(baseline(folded).stored(), ensure_ascii=False) + "\n").encode()]
        lines += newest
        temp = write_temp(path, lines, "." + path.name + ".", ".tmp")
        os.replace(temp, path)
        fsync_folder(path.parent)
        self._logs.pop(path, None)


# What a history records, whether it is a file or a table.


def pending_records(
    log: Log,
    made: Record | None,
    made_on: Signature | None,
    now: Signature,
    found: Callable[[], tuple[Lines | None, Signature]],
) -> list[Record]:
    """The records a change (or, with `made` None, a look) adds to `log`: first what someone
    changed behind oryxtui's back, found by the signature, then the change itself."""
    known = log.signature
    pending: list[Record] = []
    if made is None:
        if now == known:
            return []
        pending.append(finding(log.replay, *found()))
    else:
        if made_on != known or known is None:
            pending.append(finding(log.replay, *found()))
        pending.append(replace(made, signature=now))
    return pending


def numbered(last: int, pending: list[Record], clock: Clock) -> list[Record]:
    """`pending` numbered after the record numbered `last` and stamped now."""
    time = clock().isoformat(timespec=TIME_SPEC)
    return [replace(record, n=last + i, time=time) for i, record in enumerate(pending, 1)]


def baseline(folded: list[Record]) -> Record:
    """One record standing for `folded` (the oldest records of a history): the memory as they
    left it, what oryxtui wrote, the digests and the versions replaced."""
    from oryxtui.memory.history.validity import retired  # (what was replaced: compaction only)

    replay = Replay()
    for record in folded:
        replay.apply(record)
    last = folded[-1]
    # A memory the history keeps no copy of (too big, or only old journal records so far) is
    # folded into what oryxtui wrote, without the memory.
    return Record(
        last.n,
        "untracked" if replay.memory is None else "baseline",
        "outside",
        time=last.time,
        after=() if replay.memory is None else keys_of(replay.memory),
        ours=tuple(replay.ours),
        digests=tuple(replay.digests),
        signature=last.signature,
        retired=tuple((r.key, r.until, r.successor, r.actor) for r in retired(folded).values()),
    )
