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

import numpy as np

from oryxtui.memory.recall.bm25 import K1, B, discriminates, idf
from oryxtui.memory.tokens import bigrams, normal, pattern, term_of, terms


class LexicalIndex:
    """An inverted index of entry texts, for BM25: every (token, entry) pair with its count,
    sorted by token, made in one pass over the whole text and grouped by NumPy."""

    def __init__(self, texts: Sequence[str]) -> None:
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
        self._documents = (pairs % max(size, 1)).astype(np.int32)
        self._counts = counts.astype(np.float32)  # whole numbers: exact
        self._starts = np.searchsorted(pairs // max(size, 1), np.arange(len(vocabulary) + 1))
        del pairs, counts
        self._vocabulary = vocabulary
        self.size = size
        average = float(lengths.mean()) if size else 0.0
        self._norm = K1 * (1 - B + B * lengths / (average or 1.0))

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
            number = self._vocabulary.get(token)
            if number is None:
                total += rarest
                continue
            weight = idf(self.size, int(self._starts[number + 1] - self._starts[number]))
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
            number = self._vocabulary.get(token)
            if number is None:
                continue
            start, stop = self._starts[number], self._starts[number + 1]
            where = self._documents[start:stop]
            tf = self._counts[start:stop].astype(np.float64)
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
