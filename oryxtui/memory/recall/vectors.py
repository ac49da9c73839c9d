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
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from oryxtui import database
from oryxtui.workspace import GLOBAL_AGENT


def agent_key(agent: str | None) -> str:
    """The `agent_name` of an agent's rows; the global memory's is upstream's `__global__`."""
    return agent or GLOBAL_AGENT


def entry_hash(agent: str, text: str) -> str:
    """Upstream's MemoryVectorIndex.entryHash (Java's getBytes(UTF_8) writes `?` for a lone
    surrogate, as "replace" does)."""
    return hashlib.sha256(f"{agent}|ARCHIVAL|{text}".encode("utf-8", "replace")).hexdigest()


def encode(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype="<f4").tobytes()


def decode(blob: object, dim: int | None = None) -> np.ndarray | None:
    """A stored vector, or None when the value is not one (`dim` numbers, when given): a row
    of another program, or of another model of the same name, is read as untrusted."""
    if not isinstance(blob, bytes) or not blob or len(blob) % 4:
        return None
    if dim is not None and len(blob) != 4 * dim:
        return None
    vector = np.frombuffer(blob, dtype="<f4").astype(np.float32)
    return vector if np.isfinite(vector).all() else None


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

    def rows_after(
        self, agent: str, model: str, after_id: int, chunk: int = 2048
    ) -> Iterator[list[tuple[object, ...]]]:
        """The agent's rows of `model` written after row `after_id`, in id order, `chunk` at a
        time (100,000 vectors of 768 numbers are 300 MB: never all at once as bytes)."""
        with self.db.errors():
            cursor = self.db.connection().execute(
                "SELECT id, entry_hash, embedding FROM memory_vectors"
                " WHERE agent_name = ? AND id > ? AND embedding_model = ? ORDER BY id",
                (agent, after_id, model),
            )
            try:
                while rows := cursor.fetchmany(chunk):
                    yield rows
            finally:
                cursor.close()

    def count_after(self, agent: str, after_id: int) -> int:
        """How many rows (of any model) the agent has after `after_id`: read from the index."""
        ((count,),) = self.db.query(
            "SELECT count(*) FROM memory_vectors WHERE agent_name = ? AND id > ?",
            (agent, after_id),
        )
        return int(count)  # type: ignore[call-overload]

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


class IdSource(Protocol):
    def ids_after(
        self, agent: str, model: str, after_id: int, chunk: int = ...
    ) -> Iterator[list[tuple[int, str]]]: ...


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

    def refresh(self, table: VectorTable, agent: str, model: str, dim: int | None = None) -> int:
        """Take in the rows written since the last refresh, by anyone: vectors of `dim` numbers
        (the embedder's size; None: whatever the first row holds). Returns how many rows were
        skipped as no such vector: their entries count as not indexed, so they are embedded
        again and the row is replaced. A new `dim` (the model changed) starts over."""
        if dim is not None and self.dim is not None and dim != self.dim:
            self.reset(dim)
            self.last_id = 0
        coming = table.count_after(agent, self.last_id)
        if not coming:
            return 0
        expected = self._size + coming  # room for them all at once, not grown row by row
        skipped = 0
        for rows in table.rows_after(agent, model, self.last_id):
            self.last_id = max(self.last_id, *(int(row[0]) for row in rows))  # type: ignore[call-overload]
            blobs = [blob for _, _, blob in rows]
            dim = self.dim or dim
            if dim is None:  # the first vector read sets the size
                dim = next((len(b) // 4 for b in blobs if decode(b) is not None), None)  # type: ignore[arg-type]
            whole = (
                dim is not None
                and all(isinstance(b, bytes) and len(b) == 4 * dim for b in blobs)
                and all(isinstance(h, str) for _, h, _ in rows)
            )
            if whole:  # the usual case: decode the chunk at once
                data = np.frombuffer(b"".join(blobs), dtype="<f4")  # type: ignore[arg-type]
                vectors = data.reshape(len(rows), dim)  # type: ignore[arg-type]
                finite = np.isfinite(vectors).all(axis=1)
                skipped += int((~finite).sum())
                hashes = [str(h) for (_, h, _), ok in zip(rows, finite, strict=True) if ok]
                self.add_many(hashes, vectors[finite], expected)
                continue
            for _, hash_, blob in rows:
                vector = decode(blob, dim)
                if vector is None or not isinstance(hash_, str):
                    skipped += 1
                    continue
                self.add_many([hash_], vector.reshape(1, len(vector)), expected)
        return skipped

    def refresh_ids(self, table: IdSource, agent: str, model: str, dim: int | None) -> None:
        """Where the database holds and ranks the vectors: only which entries have one (a
        row number per hash, no vector), taken in as rows are written."""
        if dim is not None and self.dim is not None and dim != self.dim:
            self.reset(dim)
            self.last_id = 0
        self.dim = self.dim or dim
        for rows in table.ids_after(agent, model, self.last_id):
            for row_id, hash_ in rows:
                self.row_of.setdefault(hash_, len(self.row_of))
                self.last_id = max(self.last_id, row_id)

    def add(self, vectors: Iterable[tuple[str, np.ndarray]]) -> None:
        for hash_, vector in vectors:
            self.add_many([hash_], np.asarray(vector, dtype=np.float32).reshape(1, -1))

    def add_many(self, hashes: Sequence[str], vectors: np.ndarray, expected: int = 0) -> None:
        """Rows of vectors (one per hash, all of one size); a hash already here is replaced.
        `expected`: how many rows there will soon be (room is made for them at once)."""
        dim = vectors.shape[1]
        if not len(hashes) or not dim:
            return
        if self.dim is None:
            self.dim = dim
        elif dim != self.dim:
            return  # not of this index (`refresh` counts them): `rebuild` starts another
        rows = np.empty(len(hashes), dtype=np.int64)
        fresh = self._size
        for index, hash_ in enumerate(hashes):
            row = self.row_of.get(hash_)
            if row is None:
                row = self.row_of[hash_] = fresh
                fresh += 1
            rows[index] = row
        self._reserve(max(fresh, expected))
        self._size = fresh
        self._data[rows] = vectors
        wide = vectors.astype(np.float64)
        self._norms[rows] = np.sqrt(np.einsum("ij,ij->i", wide, wide))

    def reset(self, dim: int | None = None) -> None:
        self.dim = dim
        self.row_of = {}
        self._size = 0
        self._data = np.zeros((0, dim or 0), dtype=np.float32)
        self._norms = np.zeros(0)

    def _reserve(self, size: int) -> None:
        if size <= len(self._data) and self._data.shape[1] == self.dim:
            return
        capacity = max(size, len(self._data) + len(self._data) // 4, 64)
        data = np.zeros((capacity, self.dim or 0), dtype=np.float32)
        norms = np.zeros(capacity)
        if self._size:
            data[: self._size] = self._data[: self._size]
            norms[: self._size] = self._norms[: self._size]
        self._data, self._norms = data, norms

    def nbytes(self) -> int:
        return int(self._data.nbytes + self._norms.nbytes)
