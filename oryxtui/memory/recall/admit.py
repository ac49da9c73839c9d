"""Recall's floors: which candidates may be hits at all. An entry is admitted only if a route
found it for a reason — upstream's substring match, words scoring near the best, or a meaning
that stands out (see `relevance`) — so a question about nothing the agent knows finds nothing.
The floor decides admission, never the order among what is admitted."""

from __future__ import annotations

import numpy as np

from oryxtui.config import RecallSettings
from oryxtui.memory.recall.embedders import Embedder
from oryxtui.memory.recall.fusion import Route
from oryxtui.memory.recall.relevance import (
    mostly_cjk,
    relevant,
    similarity_floor,
    standout_floor,
)

# The similarity spread is measured over at least this many entries (below, the floor alone).
SPREAD_SAMPLE = 10


def strong_words(ids: np.ndarray, scores: np.ndarray | None, word_floor: float) -> np.ndarray:
    """The words matches that count as hits: at least `word_floor` of the best score."""
    if scores is None or not len(scores):
        return ids
    return ids[scores >= word_floor * float(scores.max())]


def meaning_floor(settings: RecallSettings, embedder: Embedder | None, query: str = "") -> float:
    """The similarity from which meaning alone may admit an entry (-1 or below: none)."""
    return similarity_floor(settings.min_similarity, embedder, query)


def relevant_by_meaning(
    route: Route,
    settings: RecallSettings,
    embedder: Embedder | None,
    query: str = "",
    sampled: bool = True,
) -> np.ndarray:
    """The entries the semantic route finds relevant: a similarity of at least the floor
    (`min_similarity`, else the embedder's calibrated one), or of its lower standout floor
    for an entry far above the agent's others (see `standout_floor`); and, either way,
    `similarity_spread` standard deviations above the agent's mean (an e5-class model
    gives every text 0.6 or more, so a fixed floor alone would let everything through).
    `sampled` False: the scores are only the nearest (pgvector), no sample of the rest."""
    scores = route.scores
    if scores is None or not len(scores):
        return np.zeros(0, dtype=np.int64)
    # A spread measured over the nearest alone would leave out all but the very nearest; a
    # handful of entries is no sample either (of two, the nearer one is exactly one deviation
    # above their mean): there, the floor alone decides.
    sample = settings.profile != "upstream" and sampled and len(scores) >= SPREAD_SAMPLE
    band = standout_floor(settings.min_similarity, embedder, query)
    spread = settings.similarity_spread if sample else None
    return route.ids[relevant(scores, meaning_floor(settings, embedder, query), band, spread)]


def spelled_at_word_start(query: str) -> bool:
    """Whether a keyword match admits an entry only where the keyword begins a word — "rsi"
    finds "RSI flare-up", not "diversity"; "stg" finds "db-stg-3" — so that a made-up or
    clipped word is no reason to admit a line. Text without word breaks (CJK) and a query
    that does not start with a letter or digit keep the plain substring rule."""
    needle = query.strip()
    return bool(needle) and needle[0].isalnum() and not mostly_cjk(needle)


def admitted(size: int, *found: np.ndarray) -> np.ndarray:
    """The mask of the `size` entries that some route found for a reason (`found`)."""
    eligible = np.zeros(size, dtype=bool)
    for ids in found:
        if len(ids):
            eligible[ids] = True
    return eligible
