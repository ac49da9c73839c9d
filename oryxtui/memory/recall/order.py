"""Recall's order: one fused score over the admitted entries. The default profile adds the
routes' own scores — words (BM25, as a share of the best), meaning (how many deviations an
entry's similarity stands above the agent's mean, scaled down: a strong words match is never
pushed down by a weak similarity, a tie among words is settled by meaning), a substring match,
and for a question asking for the newest, recency — measured on LoCoMo's five tuning
conversations above rank fusion and every single route (docs/recall.md). Equal: the newer
first. Upstream's profile is its reciprocal rank fusion (see `fusion`), hit for hit."""

from __future__ import annotations

import numpy as np

from oryxtui.config import RecallSettings
from oryxtui.memory.recall.fusion import Route, fuse
from oryxtui.memory.recall.prepared import Prepared, asks_for_recent

# The recency route's weight in the default profile unless set: with 1.0, a question asking for
# the newest put any newer weak match above the answer (bench_quality, the tune splits: 0.5 is
# as good or better at R@1/5/10 with and without an embedder; 0 loses the newest fact).
DEFAULT_RECENCY = 0.5
# What a deviation of similarity is worth against the words' share of the best BM25 score: 0.2
# on the tuning five (0.1: R@10 -1.3; 0.3: R@1 -0.2; rank fusion: R@1 -4.9 below it).
MEANING_SCALE = 0.2
STANDING = 3.0  # the most deviations meaning may count, either way
KEYWORD_BONUS = 0.25  # a substring match of the whole question (upstream's keyword route)
RECENCY_SCALE = 0.2  # the newest entry's nudge, for a question asking for the newest


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
    meaning_scale: float = MEANING_SCALE,
) -> tuple[np.ndarray, np.ndarray]:
    """(ids, scores) of the best `top_k` admitted entries (`eligible`; None: any), one fused
    score each; equal: the newer first (upstream: by rank, the order the routes named them)."""
    if settings.profile == "upstream":
        return fuse(prepared.size, routes, settings.top_k, eligible)
    scores = combined(prepared.size, routes, meaning_scale)
    if eligible is None:  # no floor: whatever a route named
        eligible = np.zeros(prepared.size, dtype=bool)
        for route in routes:
            eligible[route.ids] = True
    candidates = np.flatnonzero(eligible)
    order = np.lexsort((prepared.recency_rank[candidates], -np.round(scores[candidates], 12)))
    chosen = candidates[order][: settings.top_k]
    return chosen, scores[chosen]


def combined(size: int, routes: list[Route], meaning_scale: float = MEANING_SCALE) -> np.ndarray:
    """Each entry's fused score: every route's own evidence for it, weighed (see above;
    `meaning_scale`: what a deviation of similarity is worth, the embedder's own if it says)."""
    total = np.zeros(size)
    for route in routes:
        if not len(route.ids) or route.weight <= 0:
            continue
        if route.name == "lexical" and route.scores is not None and len(route.scores):
            best = float(route.scores.max()) or 1.0
            total[route.ids] += route.weight * route.scores / best
        elif route.name == "semantic" and route.scores is not None and len(route.scores):
            mean, deviation = float(route.scores.mean()), float(route.scores.std()) or 1.0
            # Bounded: a model whose similarities barely differ (a tiny deviation) would
            # otherwise make any entry ten deviations "above" and outweigh every word.
            standing = np.clip((route.scores - mean) / deviation, -STANDING, STANDING)
            total[route.ids] += route.weight * meaning_scale * standing
        elif route.name == "keyword":
            total[np.unique(route.ids)] += route.weight * KEYWORD_BONUS
        elif route.name == "recency":  # newest 1, oldest 0
            newness = 1.0 - np.arange(len(route.ids)) / max(1, len(route.ids) - 1)
            total[route.ids] += route.weight * RECENCY_SCALE * newness
    return total
