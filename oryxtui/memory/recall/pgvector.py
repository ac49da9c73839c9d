"""The vector index in a shared PostgreSQL database: upstream's `memory_vectors` rows (the
float32 BYTEA `embedding` upstream reads, kept as it writes it) with oryxtui's pgvector column
`embedding_vector` beside it, and an HNSW cosine index per dimension (up to 2000, pgvector's
limit for HNSW). The semantic route asks the database for its nearest candidates instead of
holding every vector in every process; what this process keeps is which entries have one."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from oryxtui import notices
from oryxtui.memory.recall.vectors import NewVector, decode, encode
from oryxtui.postgres import Postgres

HNSW_MAX_DIM = 2000
# How many candidates the database answers: fusion ranks them with the other routes.
CANDIDATES = 200
# An agent with at most this many vectors is searched exactly (its rows by the agent index);
# more go through the HNSW graph of their dimension.
EXACT_ROWS = 20_000
# Rows the graph is asked for before they are narrowed to the agent and model: first as many
# as wanted (the agent owns most of the rows), then this many, then the search is exact.
GRAPH_ROWS = 1000


def vector_text(vector: np.ndarray) -> str:
    """pgvector's text form, `[x,y,…]`, exactly the float32 values."""
    return "[" + ",".join(repr(float(x)) for x in np.asarray(vector, dtype=np.float32)) + "]"


class PgVectorTable:
    """`memory_vectors` on PostgreSQL: what `VectorTable` offers for writing (`hashes`,
    `write`, `delete`), which entries have a vector (`ids_after`), and `nearest`."""

    searches = True  # the database ranks by similarity (`nearest`); no matrix in memory

    def __init__(self, database: Postgres) -> None:
        self.database = database
        self._indexed_dims: set[int] = set()
        self._filled: dict[tuple[str, str], int] = {}  # (agent, model) → the last id looked at
        self._lock = threading.Lock()

    def ids_after(
        self, agent: str, model: str, after_id: int, chunk: int = 10_000
    ) -> Iterator[list[tuple[int, str]]]:
        """(id, entry hash) of the agent's rows of `model` after `after_id`, without vectors."""
        while True:
            rows = self.database.query(
                "SELECT id, entry_hash FROM memory_vectors WHERE agent_name = %s AND id > %s"
                " AND embedding_model = %s AND embedding_vector IS NOT NULL ORDER BY id LIMIT %s",
                (agent, after_id, model, chunk),
            )
            if not rows:
                return
            yield [(int(row_id), str(hash_)) for row_id, hash_ in rows]
            after_id = int(rows[-1][0])

    def hashes(self, agent: str) -> dict[str, str]:
        rows = self.database.query(
            "SELECT entry_hash, embedding_model FROM memory_vectors WHERE agent_name = %s",
            (agent,),
        )
        return {str(hash_): str(model) for hash_, model in rows}

    def write(self, agent: str, model: str, vectors: Sequence[NewVector]) -> None:
        """Insert the rows, replacing any of the same agent and hash with a new row (a new id,
        so that every reader sees it as new). Two indexers writing one entry at once: one row
        remains (the unique key), whoever was last."""
        if not vectors:
            return
        dim = len(vectors[0].vector)
        self._ensure_index(dim)
        now = time.time()
        rows = [
            (
                v.hash,
                agent,
                v.text,
                encode(v.vector),
                len(v.vector),
                model,
                None if v.entry_time_ms is None else v.entry_time_ms / 1000,
                now,
                vector_text(v.vector),
            )
            for v in vectors
        ]
        with self.database.transaction() as connection:
            cursor = connection.cursor()
            cursor.execute(
                "DELETE FROM memory_vectors WHERE agent_name = %s AND entry_hash = ANY(%s)",
                (agent, [v.hash for v in vectors]),
            )
            cursor.executemany(
                "INSERT INTO memory_vectors (entry_hash, agent_name, content, embedding, dim,"
                " embedding_model, entry_time, created_at, embedding_vector)"
                " VALUES (%s, %s, %s, %s, %s, %s, to_timestamp(%s), to_timestamp(%s),"
                " %s::vector) ON CONFLICT (agent_name, entry_hash) DO UPDATE SET"
                " content = EXCLUDED.content, embedding = EXCLUDED.embedding,"
                " dim = EXCLUDED.dim, embedding_model = EXCLUDED.embedding_model,"
                " entry_time = EXCLUDED.entry_time, created_at = EXCLUDED.created_at,"
                " embedding_vector = EXCLUDED.embedding_vector",
                rows,
            )

    def delete(self, agent: str, hashes: Iterable[str] | None = None) -> int:
        with self.database.transaction() as connection:
            if hashes is None:
                cursor = connection.execute(
                    "DELETE FROM memory_vectors WHERE agent_name = %s", (agent,)
                )
            else:
                cursor = connection.execute(
                    "DELETE FROM memory_vectors WHERE agent_name = %s AND entry_hash = ANY(%s)",
                    (agent, list(hashes)),
                )
            return int(cursor.rowcount)

    def nearest(
        self,
        agent: str,
        model: str,
        vector: np.ndarray,
        limit: int = CANDIDATES,
        rows: int | None = None,
    ) -> list[tuple[str, float]]:
        """The agent's `limit` rows of `model` nearest `vector` by cosine: (hash, similarity),
        nearest first. `rows`: how many vectors the agent has (a few: searched exactly; many:
        through the HNSW graph, falling back to exact if the graph's neighbours are mostly
        other agents')."""
        dim = len(vector)
        query = vector_text(vector)
        graph = dim <= HNSW_MAX_DIM and (rows is None or rows > EXACT_ROWS)
        if graph:
            for graph_rows in (limit, max(limit, GRAPH_ROWS)):
                found = self._through_graph(agent, model, query, dim, limit, graph_rows)
                if len(found) >= min(limit, rows or limit):
                    return found
        return self._exactly(agent, model, query, dim, limit)

    def _through_graph(
        self, agent: str, model: str, query: str, dim: int, limit: int, graph_rows: int
    ) -> list[tuple[str, float]]:
        column = f"embedding_vector::vector({dim})"
        with self.database.transaction() as connection:
            connection.execute(f"SET LOCAL hnsw.ef_search = {max(40, min(1000, graph_rows))}")
            found = connection.execute(
                "SELECT entry_hash, similarity FROM ("
                f" SELECT entry_hash, agent_name, embedding_model,"
                f" 1 - ({column} <=> %s::vector({dim})) AS similarity"
                f" FROM memory_vectors WHERE dim = {dim}"
                f" ORDER BY {column} <=> %s::vector({dim}) LIMIT {graph_rows}) AS near"
                " WHERE agent_name = %s AND embedding_model = %s"
                " ORDER BY similarity DESC LIMIT %s",
                (query, query, agent, model, limit),
            ).fetchall()
        return [(str(hash_), float(similarity)) for hash_, similarity in found]

    def _exactly(
        self, agent: str, model: str, query: str, dim: int, limit: int
    ) -> list[tuple[str, float]]:
        found = self.database.query(
            "SELECT entry_hash, 1 - (embedding_vector <=> %s::vector) AS similarity"
            " FROM memory_vectors WHERE agent_name = %s AND embedding_model = %s AND dim = %s"
            " AND embedding_vector IS NOT NULL"
            " ORDER BY embedding_vector <=> %s::vector LIMIT %s",
            (query, agent, model, dim, query, limit),
        )
        return [(str(hash_), float(similarity)) for hash_, similarity in found]

    def fill(self, agent: str, model: str) -> int:
        """Give rows another program wrote (upstream: only the BYTEA) their pgvector value;
        a row whose bytes are no vector is left without one (not indexed, embedded again).
        Each row is looked at once (by id, on the agent's index)."""
        key = (agent, model)
        after = self._filled.get(key, 0)
        ((top,),) = self.database.query(
            "SELECT coalesce(max(id), 0) FROM memory_vectors WHERE agent_name = %s", (agent,)
        )
        if int(top) <= after:
            return 0
        rows: list[tuple[Any, ...]] = self.database.query(
            "SELECT id, embedding, dim FROM memory_vectors WHERE agent_name = %s AND id > %s"
            " AND embedding_model = %s AND embedding_vector IS NULL",
            (agent, after, model),
        )
        filled = []
        for row_id, blob, dim in rows:
            vector = decode(bytes(blob) if blob is not None else None, dim)
            if vector is not None:
                filled.append((vector_text(vector), row_id))
        if filled:
            with self.database.transaction() as connection:
                connection.cursor().executemany(
                    "UPDATE memory_vectors SET embedding_vector = %s::vector WHERE id = %s",
                    filled,
                )
        with self._lock:
            self._filled[key] = max(self._filled.get(key, 0), int(top))
        # Looked at once, so said once; those entries are embedded again.
        notices.skipped(len(rows) - len(filled), "memory_vectors", f"the index of {agent}")
        return len(filled)

    def _ensure_index(self, dim: int) -> None:
        """The HNSW index of this dimension, made once (under an advisory lock: two
        processes making it at once make it once)."""
        if dim > HNSW_MAX_DIM:
            return
        with self._lock:
            if dim in self._indexed_dims:
                return
            with self.database.transaction() as connection:
                connection.execute("SELECT pg_advisory_xact_lock(hashtext('oryxtui hnsw'))")
                # Built on rows already there (vectors upstream or a migration wrote): room
                # for the graph, or the build takes many times as long.
                connection.execute("SET LOCAL maintenance_work_mem = '512MB'")
                connection.execute(
                    f"CREATE INDEX IF NOT EXISTS oryxtui_memvec_hnsw_{dim} ON memory_vectors"
                    f" USING hnsw ((embedding_vector::vector({dim})) vector_cosine_ops)"
                    f" WHERE dim = {dim}"
                )
            self._indexed_dims.add(dim)
