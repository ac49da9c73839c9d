"""Recall on the shared database: the index in `memory_vectors` with pgvector beside upstream's
bytes, the semantic route answered by the database, and the same ranking as locally."""

from __future__ import annotations

import threading
from typing import Any

import psycopg
import pytest

from oryxtui.config import Settings
from oryxtui.memory import MemoryService
from oryxtui.memory.recall.embedders import MockEmbedder
from oryxtui.memory.recall.vectors import encode, entry_hash
from oryxtui.workspace import Workspace, init_workspace
from tests.cli.test_recall import Clock, CountingMock, corpus, fill, settings_for


def shared_settings(url: str, **recall: Any) -> Settings:
    settings = settings_for("database", **recall)
    return settings.model_copy(
        update={"database": settings.database.model_copy(update={"url": url})}
    )


def rows(url: str, agent: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as connection:
        return connection.execute(
            "SELECT entry_hash, content, embedding, dim, embedding_model,"
            " embedding_vector IS NOT NULL FROM memory_vectors WHERE agent_name = %s ORDER BY id",
            (agent,),
        ).fetchall()


def test_the_index_is_upstreams_rows_with_pgvector_beside(
    workspace: Workspace, database_url: str
) -> None:
    service = MemoryService.open(workspace, shared_settings(database_url), Clock())
    service.save("ops", "deploy window is friday", "archival")
    status = service.sync_index("ops")
    assert (status.entries, status.indexed, status.dim) == (1, 1, 64)
    ((hash_, content, blob, dim, model, has_vector),) = rows(database_url, "ops")
    assert content == "deploy window is friday" and hash_ == entry_hash("ops", content)
    assert bytes(blob) == encode(MockEmbedder().embed([content])[0]) and dim == 64
    assert model == "mock/deterministic" and has_vector
    with psycopg.connect(database_url) as connection:
        indexes = {name for (name,) in connection.execute("SELECT indexname FROM pg_indexes")}
    assert "oryxtui_memvec_hnsw_64" in indexes


def test_ranking_is_the_same_as_on_one_machine(
    tmp_path: Any, workspace: Workspace, database_url: str
) -> None:
    """Fusion, the floor and the routes are unchanged: the database only answers the nearest
    candidates. The same entries rank hit for hit as with oryxos.db."""
    texts = corpus(60)
    local_clock, shared_clock = Clock(), Clock()
    local = MemoryService.open(
        workspace, settings_for("sqlite", weight={"lexical": 0}), local_clock
    )
    shared = MemoryService.open(
        init_workspace(tmp_path / "host"),
        shared_settings(database_url, weight={"lexical": 0}),
        shared_clock,
    )
    fill(local, "ops", texts, local_clock)
    fill(shared, "ops", texts, shared_clock)
    assert local.sync_index("ops").pending == shared.sync_index("ops").pending == 0
    for query in ("deploy", "cat lunch", "window friday", "zzz"):
        here = [(h.entry.content, sorted(h.routes)) for h in local.recall("ops", query).hits]
        there = [(h.entry.content, sorted(h.routes)) for h in shared.recall("ops", query).hits]
        assert there == here, query
    # The process holds which entries have vectors, never the vectors.
    matrix = shared.engine.index.matrices["ops"]  # type: ignore[union-attr]
    assert matrix.matrix.size == 0 and len(matrix.row_of) == 60


def test_rows_upstream_wrote_are_given_their_vector_and_used(
    workspace: Workspace, database_url: str
) -> None:
    service = MemoryService.open(workspace, shared_settings(database_url), Clock())
    service.save("ops", "the cat sleeps on the keyboard", "archival")
    text = "the cat sleeps on the keyboard"
    counting = CountingMock()
    service.engine.embedder = counting  # type: ignore[union-attr]
    with psycopg.connect(database_url, autocommit=True) as connection:  # upstream's indexer
        connection.execute(
            "INSERT INTO memory_vectors (entry_hash, agent_name, content, embedding, dim,"
            " embedding_model, created_at) VALUES (%s, 'ops', %s, %s, 64, 'mock/deterministic',"
            " now())",
            (entry_hash("ops", text), text, encode(MockEmbedder().embed([text])[0])),
        )
    found = service.recall("ops", "cat keyboard")
    assert found.semantic == "used" and found.entries[0].content == text
    assert rows(database_url, "ops")[0][5]  # filled in,
    assert counting.texts == ["cat keyboard"]  # not embedded again: only the query was
    assert len(rows(database_url, "ops")) == 1


def test_two_indexers_at_once_converge_without_duplicates(tmp_path: Any, database_url: str) -> None:
    hosts = [init_workspace(tmp_path / f"host{i}") for i in range(2)]
    services = [MemoryService.open(h, shared_settings(database_url), Clock()) for h in hosts]
    for i in range(80):
        services[0].save("ops", f"note {i} on deploys and cats", "archival")
    errors: list[BaseException] = []

    def index(service: MemoryService) -> None:
        try:
            service.sync_index("ops")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=index, args=(s,)) for s in services]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors
    found = rows(database_url, "ops")
    assert len(found) == 80 == len({row[0] for row in found})
    assert all(service.sync_index("ops").pending == 0 for service in services)


@pytest.mark.parametrize("query", ["deploy", "猫"])
def test_a_recall_of_nothing_indexed_yet_still_answers(
    workspace: Workspace, database_url: str, query: str
) -> None:
    service = MemoryService.open(workspace, shared_settings(database_url), Clock())
    service.save("ops", "deploy at noon", "archival")
    assert service.recall("ops", query).semantic == "used"


def test_a_vector_row_that_is_no_vector_is_skipped_and_counted(
    workspace: Workspace, database_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    service = MemoryService.open(workspace, shared_settings(database_url), Clock())
    service.save("ops", "the cat sleeps on the keyboard", "archival")
    text = "the cat sleeps on the keyboard"
    with psycopg.connect(database_url, autocommit=True) as connection:  # a broken writer
        connection.execute(
            "INSERT INTO memory_vectors (entry_hash, agent_name, content, embedding, dim,"
            " embedding_model, created_at) VALUES (%s, 'ops', %s, %s, 64, 'mock/deterministic',"
            " now())",
            (entry_hash("ops", text), text, b"\x00\x01\x02"),
        )
    with caplog.at_level("WARNING"):
        found = service.recall("ops", "cat keyboard")
    assert found.entries[0].content == text  # embedded again, found
    assert "1 memory_vectors record in the index of ops could not be read" in caplog.text


def test_the_database_s_nearest_candidates_are_not_held_to_a_spread(
    workspace: Workspace, database_url: str
) -> None:
    """pgvector answers only the nearest candidates: a spread measured over them would leave
    out all but the very nearest. Locally every entry is scored, and the spread applies."""
    import numpy as np

    from oryxtui.memory.recall.fusion import Route

    scores = np.array([0.95, 0.5, 0.45, 0.4, 0.4, 0.4, 0.38, 0.37, 0.36, 0.36])
    nearest = Route("semantic", 1.0, np.arange(10), scores)
    shared = MemoryService.open(workspace, shared_settings(database_url), Clock()).engine
    local = MemoryService.open(workspace, settings_for("sqlite"), Clock()).engine
    assert shared is not None and local is not None
    assert shared.relevant(nearest).tolist() == list(range(10))  # all over min_similarity
    assert local.relevant(nearest).tolist() == [0]  # only the 0.95 stands out of the rest
