"""Recall's last stage: each hit with what found it — its rank in every route that named it,
and that route's own score (a similarity, a BM25 score) where it has one."""

from __future__ import annotations

import numpy as np

from oryxtui.memory.recall.fusion import Route
from oryxtui.memory.recall.prepared import Prepared
from oryxtui.memory.recall.results import Hit, RouteRank


def explained(
    prepared: Prepared, routes: list[Route], ids: np.ndarray, scores: np.ndarray
) -> list[Hit]:
    """The hits `ids` (with their fused `scores`), each with its rank and score per route."""
    ranks = {route.name: route.ranks(prepared.size) for route in routes}
    own = {}
    for route in routes:
        if route.scores is not None:
            by_id = np.full(prepared.size, np.nan)
            by_id[route.ids[::-1]] = route.scores[::-1]
            own[route.name] = by_id
    entries = prepared.corpus.entries
    hits = []
    for entry_id, score in zip(ids.tolist(), scores.tolist(), strict=True):
        routes_of: dict[str, RouteRank] = {}
        for name, rank in ranks.items():
            if rank[entry_id]:
                value = own[name][entry_id] if name in own else None
                routes_of[name] = RouteRank(
                    int(rank[entry_id]), None if value is None else float(value)
                )
        entry = entries[int(prepared.positions[entry_id])]
        hits.append(Hit(entry, score, routes_of))
    return hits
