"""What a new entry probably updates: an entry about the same subject that says something else
("on-call for ledger this week: Priya" after "… Marco"), not a repeat of it, not the same thing
said of someone else, and not the next line of a log. Lexical, from rules a person can check:

- the words both share, each weighed by how rare it is among the agent's entries, are a good
  part of each (`MIN_SHARED`, `MIN_SCORE`), and each holds a word the other does not;
- what the entry is about — of its words, the one most entries hold (the person, the service)
  — is in the other too, and no word that differs is one many entries hold (a name: then it is
  the same thing said of someone else);
- no other entry holds every shared word (a third would make it a series: a log written again
  with other numbers, "CI run #412 green for payout"), and neither reports something done
  ("Deployed …", "Rotated …"): events do not replace each other.

Precision first — a wrong suggestion costs a person's attention: measured on a held-out set
(`tests/benchmarks/bench_facts.py`), the rules find a third of the updates; what they miss
(the same fact in other words, a value that is itself a name) needs meaning, not words. Plain
Python; the terms are the lexical route's."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import cast

from oryxtui.memory.format import EntrySequence, MemoryEntry, Scope, entry_from_line
from oryxtui.memory.tokens import bigrams, is_cjk, normal, term_of, terms, words

# How much of each entry (its shared words' weight against that and the value that differs)
# both must share, at least …
MIN_SHARED = 0.4
# … and the two shares' harmonic mean, at least.
MIN_SCORE = 0.65
MOST = 2  # suggestions given with one save
# Entries holding every word two share, at most (the candidate itself).
MAX_FRAME = 1
# A differing word held by more entries than this (or this share of them) is a name.
NAME_ENTRIES = 20
NAME_SHARE = 0.01
# A term more entries hold than this share (or `FEW`) finds no candidates by itself (it
# still weighs in the score): the check reads few postings, however big the memory.
COMMON = 0.05
FEW = 20


@dataclass(frozen=True)
class Update:
    """An entry the new one probably replaces, with how sure the check is (0 to 1)."""

    entry: MemoryEntry
    score: float
    held: bool = False  # a save waiting for review (a person sees the two as a pair)

    def to_json(self) -> dict[str, object]:
        told: dict[str, object] = {**self.entry.to_json(), "scope": self.entry.scope.value}
        return told | {"score": self.score} | ({"held": True} if self.held else {})


# Past tenses that do not end in -ed, of verbs a log of what was done starts with.
_DONE = frozenset(
    """
    set sent ran made found paid took built wrote held met bought got gave put read saw told
    left kept began brought caught chose drew drove fed felt fought flew forgot hid hit hung
    lost led lent let rang rode rose sold shut sang sat slept spent spoke split spread stood
    stole stuck swept swam taught threw understood woke won wore
    """.split()  # noqa: SIM905 (words read best as words)
)


def reports_done(content: str) -> bool:
    """Whether an entry reports something done ("Deployed …", "Rotated the certificate …",
    "Sent the link …"): an event, which no later event replaces — unlike a fact that holds
    until it changes ("The staging host is …")."""
    first = content.split(None, 1)[0].lower() if content.strip() else ""
    return (len(first) > 4 and first.endswith("ed")) or first in _DONE


def terms_of(contents: Iterable[str]) -> list[frozenset[str]]:
    """Each text's terms (as `terms` gives them), read in one pass over all of them: a memory
    of 10,000 entries in a fraction of the time one at a time takes."""
    texts = [content.replace("\n", " ") for content in contents]
    if not texts:
        return []
    joined = normal("\n".join(texts))
    known: dict[str, str | None] = {}
    found: list[frozenset[str]] = []
    for line in joined.split("\n"):
        held: set[str] = set()
        for token in set(words(line)):
            if is_cjk(token):
                held.update(bigrams(token))
                continue
            term = known[token] if token in known else known.setdefault(token, term_of(token))
            if term:
                held.add(term)
        found.append(frozenset(held))
    return found


def lines_of(entries: Sequence[MemoryEntry]) -> Sequence[str]:
    """The entries' lines (read as they are, without parsing, from a file's entries)."""
    return entries.lines if isinstance(entries, EntrySequence) else [e.line for e in entries]


class Subjects:
    """The terms of a memory's entries, indexed for the check, kept in step with saves."""

    def __init__(self, entries: Iterable[MemoryEntry] = ()) -> None:
        # The entries' lines (archival: the check reads no other): an entry is made from its
        # line only when it is a candidate, so an index kept on disk costs no parsing.
        self.lines: list[str] = []
        # Each entry's terms: a set, or as they were kept on disk (a list, made a set when an
        # entry is a candidate: `_held`; 10,000 sets cost a save more than its check).
        self.terms: list[frozenset[str] | list[str]] = []
        self.postings: dict[str, list[int]] = {}
        given = list(entries)
        for entry, held in zip(given, terms_of(e.content for e in given), strict=True):
            self._take(entry, held)

    @classmethod
    def kept(cls, lines: Sequence[str], held: Sequence[object]) -> Subjects | None:
        """The index of entries whose terms were kept (on disk): their lines and terms; each
        term's entries made from those. None when what was kept is not lists of words (a
        hand-made file): it is checked as it is read, never trusted."""
        subjects = cls()
        subjects.lines = list(lines)
        postings = subjects.postings
        for position, terms_held in enumerate(held):
            if type(terms_held) is not list:
                return None
            for term in terms_held:
                if type(term) is not str:
                    return None
                postings.setdefault(term, []).append(position)
        subjects.terms = cast(
            "list[frozenset[str] | list[str]]", list(held)
        )  # lists of words: checked above
        return subjects

    def follow(self, entries: Sequence[MemoryEntry]) -> bool:
        """Take in the entries appended since (True); False when the memory changed some other
        way (then it is indexed again)."""
        have = len(self.lines)
        lines = lines_of(entries)
        if len(entries) < have or (
            have and (lines[0] != self.lines[0] or lines[have - 1] != self.lines[-1])
        ):
            return False
        new = entries[have:]
        for entry, held in zip(new, terms_of(e.content for e in new), strict=True):
            self._take(entry, held)
        return True

    def add(self, entry: MemoryEntry) -> None:
        self._take(entry, frozenset(terms(entry.content)))

    @contextlib.contextmanager
    def including(self, entries: Sequence[MemoryEntry]) -> Iterator[None]:
        """These entries among the others while inside (changes held for review: a save may
        update one), and gone again after. The caller keeps others out meanwhile."""
        have = len(self.lines)
        for entry, held in zip(entries, terms_of(e.content for e in entries), strict=True):
            self._take(entry, held)
        try:
            yield
        finally:
            for kept_terms in self.terms[have:]:
                for term in kept_terms:
                    postings = self.postings.get(term)  # (gone: another of them held it too)
                    while postings and postings[-1] >= have:
                        postings.pop()
                    if postings == []:
                        del self.postings[term]
            del self.lines[have:], self.terms[have:]

    def _held(self, position: int) -> frozenset[str]:
        held = self.terms[position]
        if isinstance(held, frozenset):
            return held
        made = self.terms[position] = frozenset(held)
        return made

    def _take(self, entry: MemoryEntry, held: frozenset[str]) -> None:
        position = len(self.lines)
        self.lines.append(entry.line)
        self.terms.append(held)
        for term in held:
            self.postings.setdefault(term, []).append(position)

    def subject_of(self, content: str) -> frozenset[str]:
        """What a text is about among these entries (see `_subject`); empty for no words."""
        held = frozenset(terms(content))
        return self._subject(held) if held else frozenset()

    def _subject(self, held: frozenset[str]) -> frozenset[str]:
        """What an entry is about: of its words (not its numbers), those most entries hold
        (the person, the service)."""
        words = [term for term in held if not term.isdigit()] or list(held)
        counts = {term: len(self.postings.get(term, ())) for term in words}
        most = max(counts.values())
        return frozenset(term for term, count in counts.items() if count == most)

    def _holding(self, wanted: frozenset[str]) -> int:
        """How many entries hold every one of `wanted`."""
        rarest = min(wanted, key=lambda term: len(self.postings.get(term, ())))
        return sum(
            1 for position in self.postings.get(rarest, ()) if wanted <= self._held(position)
        )

    def _weight(self, term: str, new: bool = False) -> float:
        """How much a term tells, BM25's IDF, counted with the new entry among the others
        (`new`: it holds the term), so that its words and an old entry's weigh alike."""
        size, found = len(self.lines) + 1, len(self.postings.get(term, ())) + new
        return math.log(1 + (size - found + 0.5) / (found + 0.5))

    def updated_by(self, content: str) -> list[Update]:
        """The entries `content` probably updates, surest first (at most `MOST`)."""
        wanted = frozenset(terms(content))
        if not wanted or not self.lines or reports_done(content):
            return []
        weight = {term: self._weight(term, new=True) for term in wanted}
        subject = self._subject(wanted)
        common = max(COMMON * len(self.lines), FEW)
        widespread = max(NAME_ENTRIES, NAME_SHARE * len(self.lines))
        shared: dict[int, float] = {}
        for term in wanted:
            found = self.postings.get(term, ())
            if len(found) > common:
                continue
            for position in found:
                shared[position] = shared.get(position, 0.0) + weight[term]
        found_updates: dict[str, tuple[float, int, Update]] = {}
        for position, _ in sorted(shared.items(), key=lambda item: -item[1])[:50]:
            held = self._held(position)
            if held == wanted or not held - wanted or not wanted - held:
                continue  # a repeat, or one saying only part of the other: no new value
            entry = entry_from_line(self.lines[position], Scope.ARCHIVAL)
            if reports_done(entry.content):
                continue
            if not self._subject(held) & wanted or not subject & held:
                continue  # about someone or something else (its name is not in the other)
            both_terms = held & wanted
            if max(len(self.postings.get(t, ())) for t in held ^ wanted) > widespread:
                continue  # what differs is a name many entries hold: said of someone else
            if self._holding(both_terms) > MAX_FRAME:
                continue  # a line written again and again with other numbers: a log
            both = sum(weight[term] for term in both_terms)
            # What differs is one value, however many words it takes ("eu-west-1"): its
            # rarest word stands for it.
            theirs = both + max(self._weight(term) for term in held - wanted)
            ours = both + max(weight[term] for term in wanted - held)
            mine, yours = both / ours, both / theirs
            if min(mine, yours) < MIN_SHARED:
                continue
            score = 2 * mine * yours / (mine + yours)
            if score >= MIN_SCORE:
                found_updates[entry.id] = (score, position, Update(entry, round(score, 3)))
        best = sorted(found_updates.values(), key=lambda item: (-item[0], -item[1]))
        return [update for _, _, update in best[:MOST]]
