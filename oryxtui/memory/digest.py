"""Digests: what falls out of the injected window, summarised in one ordinary archival entry
instead of silently dropped. A digest is a line every reader sees as an entry (upstream too):

    - [2026-11-21 09:00:00] 摘要 2026-11-01 09:00 … 2026-11-20 18:00 (37 entries): …

It covers a run of archival entries that left the window, oldest first; the covered entries stay
in the file and stay recallable. Digests cover the archival entries in order: the first covers
the oldest N of them (digests not counted), the next starts where it stopped. The window is
reckoned without the digests, so writing one never makes another due (consolidating twice
writes one digest). A digest never covers core entries, and is at most `max_chars` long."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from oryxtui.memory.format import MemoryEntry, Scope, entry_from_line, sanitize_content
from oryxtui.memory.recall.tokens import tokens

MARK = "摘要"
DIGEST = re.compile(r"摘要 (.+?) … (.+?) \((\d+) entr(?:y|ies)(?:, ([a-z]+))?\): ")
EXTRACTIVE = "extractive"  # the label of a digest written without an LLM
NO_TIME = "?"

# Summarise covered entries into at most the given number of characters ("": could not).
Summariser = Callable[[Sequence[MemoryEntry], int], str]


def is_digest(entry: MemoryEntry) -> bool:
    return DIGEST.match(entry.content) is not None


def digest_rows(lines: Sequence[str]) -> list[int]:
    """Where the digests are among archival entry lines (read without parsing every line)."""
    return [
        row
        for row, line in enumerate(lines)
        if MARK in line and is_digest(entry_from_line(line, Scope.ARCHIVAL))
    ]


def covered_count(digests: Sequence[MemoryEntry]) -> int:
    """How many archival entries (digests not counted) these digests cover."""
    return sum(int(match[3]) for entry in digests if (match := DIGEST.match(entry.content)))


@dataclass(frozen=True)
class Digest:
    """A digest to write: its text (the entry's content) and the entries it covers."""

    content: str
    covers: Sequence[MemoryEntry]
    method: str  # "extractive", or the LLM's label

    def to_json(self) -> dict[str, object]:
        return {
            "content": self.content,
            "method": self.method,
            "covers": [entry.to_json() for entry in self.covers],
        }


def pending(
    archival: Sequence[MemoryEntry], digests: Sequence[int], window_start: int
) -> list[MemoryEntry]:
    """The entries no digest covers yet among the first `window_start` of `archival`'s
    ordinary entries (those the window leaves out; `digests` are the digests' rows), oldest
    first."""
    skip = set(digests)
    covered = covered_count([archival[row] for row in digests])
    wanted = range(covered, window_start)
    ordinary = [row for row in range(len(archival)) if row not in skip]
    return [archival[ordinary[index]] for index in wanted if index < len(ordinary)]


def make_digest(
    covers: Sequence[MemoryEntry],
    max_chars: int,
    summarise: Summariser | None = None,
    method: str = EXTRACTIVE,
) -> Digest:
    """The digest of `covers`: its header (time range and count) and a summary that fits. A
    summariser that gives nothing (an LLM that failed) leaves it to the extractive one."""
    first, last = covers[0].time or NO_TIME, covers[-1].time or NO_TIME
    count = len(covers)

    def head(label: str) -> str:
        entries = f"{count} entr{'y' if count == 1 else 'ies'}" + (
            f", {label}" if label == EXTRACTIVE else ""
        )
        return f"{MARK} {_minutes(first)} … {_minutes(last)} ({entries}): "

    room = max(0, max_chars - len(head(EXTRACTIVE)))
    body = sanitize_content(summarise(covers, room) or "") if summarise else ""
    if not body:
        method, body = EXTRACTIVE, extractive_summary(covers, room)
    if len(body) > room:
        body = body[: max(0, room - 1)].rstrip() + "…"
    return Digest(head(method) + body, list(covers), method)


def _minutes(time: str) -> str:
    """`2026-11-01 09:00` from `2026-11-01 09:00:00` (a digest names minutes)."""
    return time[:16]


def extractive_summary(covers: Sequence[MemoryEntry], room: int, alike: float = 0.5) -> str:
    """The offline model's counterpart of a summary, deterministic: the entries that say the
    most (their words weighted by how rare they are among the covered entries), each cut to a
    sentence, in their original order, as many as fit, joined by " · ". An entry sharing more
    than `alike` of its words with one already chosen says the same: it is left out."""
    documents = [set(tokens(entry.content)) for entry in covers]
    frequency: Counter[str] = Counter(word for words in documents for word in words)
    size = len(covers)
    rarity = {word: math.log(1 + size / count) for word, count in frequency.items()}

    def weight(index: int) -> float:
        words = documents[index]
        return sum(rarity[w] for w in words) / math.sqrt(len(words)) if words else 0.0

    ranked = sorted(range(size), key=lambda i: (-weight(i), i))
    chosen: list[int] = []
    used = 0
    for index in ranked:
        if room - used < 16:
            break  # full
        piece = _first_sentence(covers[index].content)
        cost = len(piece) + (3 if chosen else 0)
        if used + cost > room or any(_alike(documents[index], documents[c], alike) for c in chosen):
            continue  # too long for what is left, or saying what a chosen one says
        chosen.append(index)
        used += cost
    return " · ".join(_first_sentence(covers[i].content) for i in sorted(chosen))


def _alike(one: set[str], other: set[str], threshold: float) -> bool:
    """Most of their words are the same (the same event, another day or service)."""
    union = one | other
    return bool(union) and len(one & other) / len(union) > threshold


def _first_sentence(text: str) -> str:
    cut = re.search(r"(?<=[.!?。！？])\s", text)
    return text[: cut.start()] if cut else text
