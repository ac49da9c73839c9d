"""Ranked recall over an agent's archival entries, and the index the semantic route reads.

The default profile fuses, by reciprocal rank, the routes that say what an entry is about:
meaning (semantic), words (lexical: BM25 over folded terms, CJK bigrams) and upstream's
substring match (keyword). An entry is a hit only if one of them found it (a similarity that
stands out, see `_relevant`); recency breaks ties, and ranks as a route only when the question
asks for what is newest — it never buries an older entry that answers. `profile = "upstream"`
is upstream's ranking hit for hit: semantic, keyword and recency fused, every entry ranked."""

from __future__ import annotations

import contextlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from oryxtui import notices
from oryxtui.errors import DatabaseError, EmbedderError
from oryxtui.memory.recall.embedders import Embedder, usable
from oryxtui.memory.recall.fusion import Route, fuse
from oryxtui.memory.recall.pgvector import CANDIDATES, PgVectorTable
from oryxtui.memory.recall.prepared import Prepared, asks_for_recent, epoch_ms, time_of
from oryxtui.memory.recall.relevance import relevant, similarity_floor, standout_floor
from oryxtui.memory.recall.results import (
    DEGRADE_NOTICE,
    Hit,
    IndexStatus,
    Recall,
    RouteRank,
    Stopwatch,
)
from oryxtui.memory.recall.vectors import (
    NewVector,
    VectorMatrix,
    VectorTable,
    agent_key,
)
from oryxtui.memory.store import Rankable

if TYPE_CHECKING:
    from oryxtui.config import RecallSettings

# A recall embeds at most this many entries that are not indexed yet (newest first), or what
# the embedder says it embeds in a moment (`recall_index_limit`: the local model, 5,000); the
# rest wait for the indexer (the dashboard, `serve`, `oryxtui memory index`).
RECALL_INDEX_LIMIT = 64
# The recency route's weight in the default profile unless set: with 1.0, a question asking for
# the newest put any newer weak match above the answer (bench_quality, the tune splits: 0.5 is
# as good or better at R@1/5/10 with and without an embedder; 0 loses the newest fact).
DEFAULT_RECENCY = 0.5
# The similarity spread is measured over at least this many entries (below, the floor alone).
SPREAD_SAMPLE = 10
# The upstream profile, below this many matrix cells, computes similarities in double precision
# as upstream does; the rest in single precision (5x faster; only near-ties order differently).
EXACT_CELLS = 8_000_000


class RecallEngine:
    """Ranked recall for one workspace's store, with the vector index when there is an
    embedder. Safe to share between threads."""

    def __init__(
        self,
        store: Rankable,
        table: VectorTable | PgVectorTable,
        settings: RecallSettings,
        embedder: Embedder | None,
        clock: Callable[[], float] = time.monotonic,
        retry_after: float = 10.0,
    ) -> None:
        self.store = store
        self.settings = settings
        self.embedder = embedder
        self.table = table
        self.clock = clock
        self.retry_after = retry_after
        self._prepared: OrderedDict[str, Prepared] = OrderedDict()
        self._matrices: dict[str, VectorMatrix] = {}
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()
        self._sync_locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()
        self._down_until = 0.0
        self.problem: str | None = None
        self.dim: int | None = None  # how many numbers the embedder's vectors hold

    # Recall ------------------------------------------------------------------------------------

    def recall(self, agent: str | None, query: str, semantic: bool = True) -> Recall:
        key = agent_key(agent)
        prepared = self.prepare(agent)
        weights = self.settings.weight
        upstream = self.settings.profile == "upstream"
        lexical_on = weights.lexical > 0 and not upstream
        clock = Stopwatch()  # each route's own time, for operators
        keyword_ids = self._keyword_route(prepared, query)
        clock.lap("keyword")
        lexical_ids, lexical_scores = (
            prepared.lexical.search(query) if lexical_on else (np.zeros(0, np.int64), None)
        )
        if lexical_on:
            clock.lap("lexical")
        semantic_route: Route | None = None
        state, notice, problem = "off", None, None
        similar = np.zeros(0, dtype=np.int64)
        if self.embedder is not None:
            if not semantic:
                state = "deferred"
            else:
                try:
                    semantic_route = self._semantic_route(key, prepared, query, clock)
                    state = "used"
                    similar = self._relevant(semantic_route, query)
                except EmbedderError as exc:
                    state, notice, problem = "failed", DEGRADE_NOTICE, str(exc)
                clock.lap("semantic")
        # Recency ranks every entry: upstream weighs it as much as meaning; here it only
        # breaks ties, unless the question asks for what is newest.
        by_recency = upstream or asks_for_recent(query)
        routes = [
            Route("semantic", weights.semantic, semantic_route.ids, semantic_route.scores)
            if semantic_route is not None
            else None,
            Route("keyword", weights.keyword, keyword_ids),
            Route("lexical", self._words_weight(prepared, query), lexical_ids, lexical_scores)
            if lexical_on
            else None,
            Route("recency", self._recency_weight(), prepared.recency) if by_recency else None,
        ]
        chosen = [route for route in routes if route is not None]
        fused, eligible = chosen, None  # upstream: every entry may rank
        if not upstream and self._floor(query) > -1:
            eligible = np.zeros(prepared.size, dtype=bool)
            for found in (keyword_ids, self._strong(lexical_ids, lexical_scores), similar):
                if len(found):
                    eligible[found] = True
            # Meaning has a say only about what it finds relevant (the nearest of the rest
            # would lift a words match it knows nothing of); the hits still show its rank.
            fused = [r.only(similar) if r.name == "semantic" else r for r in chosen]
        tiebreak = None if upstream else prepared.recency_rank
        ids, scores = fuse(prepared.size, fused, self.settings.top_k, eligible, tiebreak)
        hits = self._hits(prepared, chosen, ids, scores)
        # The index is read even when the query could not be embedded: what it holds does not
        # depend on the embedder answering now.
        status = self._status(key, prepared, refresh=key not in self._matrices)
        return Recall(query, "hybrid", hits, state, notice, problem, status, clock)

    def _recency_weight(self) -> float:
        setting = self.settings.weight.recency
        if setting is not None:
            return setting
        return 1.0 if self.settings.profile == "upstream" else DEFAULT_RECENCY

    def _words_weight(self, prepared: Prepared, query: str) -> float:
        """The words route's weight for this question: its setting, scaled by how much of the
        question the entries' words cover (see `LexicalIndex.coverage`), so that a match on a
        name alone does not outrank what meaning finds."""
        return self.settings.weight.lexical * prepared.lexical.coverage(query)

    def _strong(self, ids: np.ndarray, scores: np.ndarray | None) -> np.ndarray:
        """The words matches that count as hits: at least `word_floor` of the best score."""
        if scores is None or not len(scores):
            return ids
        return ids[scores >= self.settings.word_floor * float(scores.max())]

    def _relevant(self, route: Route, query: str = "") -> np.ndarray:
        """The entries the semantic route finds relevant: a similarity of at least the floor
        (`min_similarity`, else the embedder's calibrated one), or of its lower standout floor
        for an entry far above the agent's others (see `standout_floor`); and, either way,
        `similarity_spread` standard deviations above the agent's mean (an e5-class model
        gives every text 0.6 or more, so a fixed floor alone would let everything through)."""
        scores = route.scores
        if scores is None or not len(scores):
            return np.zeros(0, dtype=np.int64)
        # pgvector answers only the nearest candidates: they are no sample of the rest, and
        # a spread measured over them would leave out all but the very nearest. A handful of
        # entries is no sample either (of two, the nearer one is exactly one deviation above
        # their mean): there, the floor alone decides.
        sample = (
            self.settings.profile != "upstream"
            and not isinstance(self.table, PgVectorTable)
            and len(scores) >= SPREAD_SAMPLE
        )
        band = standout_floor(self.settings.min_similarity, self.embedder, query)
        spread = self.settings.similarity_spread if sample else None
        return route.ids[relevant(scores, self._floor(query), band, spread)]

    def _floor(self, query: str = "") -> float:
        return similarity_floor(self.settings.min_similarity, self.embedder, query)

    def _keyword_route(self, prepared: Prepared, query: str) -> np.ndarray:
        """Upstream's substring match over whole entry texts, newest first (a line written
        twice is named twice, as upstream names it)."""
        if "\x00" in query:
            return np.zeros(0, dtype=np.int64)
        positions = prepared.keyword.positions(query)
        return prepared.id_of_position[np.asarray(positions[::-1], dtype=np.int64)]

    def _semantic_route(self, key: str, prepared: Prepared, query: str, clock: Stopwatch) -> Route:
        vector = self._query_vector(query, clock)
        # A locked database: recall goes on with the vectors there are; the indexer retries.
        with contextlib.suppress(DatabaseError):
            limit = getattr(self.embedder, "recall_index_limit", RECALL_INDEX_LIMIT)
            self._index_some(key, prepared, max(RECALL_INDEX_LIMIT, int(limit)))
        if isinstance(self.table, PgVectorTable):
            return self._nearest_route(key, prepared, vector)
        matrix = self._matrix(key)
        with matrix.lock:
            rows = prepared.rows(matrix)
            have = np.flatnonzero(rows >= 0)
            if not len(have) or matrix.dim != len(vector):  # nothing indexed yet
                return Route("semantic", self.settings.weight.semantic, have, np.zeros(0))
            data, norms = matrix.matrix, matrix.norms
            # Double precision is upstream's, for its order hit for hit; the default profile
            # ranks in single precision (a copy of the matrix per recall is most of its cost).
            if self.settings.profile == "upstream" and data.size <= EXACT_CELLS:
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
        return Route("semantic", self.settings.weight.semantic, have[order], similarity[order])

    def _nearest_route(self, key: str, prepared: Prepared, vector: np.ndarray) -> Route:
        """The database's nearest candidates (pgvector), as entry ids, nearest first."""
        assert self.embedder is not None and isinstance(self.table, PgVectorTable)
        limit = max(CANDIDATES, 4 * self.settings.top_k)
        rows = len(self._matrix(key).row_of)  # how many vectors the agent has
        found = self.table.nearest(key, self.embedder.model_id, vector, limit, rows)
        id_of_hash = prepared.id_of_hash
        pairs = [(id_of_hash[hash_], score) for hash_, score in found if hash_ in id_of_hash]
        ids = np.asarray([entry for entry, _ in pairs], dtype=np.int64)
        scores = np.asarray([score for _, score in pairs], dtype=np.float64)
        return Route("semantic", self.settings.weight.semantic, ids, scores)

    def _query_vector(self, query: str, clock: Stopwatch) -> np.ndarray:
        assert self.embedder is not None
        key = f"{self.embedder.model_id}\n{query}"
        with self._lock:
            cached = self._queries.get(key)
            if cached is not None:
                self._queries.move_to_end(key)
                return cached
        (vector,) = self._embed([query], "query")
        clock.lap("embedding")  # (the embedder's call; a query kept is not one)
        with self._lock:
            self._queries[key] = vector
            while len(self._queries) > 256:
                self._queries.popitem(last=False)
        return vector

    def _embed(self, texts: Sequence[str], kind: str = "passage") -> list[np.ndarray]:
        """The embedder's vectors; while it is failing, fail at once for `retry_after`."""
        assert self.embedder is not None
        if self.clock() < self._down_until and self.problem:
            raise EmbedderError(self.problem)
        try:
            vectors = usable(self.embedder.embed(texts, kind), "The embedder")
            if len(vectors) != len(texts):
                raise EmbedderError(
                    f"The embedder answered {len(vectors)} vectors for {len(texts)} texts."
                )
            if self.dim != len(vectors[0]):  # another model: the index follows it
                with self._lock:
                    self._queries.clear()
                self.dim = len(vectors[0])
        except EmbedderError as exc:
            self.problem = str(exc)
            self._down_until = self.clock() + self.retry_after
            raise
        self.problem = None
        return vectors

    def _hits(
        self, prepared: Prepared, routes: list[Route], ids: np.ndarray, scores: np.ndarray
    ) -> list[Hit]:
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

    # The index --------------------------------------------------------------------------------

    def prepare(self, agent: str | None) -> Prepared:
        """The agent's entries made ready for ranking (cached while they are unchanged)."""
        key = agent_key(agent)
        version = self.store.corpus_version(agent)
        prepared = self._prepared.get(key)
        if prepared is not None and prepared.version == version:
            return prepared
        prepared = Prepared(key, self.store.corpus(agent), version, prepared)
        with self._lock:
            self._prepared[key] = prepared
            self._prepared.move_to_end(key)
            while len(self._prepared) > 16:
                self._prepared.popitem(last=False)
        return prepared

    def warm(self, agent: str | None) -> None:
        """Make what a recall of this agent needs now, rather than at its first recall."""
        prepared = self.prepare(agent)
        if self.settings.weight.lexical > 0:
            prepared.lexical  # noqa: B018 - built on first use
        prepared.keyword  # noqa: B018

    def _matrix(self, key: str) -> VectorMatrix:
        assert self.embedder is not None
        with self._lock:
            matrix = self._matrices.setdefault(key, VectorMatrix())
        with matrix.lock:
            skipped = self._refresh(matrix, key)
        notices.skipped(skipped, "memory_vectors", f"the index of {key}")
        return matrix

    def _refresh(self, matrix: VectorMatrix, key: str) -> int:
        """Take in the rows written since; where the database ranks, only which entries have
        a vector (never the vectors)."""
        assert self.embedder is not None
        if isinstance(self.table, PgVectorTable):
            # Rows another program wrote with only the bytes get their vector first, so that
            # they count as indexed (and are not embedded again).
            self.table.fill(key, self.embedder.model_id)
            matrix.refresh_ids(self.table, key, self.embedder.model_id, self.dim)
            return 0
        return matrix.refresh(self.table, key, self.embedder.model_id, self.dim)

    def status(self, agent: str | None) -> IndexStatus | None:
        """How much of the agent's memory the index covers (None without an embedder)."""
        if self.embedder is None:
            return None
        key = agent_key(agent)
        return self._status(key, self.prepare(agent), refresh=True)

    def _status(self, key: str, prepared: Prepared, refresh: bool = False) -> IndexStatus | None:
        if self.embedder is None:
            return None
        matrix = self._matrix(key) if refresh else self._matrices.get(key, VectorMatrix())
        with matrix.lock:
            indexed = int((prepared.rows(matrix) >= 0).sum())
        return IndexStatus(
            prepared.size,
            indexed,
            self.embedder.model_id,
            matrix.dim,
            self.embedder.meaningless,
            self.problem,
        )

    def sync(
        self,
        agent: str | None,
        rebuild: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> IndexStatus | None:
        """Bring the agent's index in line with its entries: embed what is missing (newest
        first), drop the rows of entries that are gone. `rebuild` first drops every row."""
        if self.embedder is None:
            return None
        key = agent_key(agent)
        with self._sync_lock(key):
            if rebuild:
                self.table.delete(key)
                with self._lock:
                    self._matrices.pop(key, None)
            prepared = self.prepare(agent)
            # A failing embedder: the status says so (`problem`); the next sync tries again.
            with contextlib.suppress(EmbedderError):
                self._index_some(key, prepared, None, progress)
            # Vectors of removed lines leave; not when nothing is left to read (an editor
            # mid-save, a file not UTF-8): embedding them again would cost a round trip each.
            if prepared.corpus.complete and prepared.size:
                live = set(prepared.hashes)
                gone = [h for h in self.table.hashes(key) if h not in live]
                if gone:
                    self.table.delete(key, gone)
        return self._status(key, prepared, refresh=True)

    def _sync_lock(self, key: str) -> threading.Lock:
        with self._lock:
            return self._sync_locks.setdefault(key, threading.Lock())

    def _index_some(
        self,
        key: str,
        prepared: Prepared,
        limit: int | None,
        progress: Callable[[int, int], None] | None = None,
    ) -> None:
        """Embed entries that have no vector yet, newest first; `limit` at most (then only if
        no one else is indexing this agent just now)."""
        assert self.embedder is not None
        lock = self._sync_lock(key)
        if limit is not None and not lock.acquire(blocking=False):
            return
        try:
            matrix = self._matrix(key)
            with matrix.lock:
                rows = prepared.rows(matrix)
            newest_first = prepared.recency
            missing = newest_first[rows[newest_first] < 0][:limit].tolist()
            batch = max(1, getattr(self.embedder, "batch_size", 256))
            done = 0
            for start in range(0, len(missing), batch):
                part = missing[start : start + batch]
                vectors = self._embed([prepared.texts[i] for i in part])
                self.table.write(
                    key,
                    self.embedder.model_id,
                    [
                        NewVector(
                            prepared.hashes[i],
                            prepared.texts[i],
                            vector,
                            epoch_ms(time_of(prepared.corpus, int(prepared.positions[i]))),
                        )
                        for i, vector in zip(part, vectors, strict=True)
                    ],
                )
                with matrix.lock:
                    self._refresh(matrix, key)
                done += len(part)
                if progress is not None:
                    progress(done, len(missing))
        finally:
            if limit is not None:
                lock.release()
