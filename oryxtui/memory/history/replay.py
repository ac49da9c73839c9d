"""Replaying a history: the memory after any record, the entries oryxtui wrote that nobody
meant to remove (those an outside edit lost), the digests it wrote; and the exact difference
between two memories, as an outside change records it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from oryxtui.memory.format import Scope
from oryxtui.memory.history.records import MARKS, OPS, Key, Lines, Record, Signature

# A history keeps a copy of a memory up to about twice the biggest file it diffs (16 MB): a
# forged history cannot make oryxtui hold more.
MAX_TRACKED_CHARS = 32 << 20


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
        if op == "seen" or op in ("review", "hold", "discard", "dismiss"):
            return  # marks on lines: the memory is as it was
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
        from difflib import SequenceMatcher  # only for a change made behind oryxtui's back

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


def finding(replay: Replay, memory: Lines | None, signature: Signature) -> Record:
    """The record of finding `memory`: what it was when the history starts (a baseline), what
    someone changed since the history left it, or that nothing was (`seen`); for a memory too
    big to copy, that the history no longer knows it (`untracked`)."""
    if memory is None:
        op = "seen" if replay.memory is None else "untracked"
        return Record(0, op, "outside", signature=signature)
    if replay.memory is None:
        return Record(0, "baseline", "outside", after=keys_of(memory), signature=signature)
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


def keys_of(memory: Lines) -> tuple[Key, ...]:
    return tuple((scope, line) for scope in Scope for line in memory[scope])


def origins(records: Iterable[Record]) -> dict[Key, Record]:
    """The record that wrote each line now in the memory (replayed oldest first): the save,
    edit, import, digest or outside change that put it there; a move keeps the line's writer.
    Lines from before the history knew the memory (its baseline) have none."""
    held: dict[Key, list[Record]] = {}
    for record in records:
        op = record.op
        if op in ("baseline", "untracked"):
            held = {}
            continue
        if op not in OPS or op in MARKS:
            continue  # bookkeeping, and marks that change no line
        writers = []
        for key in record.before:
            stack = held.get(key)
            writers.append(stack.pop(0) if stack else None)
        for index, key in enumerate(record.after):
            moved = op == "move" and index < len(writers) and writers[index] is not None
            held.setdefault(key, []).append(writers[index] if moved else record)  # type: ignore[arg-type]
    return {key: stack[-1] for key, stack in held.items() if stack}
