"""The episodes' vectors, for searching past conversations by meaning: made for the newest
episodes without one (at most `EMBED_BATCH` a search), kept in `episode_vectors` (in oryxos.db
as float32 bytes, ranked here; on PostgreSQL as pgvector values, ranked by the database), and
held in memory per agent and model once read."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from oryxtui import database, notices

if TYPE_CHECKING:
    from oryxtui.agent.episodes import Episode
    from oryxtui.agent.sessions import Conversations
    from oryxtui.memory.recall.embedders import Embedder

EMBED_BATCH = 64  # episodes given vectors by one search at most (the rest by later ones)


class EpisodeVectors:
    """The vectors of one database's episodes, by one embedder."""

    def __init__(
        self, conversations: Conversations, embedder: Embedder, min_similarity: float | None
    ) -> None:
        self.database = conversations
        self.embedder = embedder
        self.min_similarity = min_similarity  # None: the embedder's own floor
        self._held: dict[tuple[str, str], dict[int, Any]] = {}
        self._lock = threading.Lock()

    def forget(self, key: str) -> None:
        """Drop what is held of an agent's vectors (they are made again as searched)."""
        with self._lock:
            for held in [k for k in self._held if k[0] == key]:
                del self._held[held]

    def nearest(self, key: str, everything: Sequence[tuple[int, Episode]], query: str) -> Any:
        """Indexes of `everything` close enough in meaning to `query`, closest first (None:
        the embedder failed; the words alone answer). Episodes without a vector of the
        embedder's size get one, the newest first, at most `EMBED_BATCH` a search; a stored
        row that is no such vector (another model's size, a row another program wrote) counts
        as none, and is replaced."""
        import numpy as np

        from oryxtui.errors import EmbedderError
        from oryxtui.memory.recall.embedders import usable
        from oryxtui.memory.recall.relevance import similarity_floor

        embedder = self.embedder
        model = embedder.model_id
        if self.database.ranks_vectors:
            return self._nearest_episodes(everything, query)
        try:
            (asked,) = usable(embedder.embed([query], "query"), "The embedder")
            dim = len(asked)
            vectors = self._held.setdefault((key, model), {})
            if any(len(vector) != dim for vector in vectors.values()):
                vectors.clear()  # the model changed its size: read and make them anew
            self._load_vectors(vectors, [row for row, _ in everything if row not in vectors], dim)
            made = self._embed_missing(everything, set(vectors), dim)
            vectors.update((row, np.asarray(v, dtype=np.float32)) for row, v in made.items())
        except EmbedderError:
            return None
        have = [i for i, (row, _) in enumerate(everything) if row in vectors]
        if not have:
            return np.zeros(0, dtype=np.int64)
        matrix = np.stack([vectors[everything[i][0]] for i in have]).astype(np.float64)
        question = np.asarray(asked, dtype=np.float64)
        norms = np.linalg.norm(matrix, axis=1) * (np.linalg.norm(question) or 1.0)
        similarity = matrix @ question / np.where(norms == 0, 1.0, norms)
        close = np.flatnonzero(similarity >= similarity_floor(self.min_similarity, embedder))
        order = close[np.argsort(-similarity[close], kind="stable")]
        return np.asarray(have, dtype=np.int64)[order]

    def _nearest_episodes(self, everything: Sequence[tuple[int, Episode]], query: str) -> Any:
        """As `nearest`, with the vectors in the shared database (pgvector): the
        episodes without one get it (at most `EMBED_BATCH` a search), and the database
        answers which are close enough, closest first."""
        import numpy as np

        from oryxtui.errors import EmbedderError
        from oryxtui.memory.recall.embedders import usable
        from oryxtui.memory.recall.pgvector import vector_text
        from oryxtui.memory.recall.relevance import similarity_floor

        embedder = self.embedder
        model = embedder.model_id
        ids = [row for row, _ in everything]
        try:
            (asked,) = usable(embedder.embed([query], "query"), "The embedder")
            dim = len(asked)
            with self.database.errors():
                have = {
                    int(row)
                    for (row,) in self.database.connection()
                    .execute(
                        "SELECT episode_id FROM episode_vectors WHERE embedding_model = ?"
                        " AND dim = ? AND embedding_vector IS NOT NULL AND episode_id = ANY(?)",
                        (model, dim, ids),
                    )
                    .fetchall()
                }
            self._embed_missing(everything, have, dim)
            with self.database.errors():
                close = (
                    self.database.connection()
                    .execute(
                        "SELECT episode_id FROM episode_vectors WHERE embedding_model = ?"
                        " AND dim = ? AND episode_id = ANY(?)"
                        " AND 1 - (embedding_vector <=> ?::vector) >= ?"
                        " ORDER BY embedding_vector <=> ?::vector, episode_id",
                        (
                            model,
                            dim,
                            ids,
                            vector_text(asked),
                            similarity_floor(self.min_similarity, embedder),
                            vector_text(asked),
                        ),
                    )
                    .fetchall()
                )
        except EmbedderError:
            return None
        position = {row: index for index, row in enumerate(ids)}
        return np.asarray([position[int(row)] for (row,) in close], dtype=np.int64)

    def _embed_missing(
        self, everything: Sequence[tuple[int, Episode]], have: set[int], dim: int
    ) -> dict[int, Any]:
        """Vectors for the newest episodes without one (at most `EMBED_BATCH`), stored; where
        the database ranks them, as pgvector values too. Returns them by episode row."""
        import numpy as np

        from oryxtui.errors import EmbedderError
        from oryxtui.memory.recall.embedders import usable
        from oryxtui.memory.recall.pgvector import vector_text

        wanted = [(row, e) for row, e in everything if row not in have][-EMBED_BATCH:]
        if not wanted:
            return {}
        made = usable(self.embedder.embed([e.text for _, e in wanted]), "The embedder")
        if len(made) != len(wanted) or len(made[0]) != dim:
            raise EmbedderError("The embedder answered vectors that do not fit.")
        ranked = self.database.ranks_vectors
        columns = "episode_id, embedding_model, dim, embedding"
        marks = "?, ?, ?, ?"
        updates = "embedding_model = excluded.embedding_model, dim = excluded.dim,"
        updates += " embedding = excluded.embedding"
        if ranked:
            columns += ", embedding_vector"
            marks += ", ?::vector"
            updates += ", embedding_vector = excluded.embedding_vector"
        rows = [
            (row, self.embedder.model_id, dim, np.asarray(vector, dtype="<f4").tobytes())
            + ((vector_text(vector),) if ranked else ())
            for (row, _), vector in zip(wanted, made, strict=True)
        ]
        connection = self.database.connection()
        with self.database.errors(), database.write_transaction(connection):
            connection.executemany(
                f"INSERT INTO episode_vectors ({columns}) VALUES ({marks})"
                f" ON CONFLICT (episode_id) DO UPDATE SET {updates}",
                rows,
            )
        return {row: vector for (row, _), vector in zip(wanted, made, strict=True)}

    def _load_vectors(self, vectors: dict[int, Any], rows: Sequence[int], dim: int) -> None:
        """The stored vectors of these episodes that are vectors of `dim` numbers."""
        from oryxtui.memory.recall.vectors import decode

        skipped = 0
        for start in range(0, len(rows), 900):  # SQLite's limit on parameters
            part = rows[start : start + 900]
            marks = ",".join("?" * len(part))
            with self.database.errors():
                found = (
                    self.database.connection()
                    .execute(
                        "SELECT episode_id, embedding FROM episode_vectors"
                        f" WHERE embedding_model = ? AND episode_id IN ({marks})",
                        (self.embedder.model_id, *part),
                    )
                    .fetchall()
                )
            for row, stored in found:
                blob = bytes(stored) if isinstance(stored, memoryview) else stored
                vector = decode(blob, dim)
                if vector is not None:
                    vectors[int(row)] = vector
                elif decode(blob) is None:  # no vector at all (one of another size is stale)
                    skipped += 1
        notices.skipped(skipped, "episode_vectors", "the index of past conversations")
