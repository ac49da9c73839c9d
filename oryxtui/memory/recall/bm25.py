"""BM25's weights, as the lexical route uses them wherever its index lives (in this process,
`lexical.LexicalIndex`; in the database's full-text index, the episodes' search): plain Python,
so a search the database answers loads no NumPy."""

from __future__ import annotations

import math

K1 = 1.2
B = 0.75
COMMON = 0.2  # a term held by more than this share of the entries tells none of them apart
FEW = 10  # … unless it is held by no more than this many


def idf(size: int, found: int) -> float:
    """How much a term held by `found` of `size` entries tells (never below zero)."""
    return math.log(1 + (size - found + 0.5) / (found + 0.5))


def discriminates(size: int, found: int) -> bool:
    """Whether a term held by `found` of `size` entries tells some apart: a term most entries
    hold (a speaker's name in a chat) ranks nothing by itself while the question has a rarer
    one."""
    return found <= max(COMMON * size, FEW)
