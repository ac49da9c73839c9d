"""The history of an agent's memory: every change as one JSON line, in a file beside it — the
lines before and after, when, and by what (the dashboard, the CLI, the API, an agent's tool with
its session, or an outside writer found when oryxtui next looked). It is the journal of what
oryxtui wrote grown up: it still reads the journal's records, and still answers what an outside
edit lost.

Replaying the records gives the memory as it was after any of them. Each record carries the
signature of the memory it left behind; when the memory is found with another one, someone
changed it behind oryxtui's back, and the difference is recorded once, as an `outside` change.
Every write happens under the memory's lock, so two processes never record the same change.
"""

from __future__ import annotations

import json
import os
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from datetime import datetime
from difflib import SequenceMatcher
from pathlib import Path

from oryxtui.errors import MemoryWriteError, OryxError
from oryxtui.memory.files import fsync_folder, write_temp
from oryxtui.memory.format import (
    ENTRY_LINE,
    MemoryEntry,
    Scope,
    clean_entry_line,
    entry_from_line,
)
from oryxtui.memory.reader import StatSignature, signature_of, stat_signature
from oryxtui.workspace import Workspace

HISTORY_SUFFIX = ".journal"  # the journal's name: old journals are the start of a history
DEFAULT_KEEP = 5000  # records kept when a history is compacted (at half as many again)
# A history keeps a copy of a memory up to about twice the biggest file it diffs (16 MB), and
# reads a file of at most this many bytes: a forged history cannot make oryxtui hold more.
MAX_TRACKED_CHARS = 32 << 20
MAX_HISTORY_BYTES = 256 << 20
TIME_SPEC = "seconds"

Key = tuple[Scope, str]  # an entry as the history keeps it: its section and its line
Lines = dict[Scope, list[str]]  # a memory: each section's entry lines, in order
Signature = tuple[int, ...]  # what a memory looked like when last seen (stat, or row counts)

# The changes a person or a program makes; `baseline` (the memory when the history starts, or
# where it was compacted), `seen` (nothing changed) and `untracked` (the memory grew too big to
# keep a copy of) are the history's own bookkeeping.
OPS = (
    "save",
    "digest",
    "edit",
    "move",
    "delete",
    "dedupe",
    "restore",
    "import",
    "accept",
    "outside",
)
ACTORS = ("dashboard", "cli", "api", "agent", "outside")
OP_LABELS = {
    "save": "saved",
    "digest": "digest written",
    "edit": "edited",
    "move": "moved",
    "delete": "deleted",
    "dedupe": "removed duplicates",
    "restore": "brought back",
    "import": "imported",
    "accept": "accepted a removal",
    "outside": "changed outside oryxtui",
}


@dataclass(frozen=True)
class Actor:
    """Who changes memory: `dashboard`, `cli`, `api`, `agent` (with its session) or `outside`."""

    kind: str
    session: str | None = None


CLI = Actor("cli")
# The actor of a change made in this context (an agent's tool call sets it); else the service's.
current_actor: ContextVar[Actor | None] = ContextVar("oryxtui_current_actor", default=None)


def unrecorded(memory: Path, error: BaseException) -> str:
    """The notice for a change that landed but could not be recorded in its history."""
    reason = str(error) if isinstance(error, OryxError) else f"{type(error).__name__}: {error}"
    return (
        f"The change to {memory} is made, but its history could not be recorded ({reason}); "
        "oryxtui records it as an outside change when it can read the history again."
    )


def describe_actor(record: Record) -> str:
    """What happened and by what, in words: "edited by dashboard", "saved by agent (session
    …)", "changed outside oryxtui"."""
    label = OP_LABELS.get(record.op, record.op)
    if record.actor == "outside":
        return label if record.op == "outside" else f"{label} outside oryxtui"
    session = f" (session {record.session})" if record.session else ""
    return f"{label} by {record.actor}{session}"


@dataclass(frozen=True)
class Record:
    """One change. For an outside change, `was_at` and `at` give where each `before` line stood
    and each `after` line stands in its section; other changes put lines where their op does
    (the end of the section, or the edited line's place) and remove the first equal line."""

    n: int
    op: str
    actor: str
    time: str | None = None
    session: str | None = None
    before: tuple[Key, ...] = ()
    after: tuple[Key, ...] = ()
    at: tuple[int, ...] = ()
    was_at: tuple[int, ...] = ()  # outside: where each `before` line stood in its section
    ours: tuple[Key, ...] | None = None  # a baseline after compaction: what oryxtui wrote
    digests: tuple[str, ...] | None = None  # … and the digests it wrote
    signature: Signature | None = None

    @property
    def shown(self) -> bool:
        """A change someone made (not the history's bookkeeping), worth a line in the log."""
        return self.op in OPS and (self.op != "outside" or bool(self.before or self.after))

    @property
    def removed(self) -> list[MemoryEntry]:
        return [_entry(key) for key in self.before]

    @property
    def added(self) -> list[MemoryEntry]:
        return [_entry(key) for key in self.after]

    def stored(self) -> dict[str, object]:
        """The record as its JSON line holds it."""
        fields: dict[str, object] = {"n": self.n, "time": self.time, "op": self.op}
        fields["actor"] = self.actor
        if self.session:
            fields["session"] = self.session
        if self.before:
            fields["before"] = [
                {**_stored_key(key), **({"at": self.was_at[i]} if self.was_at else {})}
                for i, key in enumerate(self.before)
            ]
        if self.after:
            fields["after"] = [
                {**_stored_key(key), **({"at": self.at[i]} if self.at else {})}
                for i, key in enumerate(self.after)
            ]
        if self.ours is not None:
            fields["ours"] = [_stored_key(key) for key in self.ours]
        if self.digests is not None:
            fields["digests"] = list(self.digests)
        if self.signature is not None:
            fields["signature"] = list(self.signature)
        return fields

    def to_json(self, agent: str | None) -> dict[str, object]:
        """The record as `memory log --json` and the REST API show it."""
        return {
            "n": self.n,
            "time": self.time,
            "agent": agent,
            "actor": self.actor,
            "session": self.session,
            "op": self.op,
            "before": [{"scope": e.scope.value, **e.to_json()} for e in self.removed],
            "after": [{"scope": e.scope.value, **e.to_json()} for e in self.added],
        }


def _stored_key(key: Key) -> dict[str, str]:
    return {"scope": key[0].value, "line": key[1]}


def _entry(key: Key) -> MemoryEntry:
    return entry_from_line(key[1], key[0])


def change(
    op: str,
    actor: Actor,
    before: Iterable[MemoryEntry] = (),
    after: Iterable[MemoryEntry] = (),
) -> Record:
    """A change to record (its number and time are given when it is written)."""
    return Record(
        0,
        op,
        actor.kind,
        session=actor.session,
        before=tuple((e.scope, e.line) for e in before),
        after=tuple((e.scope, e.line) for e in after),
    )


def replacement(op: str, actor: Actor, old: MemoryEntry, new: MemoryEntry | None) -> Record:
    """The change that replaced `old` by `new` (None: removed it): one into the other section
    is a move, whatever else changed (replayed as the line leaving one section for the end of
    the other)."""
    if new is not None and new.scope is not old.scope:
        op = "move"
    return change(op, actor, [old], [new] if new is not None else [])


# Replaying -------------------------------------------------------------------------------------


@dataclass
class Replay:
    """The memory after the records applied so far (None until a baseline says what it was, or
    when it grew past what a history keeps a copy of), the entries oryxtui wrote and nobody
    meant to remove (those an outside edit lost), and the digests oryxtui wrote."""

    memory: Lines | None = None
    ours: dict[Key, None] = field(default_factory=dict)
    digests: dict[str, None] = field(default_factory=dict)  # archival lines of digests
    size: int = 0  # characters in `memory`, about (a bound, not an account)

    def copy(self) -> Replay:
        memory = None if self.memory is None else {s: list(ls) for s, ls in self.memory.items()}
        return Replay(memory, dict(self.ours), dict(self.digests), self.size)

    def apply(self, record: Record) -> None:
        op, memory = record.op, self.memory
        if op in ("baseline", "untracked"):
            self.memory = _lines(record.after) if op == "baseline" else None
            self.size = _size(record.after)
            if record.ours is not None:
                self.ours = dict.fromkeys(record.ours)
            if record.digests is not None:
                self.digests = dict.fromkeys(record.digests)
            self._bound()
            return
        if op == "seen":
            return
        if op == "accept":  # the removal was meant: nothing changes but what is lost
            for key in record.before:
                self.ours.pop(key, None)
            return
        if memory is not None:
            self.size += _size(record.after) - _size(record.before)
            if op == "outside":
                _remove(memory, record.before, record.was_at)
                _insert(memory, record.after, record.at)
            elif op == "edit" and len(record.before) == len(record.after) == 1:
                (scope, old), (_, new) = record.before[0], record.after[0]
                lines = memory[scope]
                try:
                    lines[lines.index(old)] = new
                except ValueError:
                    lines.append(new)
            else:
                _remove(memory, record.before)
                for scope, line in record.after:
                    memory[scope].append(line)
            self._bound()
        if op == "outside":
            self._follow_moves(record)
            return
        gone = record.before
        if gone and memory is not None:
            present = {key for key in gone if key[1] in _set(memory, key[0], len(gone))}
            gone = tuple(key for key in gone if key not in present)
        for key in gone:
            self.ours.pop(key, None)
            if key[0] is Scope.ARCHIVAL:
                self.digests.pop(key[1], None)
        for key in record.after:
            self.ours[key] = None
            if op == "digest":
                self.digests[key[1]] = None

    def _follow_moves(self, record: Record) -> None:
        """An outside edit that moved a line of oryxtui's to the other section: it is still
        oryxtui's, in its new section (so deleting it there later is not a loss)."""
        added = {key for key in record.after}
        for scope, line in record.before:
            other = Scope.CORE if scope is Scope.ARCHIVAL else Scope.ARCHIVAL
            if (scope, line) in self.ours and (other, line) in added:
                del self.ours[(scope, line)]
                self.ours[(other, line)] = None

    def _bound(self) -> None:
        """A history never makes oryxtui keep more than one big memory's worth of lines."""
        if self.size > MAX_TRACKED_CHARS:
            self.memory, self.size = None, 0


def _size(keys: Iterable[Key]) -> int:
    return sum(len(line) + 1 for _, line in keys)


def _set(memory: Lines, scope: Scope, many: int) -> Sequence[str] | set[str]:
    lines = memory[scope]
    return set(lines) if many > 4 else lines


def _lines(keys: Iterable[Key]) -> Lines:
    memory: Lines = {Scope.CORE: [], Scope.ARCHIVAL: []}
    for scope, line in keys:
        memory[scope].append(line)
    return memory


def _remove(memory: Lines, keys: Sequence[Key], at: Sequence[int] = ()) -> None:
    """Remove each line: from where `at` says it stands (when it does), else its first
    occurrence (of equal lines, which one is the same)."""
    places = at if len(at) == len(keys) else [None] * len(keys)
    for scope in Scope:
        wanted = [
            (line, place) for (s, line), place in zip(keys, places, strict=True) if s is scope
        ]
        if not wanted:
            continue
        lines = memory[scope]
        unplaced: Counter[str] = Counter()
        doomed: set[int] = set()
        for line, place in wanted:
            if place is not None and place < len(lines) and lines[place] == line:
                doomed.add(place)
            else:
                unplaced[line] += 1
        if doomed:
            lines = [line for index, line in enumerate(lines) if index not in doomed]
        if unplaced:
            if sum(unplaced.values()) <= 4:
                for line, count in unplaced.items():
                    for _ in range(count):
                        if line in lines:
                            lines.remove(line)
            else:
                kept = []
                for line in lines:
                    if unplaced[line] > 0:
                        unplaced[line] -= 1
                    else:
                        kept.append(line)
                lines = kept
        memory[scope] = lines


def _insert(memory: Lines, keys: Sequence[Key], at: Sequence[int]) -> None:
    places = at if len(at) == len(keys) else [None] * len(keys)
    for (scope, line), place in sorted(
        zip(keys, places, strict=True), key=lambda item: -1 if item[1] is None else item[1]
    ):
        lines = memory[scope]
        lines.insert(len(lines) if place is None else place, line)


def difference(old: Lines, new: Lines) -> tuple[list[Key], list[int], list[Key], list[int]]:
    """What turns `old` into `new`: the lines removed and where each stood in `old`, the lines
    added and where each stands in `new` (replayed by `Replay.apply` as an outside change, it
    gives `new` exactly). The common start and end are skipped before the two are matched, so a
    change to a big memory costs about the size of the change."""
    before: list[Key] = []
    was_at: list[int] = []
    after: list[Key] = []
    now_at: list[int] = []
    for scope in Scope:
        was, now = old[scope], new[scope]
        if was == now:
            continue
        head = 0
        limit = min(len(was), len(now))
        while head < limit and was[head] == now[head]:
            head += 1
        tail = 0
        while tail < limit - head and was[-1 - tail] == now[-1 - tail]:
            tail += 1
        a, b = was[head : len(was) - tail], now[head : len(now) - tail]
        for tag, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
            if tag in ("replace", "delete"):
                before += [(scope, line) for line in a[i1:i2]]
                was_at += range(head + i1, head + i2)
            if tag in ("replace", "insert"):
                after += [(scope, line) for line in b[j1:j2]]
                now_at += range(head + j1, head + j2)
    return before, was_at, after, now_at


def memory_at(records: Sequence[Record], n: int) -> Lines | None:
    """The memory right after record `n` (None if the history does not know it)."""
    replay = Replay()
    for record in records:
        if record.n > n:
            break
        replay.apply(record)
    return replay.memory


# Reading and writing ---------------------------------------------------------------------------


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


class History:
    """Reads histories incrementally (they only grow, until compacted) and appends to them
    durably. Every write is the caller's, under the memory's lock."""

    def __init__(
        self,
        workspace: Workspace,
        clock: Callable[[], datetime] = datetime.now,
        keep: int = DEFAULT_KEEP,
    ) -> None:
        self.workspace = workspace
        self.clock = clock
        self.keep = keep
        self._logs: dict[Path, Log] = {}
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
                record = _parsed(raw, log.last)
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
        log = self.log(path)
        known = log.signature
        pending: list[Record] = []
        if made is None:
            if now == known:
                return []
            pending.append(_found(log.replay, *found()))
        else:
            if made_on != known or known is None:
                pending.append(_found(log.replay, *found()))
            pending.append(replace(made, signature=now))
        return self._append(path, log, pending)

    def _append(self, path: Path, log: Log, pending: list[Record]) -> list[Record]:
        if path.is_symlink():
            raise MemoryWriteError(f"{path} is a symbolic link; remove it.")
        time = self.clock().isoformat(timespec=TIME_SPEC)
        records = [
            replace(record, n=log.last + i, time=time) for i, record in enumerate(pending, 1)
        ]
        data = "".join(json.dumps(r.stored(), ensure_ascii=False) + "\n" for r in records)
        with open(path, "a+b") as handle:
            before = os.fstat(handle.fileno())
            size = before.st_size
            # A writer killed mid-record leaves a torn line: start ours on a line of its own.
            torn = size > 0 and os.pread(handle.fileno(), 1, size - 1) != b"\n"
            written = (("\n" if torn else "") + data).encode("utf-8")
            handle.write(written)
            handle.flush()
            os.fsync(handle.fileno())
            after = signature_of(os.fstat(handle.fileno()))
        with self._lock:
            if (log.offset, log.file_signature[0]) == (size, before.st_ino) and not torn:
                # Read up to where we wrote: take our records as they are, without reading
                # them back.
                for record in records:
                    log.records.append(record)
                    log.replay.apply(record)
                log.offset += len(written)
                log.file_signature = after
        log = self.log(path)
        if len(log.records) > self.keep + self.keep // 2:
            self._compact(path, log)
        return records

    def _compact(self, path: Path, log: Log) -> None:
        """Fold all but the newest `keep` records into a baseline: the memory as they left it."""
        cut = len(log.records) - self.keep
        replay = Replay()
        for record in log.records[:cut]:
            replay.apply(record)
        last = log.records[cut - 1]
        # A memory the history keeps no copy of (too big, or only old journal records so
        # far) is folded into what oryxtui wrote, without the memory.
        baseline = Record(
            last.n,
            "untracked" if replay.memory is None else "baseline",
            "outside",
            time=last.time,
            after=() if replay.memory is None else _keys(replay.memory),
            ours=tuple(replay.ours),
            digests=tuple(replay.digests),
            signature=last.signature,
        )
        kept = [baseline, *log.records[cut:]]
        lines = [(json.dumps(r.stored(), ensure_ascii=False) + "\n").encode() for r in kept]
        temp = write_temp(path, lines, "." + path.name + ".", ".tmp")
        os.replace(temp, path)
        fsync_folder(path.parent)
        self._logs.pop(path, None)


def _found(replay: Replay, memory: Lines | None, signature: Signature) -> Record:
    """The record of finding `memory`: what it was when the history starts (a baseline), what
    someone changed since the history left it, or that nothing was (`seen`); for a memory too
    big to copy, that the history no longer knows it (`untracked`)."""
    if memory is None:
        op = "seen" if replay.memory is None else "untracked"
        return Record(0, op, "outside", signature=signature)
    if replay.memory is None:
        return Record(0, "baseline", "outside", after=_keys(memory), signature=signature)
    before, was_at, after, at = difference(replay.memory, memory)
    return Record(
        0,
        "outside" if before or after else "seen",
        "outside",
        before=tuple(before),
        after=tuple(after),
        at=tuple(at),
        was_at=tuple(was_at),
        signature=signature,
    )


def _keys(memory: Lines) -> tuple[Key, ...]:
    return tuple((scope, line) for scope in Scope for line in memory[scope])


MAX_RECORD_CHARS = 32 << 20  # a change to a memory of at most 16 MB, with room to spare
MAX_NUMBER = 1 << 53
_SIGNATURE_RANGE = 1 << 63


def _no_constants(name: str) -> float:
    raise ValueError(f"{name} is not a number a record holds")


def _number(value: object, low: int, high: int) -> int:
    """`value` when it is an integer (not a bool, not a float) within [low, high]."""
    if type(value) is not int or not low <= value <= high:
        raise ValueError(f"{value!r} is not a number in range")
    return value


def _parsed(raw: str, last: int) -> Record | None:
    """One line of a history as its record; None if it is none. A journal's record (`scope`,
    `line`, perhaps `forgotten`) is a save, or an accepted removal, of unknown time. A history
    is a file anyone can edit: every field is checked (numbers are integers in range, lines
    are text of one line), and a record numbered at or below the one before it is none."""
    if len(raw) > MAX_RECORD_CHARS:
        return None
    try:
        stored = json.loads(raw, parse_constant=_no_constants)
        if not isinstance(stored, dict):
            return None
        if "op" not in stored:
            key = _key(stored)
            if key is None:
                return None
            if stored.get("forgotten") is True:
                return Record(last + 1, "accept", "oryxtui", before=(key,))
            return Record(last + 1, "save", "oryxtui", after=(key,))
        op = stored["op"]
        if op not in (*OPS, "baseline", "seen", "untracked"):
            return None
        n = last + 1 if stored.get("n") is None else _number(stored["n"], 1, MAX_NUMBER)
        if n <= last:
            return None
        gone, items = _items(stored.get("before")), _items(stored.get("after"))
        before = tuple(_key(item) for item in gone)
        after = tuple(_key(item) for item in items)
        if None in before or None in after:
            return None
        ours, digests = stored.get("ours"), stored.get("digests")
        signature = stored.get("signature")
        time, session, actor = stored.get("time"), stored.get("session"), stored.get("actor")
        return Record(
            n,
            op,
            actor if isinstance(actor, str) and actor else "outside",
            time=time if isinstance(time, str) and time else None,
            session=session if isinstance(session, str) and session else None,
            before=before,  # type: ignore[arg-type]
            after=after,  # type: ignore[arg-type]
            at=_places(items),
            was_at=_places(gone),
            ours=None if ours is None else tuple(k for k in map(_key, _items(ours)) if k),
            digests=None
            if digests is None
            else tuple(line for line in _items(digests) if isinstance(line, str)),
            signature=None
            if signature is None
            else tuple(_number(v, -_SIGNATURE_RANGE, _SIGNATURE_RANGE) for v in _items(signature)),
        )
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None


def _items(value: object) -> list[object]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError("not a list")
    return value


def _places(items: list[object]) -> tuple[int, ...]:
    """Where each line stands: an outside change says it of every line, others of none."""
    if not items or not isinstance(items[0], dict) or "at" not in items[0]:
        return ()
    return tuple(_number(item["at"], 0, MAX_NUMBER) for item in items)  # type: ignore[index]


def _key(item: object) -> Key | None:
    """An entry of a record as written (a line of the memory, whatever it holds)."""
    if not isinstance(item, dict):
        return None
    line, scope = item.get("line"), item.get("scope")
    if not isinstance(line, str) or not isinstance(scope, str) or "\n" in line:
        return None
    return Scope(scope), line


def cleaned(key: Key) -> MemoryEntry:
    """A recorded entry as it may be written back, cleaned as a save is: a history is a file
    anyone can edit, so no record can forge a section or a line."""
    scope, line = key
    match = ENTRY_LINE.fullmatch(line)
    if match is not None:
        return entry_from_line(clean_entry_line(match[1], match[2]), scope)
    return entry_from_line(clean_entry_line(None, line.removeprefix("- ")), scope)
