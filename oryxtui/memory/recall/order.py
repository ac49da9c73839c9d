"""Recall's order: each route's weight for this question, and one fused score (reciprocal
rank, see `fusion`) over the admitted entries; recency breaks ties, and ranks as a route only
when the question asks for what is newest (upstream: always, as much as meaning)."""

from __future__ import annotations

import numpy as np

from oryxtui.config import RecallSettings
from oryxtui.memory.recall.fusion import Route, fuse
from oryxtui.memory.recall.prepared import Prepared, asks_for_recent

# The recency route's weight in the default profile unless set: with 1.0, a question asking for
# the newest put any newer weak match above the answer (bench_quality, the tune splits: 0.5 is
# as good or better at R@1/5/10 with and without an embedder; 0 loses the newest fact).
DEFAULT_RECENCY = 0.5


def recency_weight(settings: RecallSettings) -> float:
    setting = settings.weight.recency
    if setting is not None:
        return setting
    return 1.0 if settings.profile == "upstream" else DEFAULT_RECENCY


def words_weight(settings: RecallSettings, prepared: Prepared, query: str) -> float:
    """The words route's weight for this question: its setting, scaled by how much of the
    question the entries' words cover (see `LexicalIndex.coverage`), so that a match on a
    name alone does not outrank what meaning finds."""
    return settings.weight.lexical * prepared.lexical.coverage(query)


def recency_route(settings: RecallSettings, prepared: Prepared, query: str) -> Route | None:
    """Recency as a route: upstream's always; here only for a question asking for the newest."""
    if settings.profile != "upstream" and not asks_for_recent(query):
        return None
    return Route("recency", recency_weight(settings), prepared.recency)


def ordered(
    settings: RecallSettings,
    prepared: Prepared,
    routes: list[Route],
    eligible: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray]:
    """(ids, scores) of the best `top_k` admitted entries (`eligible`; None: any), one fused
    score each; equal: the newer first (upstream: the order the routes named them)."""
    tiebreak = None if settings.profile == "upstream" else prepared.recency_rank
    return fuse(prepared.size, routes, settings.top_k, eligible, tiebreak)
