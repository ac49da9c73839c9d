"""Rank fusion, as upstream's RetrievalPipeline.fuseByRank does it: `score = Σ w / (60 + rank)`
over the routes (1-based ranks), highest first; equal scores keep the order in which the routes
first named the entries (route by route, in the routes' order), as Java's stable sort does."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

RRF_K = 60
_UNSEEN = np.iinfo(np.int64).max


@dataclass(frozen=True)
class Route:
    """One route's answer: entry ids, best first (an id may repeat, as upstream's keyword route
    repeats a line that is written twice), and each one's own score where it has one."""

    name: str
    weight: float
    ids: np.ndarray
    scores: np.ndarray | None = None

    def only(self, ids: np.ndarray) -> Route:
        """This route with only the given entries, in its own order."""
        keep = np.isin(self.ids, ids)
        scores = None if self.scores is None else self.scores[keep]
        return Route(self.name, self.weight, self.ids[keep], scores)

    def ranks(self, size: int) -> np.ndarray:
        """Each entry's best 1-based rank in this route, 0 where it is absent."""
        ranks = np.zeros(size, dtype=np.int64)
        ids = self.ids[::-1]  # the best rank is written last
        ranks[ids] = np.arange(len(self.ids), 0, -1)
        return ranks


def fuse(
    size: int,
    routes: Sequence[Route],
    top_k: int,
    eligible: np.ndarray | None = None,
    tiebreak: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(ids, scores) of the best `top_k` entries of `size`, highest score first. With
    `eligible` (a boolean mask), only those entries may be chosen; the others still count for
    nothing but their ranks are what they are. Equal scores: lower `tiebreak` first (each
    entry's), else the order the routes named them in."""
    scores = np.zeros(size)
    first_seen = np.full(size, _UNSEEN, dtype=np.int64)
    seen = 0
    for route in routes:
        ids = route.ids
        if not len(ids):
            continue
        # Added one rank at a time, in rank order, so each sum is the one Java computes.
        np.add.at(scores, ids, route.weight / (RRF_K + np.arange(1, len(ids) + 1)))
        _, first = np.unique(ids, return_index=True)
        named = ids[np.sort(first)]
        fresh = named[first_seen[named] == _UNSEEN]
        first_seen[fresh] = seen + np.arange(len(fresh))
        seen += len(fresh)
    candidates = np.flatnonzero(first_seen != _UNSEEN)
    if eligible is not None:
        candidates = candidates[eligible[candidates]]
    if tiebreak is None:  # upstream's: exact sums, then the order the routes named them
        order = np.lexsort((first_seen[candidates], -scores[candidates]))
    else:  # sums equal but for rounding are ties too
        primary = -np.round(scores[candidates], 12)
        order = np.lexsort((first_seen[candidates], tiebreak[candidates], primary))
    chosen = candidates[order][:top_k]
    return chosen, scores[chosen]
