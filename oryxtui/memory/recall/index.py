"""The index the semantic route reads: each agent's vectors (in oryxos.db, or pgvector), kept in
step with its entries, and the embedder behind them — its queries cached, and while it fails,
failing at once for a while rather than on every recall."""

from __future__ import annotations

import contextlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np

from oryxtui import notices
from oryxtui.errors import EmbedderError
from oryxtui.memory.recall.embedders import Embedder, usable
from oryxtui.memory.recall.pgvector import PgVectorTable
from oryxtui.memory.recall.prepared import Prepared, content_of, epoch_ms, time_of
from oryxtui.memory.recall.results import IndexStatus, Stopwatch
from oryxtui.memory.recall.vectors import NewVector, VectorMatrix, VectorTable

QUERIES_KEPT = 256  # query vectors kept (a question asked again is not embedded again)


def reading(embedder: Embedder) -> Callable[[str], str]:
    """What of an entry's line the embedder reads: the whole line, as upstream embeds it (so
    that a vector either program writes under a model id they share is the one the other
    would write), or — a model only oryxtui runs, calibrated so (`reads_content`) — what the
    entry says, without its time: a third fewer tokens for the `onnx` model on conversations."""
    return content_of if getattr(embedder, "reads_content", False) else str


class MeaningIndex:
    """Vectors of an agent's entries by one embedder, and the embedder's state. Safe to share
    between threads."""

    def __init__(
        self,
        table: VectorTable | PgVectorTable,
        embedder: Embedder | None,
        clock: Callable[[], float] = time.monotonic,
        retry_after: float = 10.0,
    ) -> None:
        self.table = table
        self.embedder = embedder
        self.clock = clock
        self.retry_after = retry_after
        self.matrices: dict[str, VectorMatrix] = {}
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()
        self._sync_locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()
        self._down_until = 0.0
        self.problem: str | None = None
        self.dim: int | None = None  # how many numbers the embedder's vectors hold

    @property
    def in_database(self) -> bool:
        """The database ranks by meaning (pgvector): it answers only the nearest entries."""
        return isinstance(self.table, PgVectorTable)

    # The embedder ----------------------------------------------------------------------------

    def query_vector(self, query: str, clock: Stopwatch) -> np.ndarray:
        assert self.embedder is not None
        key = f"{self.embedder.model_id}\n{query}"
        with self._lock:
            cached = self._queries.get(key)
            if cached is not None:
                self._queries.move_to_end(key)
                return cached
        (vector,) = self.embed([query], "query")
        clock.lap("embedding")  # (the embedder's call; a query kept is not one)
        with self._lock:
            self._queries[key] = vector
            while len(self._queries) > QUERIES_KEPT:
                self._queries.popitem(last=False)
        return vector

    def embed(self, texts: Sequence[str], kind: str = "passage") -> list[np.ndarray]:
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

    # The vectors -----------------------------------------------------------------------------

    def matrix(self, key: str) -> VectorMatrix:
        """The agent's vectors as read now (what was written since taken in)."""
        assert self.embedder is not None
        with self._lock:
            matrix = self.matrices.setdefault(key, VectorMatrix())
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

    def status(self, key: str, prepared: Prepared, refresh: bool = False) -> IndexStatus | None:
        """How much of the agent's entries the index covers (None without an embedder)."""
        if self.embedder is None:
            return None
        matrix = self.matrix(key) if refresh else self.matrices.get(key, VectorMatrix())
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
        key: str,
        prepare: Callable[[], Prepared],
        rebuild: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> IndexStatus | None:
        """Bring the agent's index in line with its entries (made by `prepare`): embed what
        is missing (newest first), drop the rows of entries that are gone. `rebuild` first
        drops every row."""
        if self.embedder is None:
            return None
        with self.sync_lock(key):
            if rebuild:
                self.table.delete(key)
                with self._lock:
                    self.matrices.pop(key, None)
            prepared = prepare()
            # A failing embedder: the status says so (`problem`); the next sync tries again.
            with contextlib.suppress(EmbedderError):
                self.index_some(key, prepared, None, progress)
            # Vectors of removed lines leave; not when nothing is left to read (an editor
            # mid-save, a file not UTF-8): embedding them again would cost a round trip each.
            if prepared.corpus.complete and prepared.size:
                live = set(prepared.hashes)
                gone = [h for h in self.table.hashes(key) if h not in live]
                if gone:
                    self.table.delete(key, gone)
        return self.status(key, prepared, refresh=True)

    def sync_lock(self, key: str) -> threading.Lock:
        with self._lock:
            return self._sync_locks.setdefault(key, threading.Lock())

    def index_some(
        self,
        key: str,
        prepared: Prepared,
        limit: int | None,
        progress: Callable[[int, int], None] | None = None,
    ) -> None:
        """Embed entries that have no vector yet, newest first; `limit` at most (then only if
        no one else is indexing this agent just now)."""
        assert self.embedder is not None
        lock = self.sync_lock(key)
        if limit is not None and not lock.acquire(blocking=False):
            return
        try:
            matrix = self.matrix(key)
            with matrix.lock:
                rows = prepared.rows(matrix)
            newest_first = prepared.recency
            missing = newest_first[rows[newest_first] < 0][:limit].tolist()
            batch = max(1, getattr(self.embedder, "batch_size", 256))
            read = reading(self.embedder)
            done = 0
            for start in range(0, len(missing), batch):
                part = missing[start : start + batch]
                vectors = self.embed([read(prepared.texts[i]) for i in part])
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
