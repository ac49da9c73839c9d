"""The lexical route: BM25 over terms (case-folded, NFKC, stop words left out, plurals and
possessives folded), with overlapping character bigrams for Chinese, Japanese and Korean text
(which has no spaces between words), so that "deploy window friday", "When did Caroline go to
the support group?" and "部署窗口" find entries holding those words in any order. Any entry that
shares a term with the question is a hit; BM25 orders them (a rare shared word weighs more
than a common one, a long entry's words less than a short one's)."""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from oryxtui.memory.recall.bm25 import K1, B, discriminates, idf
from oryxtui.memory.tokens import bigrams, normal, pattern, term_of, terms

# Segments an index may grow to by appends before it is made again whole (a save appends one:
# searching asks each segment, and making 10,000 entries' index whole costs about 100 ms).
MAX_SEGMENTS = 32


@dataclass(frozen=True)
class _Segment:
    """The index of some consecutive entries: every (token, entry) pair with its count, sorted
    by token; entries numbered from the segment's first (`offset`) on."""

    vocabulary: dict[str, int]
    starts: np.ndarray  # where each token's pairs begin (and end)
    documents: np.ndarray  # the entries (numbered in the whole index)
    counts: np.ndarray
    lengths: np.ndarray  # each entry's number of terms

    def postings(self, token: str) -> tuple[np.ndarray, np.ndarray] | None:
        number = self.vocabulary.get(token)
        if number is None:
            return None
        start, stop = self.starts[number], self.starts[number + 1]
        return self.documents[start:stop], self.counts[start:stop]


def _segment(texts: Sequence[str], offset: int) -> _Segment:
    """One pass over the whole text, grouped by NumPy."""
    size = len(texts)
    joined = normal("\n".join(text.replace("\n", " ") for text in texts))
    vocabulary: dict[str, int] = {}
    numbers: dict[str, int] = {}  # a word as written → its term's number (-1: a stop word)
    # Machine integers, not Python ones: a million tokens are 8 MB here, not 36 MB a list
    # (and the peak is what the process keeps).
    token_ids = array("q")
    documents = array("q")
    number = vocabulary.setdefault
    document = 0
    is_cjk = pattern("is_cjk").match
    # one token at a time, never a list of them
    for match in pattern("term_split").finditer(joined):
        token = match.group()
        if token == "\n":
            document += 1
        elif token[0] >= "\u3040" and is_cjk(token):
            for part in bigrams(token):
                token_ids.append(number(part, len(vocabulary)))
                documents.append(document)
        else:
            term = numbers.get(token)
            if term is None:
                found = term_of(token)
                term = numbers[token] = -1 if found is None else number(found, len(vocabulary))
            if term >= 0:
                token_ids.append(term)
                documents.append(document)
    ids = np.frombuffer(token_ids, dtype=np.int64) if token_ids else np.zeros(0, np.int64)
    docs = np.frombuffer(documents, dtype=np.int64) if documents else np.zeros(0, np.int64)
    lengths = np.bincount(docs, minlength=size).astype(np.float64)[:size]
    pairs, counts = np.unique(ids * max(size, 1) + docs, return_counts=True)
    del ids, docs, token_ids, documents
    return _Segment(
        vocabulary,
        np.searchsorted(pairs // max(size, 1), np.arange(len(vocabulary) + 1)),
        (pairs % max(size, 1) + offset).astype(np.int32),
        counts.astype(np.float32),  # whole numbers: exact
        lengths,
    )


class LexicalIndex:
    """An inverted index of entry texts, for BM25, in segments: made whole, then grown by the
    entries appended since (a save) without making the rest again — the same scores either way
    (each term's entries and the average length are over all segments)."""

    def __init__(self, texts: Sequence[str] = (), segments: Sequence[_Segment] = ()) -> None:
        self._segments = list(segments) or [_segment(texts, 0)]
        lengths = [segment.lengths for segment in self._segments]
        everyone = lengths[0] if len(lengths) == 1 else np.concatenate(lengths)
        self.size = len(everyone)
        average = float(everyone.mean()) if self.size else 0.0
        self._norm = K1 * (1 - B + B * everyone / (average or 1.0))

    def extended(self, texts: Sequence[str]) -> LexicalIndex | None:
        """This index with `texts` appended (numbered after its entries), the old segments
        shared; None past `MAX_SEGMENTS` (then it is made whole again)."""
        if len(self._segments) >= MAX_SEGMENTS:
            return None
        return LexicalIndex(segments=[*self._segments, _segment(texts, self.size)])

    def _postings(self, token: str) -> tuple[np.ndarray, np.ndarray] | None:
        """(entries, counts) of a term over all segments."""
        found = [p for p in (segment.postings(token) for segment in self._segments) if p]
        if not found:
            return None
        if len(found) == 1:
            return found[0]
        return np.concatenate([d for d, _ in found]), np.concatenate([c for _, c in found])

    def coverage(self, query: str) -> float:
        """How much of what the question asks the entries' words can answer, 0 to 1: the
        weight (IDF) of its terms that some entry holds, over that of all its terms (a term no
        entry holds weighs as the rarest). "Has Caroline's baby started walking?" over a chat
        where only the name is found covers little: meaning should decide."""
        wanted = list(dict.fromkeys(terms(query)))
        if not wanted or not self.size:
            return 0.0
        rarest = math.log(1 + (self.size + 0.5) / 0.5)
        held = total = 0.0
        for token in wanted:
            found = self._postings(token)
            if found is None:
                total += rarest
                continue
            weight = idf(self.size, len(found[0]))
            held += weight
            total += weight
        return held / total if total else 0.0

    def search(self, query: str) -> tuple[np.ndarray, np.ndarray]:
        """(documents, scores) of the entries matching `query`, best first; equal scores put the
        later entry first (newest first, like the keyword route)."""
        wanted = list(dict.fromkeys(terms(query)))
        if not wanted or not self.size:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        scores = np.zeros(self.size)
        matched = np.zeros(self.size, dtype=bool)  # holds a term that tells entries apart
        anything = np.zeros(self.size, dtype=bool)  # holds any of the terms
        norm = self._norm
        for token in wanted:
            found = self._postings(token)
            if found is None:
                continue
            where, tf = found[0], found[1].astype(np.float64)
            scores[where] += idf(self.size, len(where)) * tf * (K1 + 1) / (tf + norm[where])
            anything[where] = True
            if discriminates(self.size, len(where)):
                matched[where] = True
        # A term most entries hold (a speaker's name in a chat) ranks nothing by itself while
        # the question has a rarer one; a question of only such terms matches them.
        hits = np.flatnonzero(matched if matched.any() else anything)
        # best first; among equals the later entry first
        order = np.lexsort((-hits, -scores[hits]))
        return hits[order], scores[hits[order]]
