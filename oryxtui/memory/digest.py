"""Digests: what falls out of the injected window, summarised in one ordinary archival entry
instead of silently dropped. A digest is a line every reader sees as an entry (upstream too):

    - [2026-11-21 09:00:00] 摘要 2026-11-01 09:00 … 2026-11-20 18:00 (37 entries): …

A digest covers the archival entries from the first one up to the last it names (its count
says how many, digests not counted): each new digest summarises the one before it and the
entries since, so the newest digest alone carries the gist of everything that left the window,
and an older digest may leave the window in its turn. The covered entries stay in the file and
stay recallable. A digest's coverage is worked out with the digest in place: once it is
written, every archival entry outside the injected window is covered (writing it pushes a few
more out; it covers those too). Only digests oryxtui wrote count (its history says which);
core is never covered; a digest is at most `max_chars` long."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from oryxtui.memory.format import (
    MemoryEntry,
    Scope,
    entry_from_line,
    entry_line,
    java_length,
    sanitize_content,
)
from oryxtui.memory.tokens import tokens

MARK = "摘要"
DIGEST = re.compile(r"摘要 (.+?) … (.+?) \((\d+) entr(?:y|ies)(?:, ([a-z]+))?\): ")
EXTRACTIVE = "extractive"  # the label of a digest written without an LLM
NO_TIME = "?"
PIECE = " · "  # between the sentences of an extractive summary

# Summarise covered entries into at most the given number of characters ("": could not).
Summariser = Callable[[Sequence[MemoryEntry], int], str]
# Where the injected window would start if `line` were the newest archival entry.
WindowWith = Callable[[str], int]


def is_digest(entry: MemoryEntry) -> bool:
    return DIGEST.match(entry.content) is not None


def digest_rows(lines: Sequence[str]) -> list[int]:
    """Where the lines in a digest's shape are among archival entry lines (read without
    parsing every line); which of them oryxtui wrote, its history says."""
    return [
        row
        for row, line in enumerate(lines)
        if MARK in line and is_digest(entry_from_line(line, Scope.ARCHIVAL))
    ]


def count_of(entry: MemoryEntry) -> int:
    """How many ordinary entries a digest covers (0: it is no digest)."""
    match = DIGEST.match(entry.content)
    return int(match[3]) if match else 0


@dataclass(frozen=True)
class Coverage:
    """What the digests of an archival section cover: its first `count` ordinary entries (by
    the digest at row `latest`, the one that covers the most)."""

    digests: frozenset[int]
    count: int = 0
    latest: int | None = None

    @classmethod
    def of(cls, archival: Sequence[MemoryEntry], digests: frozenset[int]) -> Coverage:
        if not digests:
            return cls(digests)
        latest = max(digests, key=lambda row: (count_of(archival[row]), row))
        ordinary = len(archival) - len(digests)
        return cls(digests, min(count_of(archival[latest]), ordinary), latest)

    def ordinary(self, size: int) -> list[int]:
        """The rows of the ordinary entries (no digest), oldest first."""
        return [row for row in range(size) if row not in self.digests]

    def covered(self, size: int) -> list[int]:
        return self.ordinary(size)[: self.count]

    def uncovered(self, size: int, window_start: int) -> list[int]:
        """Ordinary entries the window leaves out that no digest covers yet."""
        return [row for row in self.ordinary(size)[self.count :] if row < window_start]


@dataclass(frozen=True)
class Digest:
    """A digest to write: its text (the entry's content), the entries it adds to what the
    digests cover, and how many archival entries the window left uncovered before it."""

    content: str
    covers: Sequence[MemoryEntry]
    method: str  # "extractive", or the LLM's label
    count: int = 0  # every ordinary entry covered once it is written
    uncovered_before: int = 0

    @property
    def readable(self) -> str:
        """Its text as the interface shows it: upstream's heading (`摘要`, kept in MEMORY.md,
        the file format) said in words."""
        return self.content.replace(f"{MARK} ", "Digest of ", 1)

    def to_json(self) -> dict[str, object]:
        return {
            "content": self.content,
            "method": self.method,
            "count": self.count,
            "uncovered_before": self.uncovered_before,
            "covers": [entry.to_json() for entry in self.covers],
        }


def plan(
    archival: Sequence[MemoryEntry],
    coverage: Coverage,
    window_start: int,
    window_with: WindowWith,
    stamp: str,
    max_chars: int,
    summarise: Summariser | None = None,
    method: str = EXTRACTIVE,
    min_entries: int = 1,
) -> Digest | None:
    """The next digest (None: fewer than `min_entries` entries outside the window are
    uncovered). It covers every entry the window leaves out once it is written. The extractive
    summary is cheap: it is made for those outside now, then again for those its own length
    pushes out too, until they are the same, so it covers exactly those. An LLM is asked once:
    its digest is planned as if it were as long as a digest may be, so it may also cover a few
    entries still in the window."""
    waiting = coverage.uncovered(len(archival), window_start)
    if len(waiting) < max(1, min_entries):
        return None
    ordinary = coverage.ordinary(len(archival))
    earlier = archival[coverage.latest] if coverage.latest is not None else None
    first = archival[ordinary[0]].time if ordinary else None

    def made(rows: Sequence[int]) -> Digest:
        covers = [archival[row] for row in rows]
        count = coverage.count + len(covers)
        digest = make_digest(covers, max_chars, summarise, method, count, first, earlier)
        return Digest(digest.content, covers, digest.method, count, len(waiting))

    def pushed_out(line: str) -> list[int]:
        start = window_with(line)
        return [row for row in ordinary[coverage.count :] if row < start]

    longest = entry_line(stamp, "x" * max_chars)
    if summarise is not None:
        digest = made(pushed_out(longest))
        if java_length(digest.content) <= max_chars:
            return digest
        return made(pushed_out(entry_line(stamp, "x" * java_length(digest.content))))
    rows: list[int] = waiting
    for _ in range(4):
        digest = made(rows)
        needed = pushed_out(entry_line(stamp, digest.content))
        if len(needed) <= len(rows):
            return digest
        rows = needed
    return made(pushed_out(longest))


def make_digest(
    covers: Sequence[MemoryEntry],
    max_chars: int,
    summarise: Summariser | None = None,
    method: str = EXTRACTIVE,
    count: int | None = None,
    first: str | None = None,
    earlier: MemoryEntry | None = None,
) -> Digest:
    """The digest of `covers` after the digest `earlier` (which it takes in): its header (time
    range and count, from the first covered entry) and a summary that fits. A summariser that
    gives nothing (an LLM that failed) leaves it to the extractive one."""
    count = len(covers) if count is None else count
    since = first or (covers[0].time if covers else None) or NO_TIME
    last = (covers[-1].time if covers else None) or NO_TIME

    def head(label: str) -> str:
        entries = f"{count} entr{'y' if count == 1 else 'ies'}" + (
            f", {label}" if label == EXTRACTIVE else ""
        )
        return f"{MARK} {_minutes(since)} … {_minutes(last)} ({entries}): "

    room = max(0, max_chars - len(head(EXTRACTIVE)))
    given = [earlier, *covers] if earlier is not None else list(covers)
    body = sanitize_content(summarise(given, room) or "") if summarise else ""
    if not body:
        method, body = EXTRACTIVE, extractive_summary(_pieces(earlier) + list(covers), room)
    if len(body) > room:
        body = body[: max(0, room - 1)].rstrip() + "…"
    return Digest(head(method) + body, list(covers), method, count)


def _pieces(earlier: MemoryEntry | None) -> list[MemoryEntry]:
    """An earlier digest's summary as entries of its sentences (what the extractive summary
    chooses from, beside the entries since)."""
    if earlier is None:
        return []
    body = DIGEST.sub("", earlier.content, count=1)
    return [
        MemoryEntry(Scope.ARCHIVAL, earlier.time, piece, f"- {piece}")
        for piece in body.split(PIECE)
        if piece.strip()
    ]


def _minutes(time: str) -> str:
    """`2026-11-01 09:00` from `2026-11-01 09:00:00` (a digest names minutes)."""
    return time[:16]


def extractive_summary(covers: Sequence[MemoryEntry], room: int, alike: float = 0.5) -> str:
    """The offline model's counterpart of a summary, deterministic: the entries that say the
    most (their words weighted by how rare they are among the covered entries), each cut to a
    sentence, in their original order, as many as fit, joined by " · ". An entry sharing more
    than `alike` of its words with one already chosen says the same: it is left out. The same
    entries give the same summary in every process (no sum depends on a set's order)."""
    documents = [set(tokens(entry.content)) for entry in covers]
    frequency: Counter[str] = Counter(word for words in documents for word in words)
    size = len(covers)
    rarity = {word: math.log(1 + size / count) for word, count in frequency.items()}

    def weight(index: int) -> float:
        words = documents[index]
        # fsum: exactly rounded, so equal scores are equal whatever order the set gives.
        return math.fsum(rarity[w] for w in words) / math.sqrt(len(words)) if words else 0.0

    ranked = sorted(range(size), key=lambda i: (-weight(i), i))
    chosen: list[int] = []
    used = 0
    for index in ranked:
        if room - used < 16:
            break  # full
        piece = _first_sentence(covers[index].content)
        cost = len(piece) + (len(PIECE) if chosen else 0)
        if used + cost > room or any(_alike(documents[index], documents[c], alike) for c in chosen):
            continue  # too long for what is left, or saying what a chosen one says
        chosen.append(index)
        used += cost
    return PIECE.join(_first_sentence(covers[i].content) for i in sorted(chosen))


def _alike(one: set[str], other: set[str], threshold: float) -> bool:
    """Most of their words are the same (the same event, another day or service)."""
    union = one | other
    return bool(union) and len(one & other) / len(union) > threshold


def _first_sentence(text: str) -> str:
    cut = re.search(r"(?<=[.!?。！？])\s", text)
    return text[: cut.start()] if cut else text
