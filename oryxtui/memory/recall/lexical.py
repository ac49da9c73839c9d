"""The lexical route: BM25 over word tokens, with overlapping character bigrams for Chinese,
Japanese and Korean text (which has no spaces between words), so that "deploy window friday"
and "部署窗口" find entries holding those words in any order."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

import numpy as np

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f"
_TOKEN = re.compile(rf"[{_CJK}]+|[^\W{_CJK}]+")
_IS_CJK = re.compile(rf"[{_CJK}]")
K1 = 1.2
B = 0.75
# An entry is a lexical hit when it holds at least this share of the query's distinct tokens
# (rounded up): one stray word of a long query is not a match.
MIN_SHOULD_MATCH = 0.5


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens; a run of CJK characters gives its overlapping bigrams (a lone
    character stays as it is)."""
    found: list[str] = []
    for token in _TOKEN.findall(text.lower()):
        if _IS_CJK.match(token):
            if len(token) == 1:
                found.append(token)
            else:
                found += [token[i : i + 2] for i in range(len(token) - 1)]
        else:
            found.append(token)
    return found


class LexicalIndex:
    """An inverted index of entry texts, for BM25."""

    def __init__(self, texts: Sequence[str]) -> None:
        postings: dict[str, list[int]] = {}
        counts: dict[str, list[int]] = {}
        lengths = np.zeros(len(texts), dtype=np.float64)
        for doc, text in enumerate(texts):
            found = tokens(text)
            lengths[doc] = len(found)
            for token, count in Counter(found).items():
                if token in postings:
                    postings[token].append(doc)
                    counts[token].append(count)
                else:
                    postings[token] = [doc]
                    counts[token] = [count]
        self.size = len(texts)
        average = float(lengths.mean()) if len(texts) else 0.0
        self._norm = K1 * (1 - B + B * lengths / (average or 1.0))
        self._postings = postings
        self._counts = counts

    def search(self, query: str) -> tuple[np.ndarray, np.ndarray]:
        """(documents, scores) of the entries matching `query`, best first; equal scores put the
        later entry first (newest first, like the keyword route)."""
        wanted = list(dict.fromkeys(tokens(query)))
        if not wanted or not self.size:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        scores = np.zeros(self.size)
        matched = np.zeros(self.size, dtype=np.int32)
        norm = self._norm
        for token in wanted:
            docs = self._postings.get(token)
            if docs is None:
                continue
            where = np.asarray(docs)
            tf = np.asarray(self._counts[token], dtype=np.float64)
            idf = math.log(1 + (self.size - len(docs) + 0.5) / (len(docs) + 0.5))
            scores[where] += idf * tf * (K1 + 1) / (tf + norm[where])
            matched[where] += 1
        needed = max(1, math.ceil(len(wanted) * MIN_SHOULD_MATCH))
        hits = np.flatnonzero(matched >= needed)
        # best first; among equals the later entry first
        order = np.lexsort((-hits, -scores[hits]))
        return hits[order], scores[hits[order]]
