"""Ranked recall over an agent's archival entries, in stages: gather each route's candidates
(`gather`), admit those a route found for a reason (`admit`), order the admitted by one fused
score (`order`), explain each hit (`explain`); the index the semantic route reads is `index`.

The default profile fuses, by reciprocal rank, the routes that say what an entry is about:
meaning (semantic), words (lexical) and upstream's substring match (keyword); recency breaks
ties, and ranks as a route only when the question asks for what is newest — it never buries an
older entry that answers. `profile = "upstream"` is upstream's ranking hit for hit: semantic,
keyword and recency fused, every entry ranked."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from oryxtui.errors import EmbedderError
from oryxtui.memory.recall.admit import (
    admitted,
    meaning_floor,
    relevant_by_meaning,
    spelled_at_word_start,
    strong_words,
)
from oryxtui.memory.recall.embedders import Embedder
from oryxtui.memory.recall.explain import explained
from oryxtui.memory.recall.fusion import Route
from oryxtui.memory.recall.gather import by_keyword, by_meaning, by_words
from oryxtui.memory.recall.index import MeaningIndex
from oryxtui.memory.recall.order import MEANING_SCALE, ordered, recency_route, words_weight
from oryxtui.memory.recall.pgvector import PgVectorTable
from oryxtui.memory.recall.prepared import Prepared
from oryxtui.memory.recall.results import DEGRADE_NOTICE, IndexStatus, Recall, Stopwatch
from oryxtui.memory.recall.vectors import VectorTable, agent_key
from oryxtui.memory.store import Rankable

if TYPE_CHECKING:
    from oryxtui.config import RecallSettings

PREPARED_KEPT = 16  # agents whose entries are kept ready for ranking


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
        self.index = MeaningIndex(table, embedder, clock, retry_after)
        self._prepared: OrderedDict[str, Prepared] = OrderedDict()
        self._lock = threading.Lock()

    # What the index holds, said where callers look for it.

    @property
    def embedder(self) -> Embedder | None:
        return self.index.embedder

    @embedder.setter
    def embedder(self, embedder: Embedder | None) -> None:
        self.index.embedder = embedder

    @property
    def table(self) -> VectorTable | PgVectorTable:
        return self.index.table

    @property
    def problem(self) -> str | None:
        """Why the embedder failed last (None: it answered)."""
        return self.index.problem

    @property
    def retry_after(self) -> float:
        return self.index.retry_after

    @retry_after.setter
    def retry_after(self, seconds: float) -> None:
        self.index.retry_after = seconds

    # Recall ------------------------------------------------------------------------------------

    def recall(
        self, agent: str | None, query: str, semantic: bool = True, limit: int | None = None
    ) -> Recall:
        """The hits for `query`, best first: `top_k` of them, or `limit`."""
        key = agent_key(agent)
        prepared = self.prepare(agent)
        settings = self.settings
        if limit is not None:
            settings = settings.model_copy(update={"top_k": limit})
        upstream = settings.profile == "upstream"
        lexical_on = settings.weight.lexical > 0 and not upstream
        clock = Stopwatch()  # each route's own time, for operators
        keyword_ids = by_keyword(prepared, query)
        clock.lap("keyword")
        lexical_ids, lexical_scores = np.zeros(0, np.int64), None
        if lexical_on:
            lexical_ids, lexical_scores = by_words(prepared, query)
            clock.lap("lexical")
        meaning: Route | None = None
        state, notice, problem = "off", None, None
        similar = np.zeros(0, dtype=np.int64)
        if self.embedder is not None and not semantic:
            state = "deferred"
        elif self.embedder is not None:
            try:
                weight = settings.weight.semantic
                meaning = by_meaning(
                    self.index, key, prepared, query, clock, weight, settings.top_k, upstream
                )
                state = "used"
                similar = self.relevant(meaning, query)
            except EmbedderError as exc:
                state, notice, problem = "failed", DEGRADE_NOTICE, str(exc)
            clock.lap("semantic")
        routes = [
            meaning,
            Route("keyword", settings.weight.keyword, keyword_ids),
            Route("lexical", words_weight(settings, prepared, query), lexical_ids, lexical_scores)
            if lexical_on
            else None,
            recency_route(settings, prepared, query),
        ]
        chosen = [route for route in routes if route is not None]
        eligible = None  # every entry a route named may rank (upstream; no floor)
        if not upstream and meaning_floor(settings, self.embedder, query) > -1:
            # The floors decide which entries may be hits at all; among those, meaning's
            # whole view (not only what it finds relevant) has its say in the order.
            words = strong_words(lexical_ids, lexical_scores, settings.word_floor)
            if len(keyword_ids) and spelled_at_word_start(query):
                spelled = by_keyword(prepared, query, word_start=True)
            else:
                spelled = keyword_ids
            eligible = admitted(prepared.size, spelled, words, similar)
        scale = float(getattr(self.embedder, "meaning_scale", MEANING_SCALE))
        ids, scores = ordered(settings, prepared, chosen, eligible, scale)
        hits = explained(prepared, chosen, ids, scores)
        # The index is read even when the query could not be embedded: what it holds does not
        # depend on the embedder answering now.
        status = self.index.status(key, prepared, refresh=key not in self.index.matrices)
        return Recall(query, "hybrid", hits, state, notice, problem, status, clock)

    def relevant(self, route: Route, query: str = "") -> np.ndarray:
        """The entries a semantic route finds relevant (see `admit.relevant_by_meaning`)."""
        sampled = not self.index.in_database
        return relevant_by_meaning(route, self.settings, self.embedder, query, sampled)

    # The entries made ready, and the index ----------------------------------------------------

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
            while len(self._prepared) > PREPARED_KEPT:
                self._prepared.popitem(last=False)
        return prepared

    def warm(self, agent: str | None) -> None:
        """Make what a recall of this agent needs now, rather than at its first recall."""
        prepared = self.prepare(agent)
        if self.settings.weight.lexical > 0:
            prepared.lexical  # noqa: B018 - built on first use
        prepared.keyword  # noqa: B018

    def status(self, agent: str | None) -> IndexStatus | None:
        """How much of the agent's memory the index covers (None without an embedder)."""
        if self.embedder is None:
            return None
        return self.index.status(agent_key(agent), self.prepare(agent), refresh=True)

    def sync(
        self,
        agent: str | None,
        rebuild: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> IndexStatus | None:
        """Bring the agent's index in line with its entries: embed what is missing (newest
        first), drop the rows of entries that are gone. `rebuild` first drops every row."""
        return self.index.sync(agent_key(agent), lambda: self.prepare(agent), rebuild, progress)
