"""Recall's first stage: each route's candidates for a question, best first — upstream's
substring match (keyword), words (lexical: BM25 over folded terms, CJK bigrams) and meaning
(semantic: the index's similarities, or the database's nearest entries)."""

from __future__ import annotations

import contextlib

import numpy as np

from oryxtui.errors import DatabaseError
from oryxtui.memory.recall.fusion import Route
from oryxtui.memory.recall.index import MeaningIndex
from oryxtui.memory.recall.pgvector import CANDIDATES, PgVectorTable
from oryxtui.memory.recall.prepared import Prepared
from oryxtui.memory.recall.results import Stopwatch

# A recall embeds at most this many entries that are not indexed yet (newest first), or what
# the embedder says it embeds in a moment (`recall_index_limit`: the local model, 5,000); the
# rest wait for the indexer (the dashboard, `serve`, `oryxtui memory index`).
RECALL_INDEX_LIMIT = 64
# The upstream profile, below this many matrix cells, computes similarities in double precision
# as upstream does; the rest in single precision (5x faster; only near-ties order differently).
EXACT_CELLS = 8_000_000
NONE = np.zeros(0, dtype=np.int64)


def by_keyword(prepared: Prepared, query: str, word_start: bool = False) -> np.ndarray:
    """Upstream's substring match over whole entry texts, newest first (a line written twice
    is named twice, as upstream names it); `word_start`: only where it begins a word."""
    if "\x00" in query:
        return NONE
    positions = prepared.keyword.positions(query, word_start)
    return prepared.id_of_position[np.asarray(positions[::-1], dtype=np.int64)]


def by_words(prepared: Prepared, query: str) -> tuple[np.ndarray, np.ndarray | None]:
    """BM25 over the entries' words: (ids, scores), best first."""
    return prepared.lexical.search(query)


def by_meaning(
    index: MeaningIndex,
    key: str,
    prepared: Prepared,
    query: str,
    clock: Stopwatch,
    weight: float,
    top_k: int,
    exact: bool = False,
) -> Route:
    """The entries by similarity to the question, nearest first (entries not indexed yet are
    embedded first, a few; the database answers at least 4 × `top_k` of the nearest);
    `exact`: upstream's double precision."""
    vector = index.query_vector(query, clock)
    # A locked database: recall goes on with the vectors there are; the indexer retries.
    with contextlib.suppress(DatabaseError):
        limit = getattr(index.embedder, "recall_index_limit", RECALL_INDEX_LIMIT)
        index.index_some(key, prepared, max(RECALL_INDEX_LIMIT, int(limit)))
    if isinstance(index.table, PgVectorTable):
        return _nearest(index, key, prepared, vector, weight, max(CANDIDATES, 4 * top_k))
    matrix = index.matrix(key)
    with matrix.lock:
        rows = prepared.rows(matrix)
        have = np.flatnonzero(rows >= 0)
        if not len(have) or matrix.dim != len(vector):  # nothing indexed yet
            return Route("semantic", weight, have, np.zeros(0))
        data, norms = matrix.matrix, matrix.norms
        # Double precision is upstream's, for its order hit for hit; the default profile
        # ranks in single precision (a copy of the matrix per recall is most of its cost).
        if exact and data.size <= EXACT_CELLS:
            dots = data.astype(np.float64) @ vector.astype(np.float64)
        else:
            dots = (data @ vector).astype(np.float64)
    query_norm = float(np.sqrt(np.dot(vector.astype(np.float64), vector)))
    wanted = rows[have]
    denominator = norms[wanted] * query_norm
    similarity = np.divide(
        dots[wanted], denominator, out=np.zeros(len(wanted)), where=denominator > 0
    )
    order = np.lexsort((wanted, -similarity))  # equal: the row written first
    return Route("semantic", weight, have[order], similarity[order])


def _nearest(
    index: MeaningIndex, key: str, prepared: Prepared, vector: np.ndarray, weight: float, limit: int
) -> Route:
    """The database's `limit` nearest candidates (pgvector), as entry ids, nearest first."""
    assert index.embedder is not None and isinstance(index.table, PgVectorTable)
    rows = len(index.matrix(key).row_of)  # how many vectors the agent has
    found = index.table.nearest(key, index.embedder.model_id, vector, limit, rows)
    id_of_hash = prepared.id_of_hash
    pairs = [(id_of_hash[hash_], score) for hash_, score in found if hash_ in id_of_hash]
    ids = np.asarray([entry for entry, _ in pairs], dtype=np.int64)
    scores = np.asarray([score for _, score in pairs], dtype=np.float64)
    return Route("semantic", weight, ids, scores)
