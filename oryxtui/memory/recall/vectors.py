"""The vector index: upstream's `memory_vectors` table in `oryxos.db`, and the vectors of one
agent and model held in memory as one matrix.

A row is keyed by `entry_hash = sha256(agent + "|ARCHIVAL|" + entry text)`; its vector is a
float32 little-endian BLOB; `embedding_model` is `provider/model`; `entry_time` and `created_at`
are epoch milliseconds, as upstream's SQLite JDBC driver stores an Instant. A vector depends
only on the text and the model, so a vector once read stays right for its hash: the matrix only
ever grows by the rows written after the last one read."""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from oryxtui import database

GLOBAL_AGENT = "__global__"


def agent_key(agent: str | None) -> str:
    """The `agent_name` of an agent's rows; the global memory's is upstream's `__global__`."""
    return agent or GLOBAL_AGENT


def entry_hash(agent: str, text: str) -> str:
    """Upstream's MemoryVectorIndex.entryHash (Java's getBytes(UTF_8) writes `?` for a lone
    surrogate, as "replace" does)."""
    return hashlib.sha256(f"{agent}|ARCHIVAL|{text}".encode("utf-8", "replace")).hexdigest()


def encode(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype="<f4").tobytes()


def decode(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype="<f4").astype(np.float32)


@dataclass(frozen=True)
class NewVector:
    hash: str
    text: str
    vector: np.ndarray
    entry_time_ms: int | None


class VectorTable:
    """The rows of `memory_vectors` (the schema is `database.py`'s, upstream's exactly)."""

    def __init__(self, db: database.Database) -> None:
        self.db = db

    def rows_after(self, agent: str, model: str, after_id: int) -> list[tuple[object, ...]]:
        return self.db.query(
            "SELECT id, entry_hash, embedding, dim FROM memory_vectors"
            " WHERE agent_name = ? AND id > ? AND embedding_model = ? ORDER BY id",
            (agent, after_id, model),
        )

    def hashes(self, agent: str) -> dict[str, str]:
        """Every row of the agent: entry hash → model."""
        rows = self.db.query(
            "SELECT entry_hash, embedding_model FROM memory_vectors WHERE agent_name = ?",
            (agent,),
        )
        return {str(hash_): str(model) for hash_, model in rows}

    def write(self, agent: str, model: str, vectors: Sequence[NewVector]) -> None:
        """Insert the rows, replacing any of the same agent and hash (a new id, so that every
        reader sees the row as new)."""
        now = int(time.time() * 1000)
        rows = [
            (v.hash, agent, v.text, encode(v.vector), len(v.vector), model, v.entry_time_ms, now)
            for v in vectors
        ]
        with self.db.errors(), database.write_transaction(self.db.connection()) as connection:
            connection.executemany(
                "INSERT OR REPLACE INTO memory_vectors (entry_hash, agent_name, content,"
                " embedding, dim, embedding_model, entry_time, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )

    def delete(self, agent: str, hashes: Iterable[str] | None = None) -> int:
        """Delete the agent's rows with these hashes (all its rows with None)."""
        with self.db.errors(), database.write_transaction(self.db.connection()) as connection:
            if hashes is None:
                cursor = connection.execute(
                    "DELETE FROM memory_vectors WHERE agent_name = ?", (agent,)
                )
                return cursor.rowcount
            return sum(
                connection.execute(
                    "DELETE FROM memory_vectors WHERE agent_name = ? AND entry_hash = ?",
                    (agent, hash_),
                ).rowcount
                for hash_ in hashes
            )


class VectorMatrix:
    """One agent's vectors of one model, in memory: row `row_of[hash]` of `matrix`, with its
    norm. Grows as rows are written; never shrinks (a vector of a removed entry is simply not
    asked for)."""

    def __init__(self) -> None:
        self.dim: int | None = None
        self.row_of: dict[str, int] = {}
        self.last_id = 0
        self._data = np.zeros((0, 0), dtype=np.float32)
        self._norms = np.zeros(0)
        self._size = 0
        self.lock = threading.Lock()

    @property
    def matrix(self) -> np.ndarray:
        return self._data[: self._size]

    @property
    def norms(self) -> np.ndarray:
        return self._norms[: self._size]

    def refresh(self, table: VectorTable, agent: str, model: str) -> None:
        """Take in the rows written since the last refresh, by anyone."""
        rows = table.rows_after(agent, model, self.last_id)
        if rows:
            self.last_id = max(int(row[0]) for row in rows)  # type: ignore[call-overload]
            self.add((str(hash_), decode(blob)) for _, hash_, blob, _ in rows)  # type: ignore[arg-type]

    def add(self, vectors: Iterable[tuple[str, np.ndarray]]) -> None:
        pending = [(hash_, vector) for hash_, vector in vectors if len(vector)]
        if not pending:
            return
        if self.dim is None:
            self.dim = len(pending[0][1])
        elif len(pending[-1][1]) != self.dim:
            self.reset(len(pending[-1][1]))  # the model now answers another size: start over
        pending = [(h, v) for h, v in pending if len(v) == self.dim]
        self._reserve(self._size + len(pending))
        for hash_, vector in pending:
            row = self.row_of.get(hash_)
            if row is None:
                row = self.row_of[hash_] = self._size
                self._size += 1
            self._data[row] = vector
            self._norms[row] = np.sqrt(np.dot(vector.astype(np.float64), vector))

    def reset(self, dim: int | None = None) -> None:
        self.dim = dim
        self.row_of = {}
        self._size = 0
        self._data = np.zeros((0, dim or 0), dtype=np.float32)
        self._norms = np.zeros(0)

    def _reserve(self, size: int) -> None:
        if size <= len(self._data) and self._data.shape[1] == self.dim:
            return
        capacity = max(size, 2 * len(self._data), 256)
        data = np.zeros((capacity, self.dim or 0), dtype=np.float32)
        norms = np.zeros(capacity)
        if self._size:
            data[: self._size] = self._data[: self._size]
            norms[: self._size] = self._norms[: self._size]
        self._data, self._norms = data, norms

    def nbytes(self) -> int:
        return int(self._data.nbytes + self._norms.nbytes)
