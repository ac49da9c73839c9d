"""Ranked recall on real files and a real oryxos.db, for the markdown and sqlite backends:
upstream's contract (legacy keyword recall, fusion equal to upstream's engine, its index rows),
what is better than upstream (a relevance floor, the lexical route, live indexing, global
vectors), and the OpenAI-compatible embedder through the real SDK against a local server."""

from __future__ import annotations

import json
import re
import sqlite3
import threading
import time
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

import numpy as np
import pytest

from oryxtui.agent.tools import RecallMemory
from oryxtui.config import Settings
from oryxtui.memory import MemoryService, current_agent
from oryxtui.memory.format import ARCHIVAL_HEADER, CORE_HEADER
from oryxtui.memory.recall.embedders import MockEmbedder, mock_vector
from oryxtui.memory.recall.keeper import IndexKeeper
from oryxtui.memory.recall.results import DEGRADE_NOTICE
from oryxtui.memory.recall.vectors import decode, encode, entry_hash
from oryxtui.workspace import Workspace
from tests.llm_server import ScriptedLLM
from tests.support import make_agent, run_oryxtui
from tests.unit.test_recall_parts import JAVA_MOCK_HELLO

BACKENDS = ["markdown", "sqlite"]


def settings_for(backend: str, embedding: dict[str, Any] | None = None, **recall: Any) -> Settings:
    return Settings.model_validate(
        {
            "memory": {"backend": backend, "recall": recall},
            "embedding": embedding if embedding is not None else {"provider": "mock"},
        }
    )


class Clock:
    """Times that move by a minute per save, with some saves at the same second."""

    def __init__(self) -> None:
        self.now = datetime(2026, 7, 1, 9, 0, 0)

    def __call__(self) -> datetime:
        return self.now

    def tick(self, minutes: int = 1) -> None:
        self.now += timedelta(minutes=minutes)


def fill(service: MemoryService, agent: str | None, texts: Sequence[str], clock: Clock) -> None:
    for index, text in enumerate(texts):
        if index % 3:  # every third entry shares its time with the one before
            clock.tick()
        service.save(agent, text, "archival")


def vector_rows(workspace: Workspace, agent: str) -> list[sqlite3.Row]:
    with sqlite3.connect(workspace.db_path) as connection:
        connection.row_factory = sqlite3.Row
        tables = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        if "memory_vectors" not in {row[0] for row in tables}:
            return []
        return connection.execute(
            "SELECT * FROM memory_vectors WHERE agent_name = ? ORDER BY id", (agent,)
        ).fetchall()


WORDS = [
    "deploy",
    "window",
    "friday",
    "incident",
    "cat",
    "database",
    "lunch",
    "rollout",
    "backup",
    "alert",
]


def corpus(size: int, seed: int = 3) -> list[str]:
    rng = np.random.default_rng(seed)
    texts = [" ".join(rng.choice(WORDS, size=int(rng.integers(2, 6)))) for _ in range(size)]
    return texts + texts[:5]  # some entries written twice


# Upstream's engine, transcribed line by line from MemoryRecallEngine.recall and
# RetrievalPipeline.fuseByRank (a27474c), with double arithmetic as Java does it.


def upstream_recall(
    agent: str,
    entries: list[tuple[str, str]],  # (entry text, sortable time or "")
    keyword_lines: list[str],
    rows: list[tuple[str, list[float]]],  # (entry_hash, vector) in table order
    query_vector: list[float],
    weights: tuple[float, float, float],
    top_k: int,
) -> list[str]:
    id_by_hash: dict[str, int] = {}
    content_by_id: dict[int, str] = {}
    unique: list[tuple[str, str]] = []
    for content, when in entries:
        hash_ = entry_hash(agent, content)
        if hash_ not in id_by_hash:
            id_by_hash[hash_] = len(id_by_hash) + 1
            content_by_id[id_by_hash[hash_]] = content
            unique.append((content, when))
    keyword_route = [
        id_by_hash[entry_hash(agent, line)]
        for line in reversed(keyword_lines)
        if entry_hash(agent, line) in id_by_hash
    ]
    positioned = sorted(enumerate(unique), key=lambda p: (p[1][1], p[0]), reverse=True)
    recency_route = [id_by_hash[entry_hash(agent, entry[0])] for _, entry in positioned]

    def cosine(a: list[float], b: list[float]) -> float:
        dot = norm_a = norm_b = 0.0
        for x, y in zip(a, b, strict=True):
            dot += x * y
            norm_a += x * x
            norm_b += y * y
        return 0.0 if norm_a <= 0 or norm_b <= 0 else dot / (norm_a**0.5 * norm_b**0.5)

    semantic = [(id_by_hash[h], cosine(query_vector, v)) for h, v in rows if h in id_by_hash]
    semantic_route = [i for i, _ in sorted(semantic, key=lambda c: -c[1])]
    scores: dict[int, float] = {}
    for weight, route in zip(weights, (semantic_route, keyword_route, recency_route), strict=True):
        for rank, entry_id in enumerate(route):
            contribution = weight / (60 + rank + 1)
            scores[entry_id] = (
                scores[entry_id] + contribution if entry_id in scores else contribution
            )
    fused = sorted(scores.items(), key=lambda item: -item[1])[:top_k]
    return [content_by_id[entry_id] for entry_id, _ in fused]


def upstream_time(line: str) -> str:
    match = re.match(r"- \[(\d{4}-\d{2}-\d{2} \d{2}:\d{2})(:\d{2})?\]", line)
    return match[1] + (match[2] or ":00") if match else ""


# Upstream's contract -----------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_without_an_embedder_the_upstream_profile_is_upstreams_keyword_recall(
    workspace: Workspace, backend: str
) -> None:
    settings = settings_for(backend, {}, profile="upstream")
    service = MemoryService.open(workspace, settings, Clock())
    for index in range(30):
        service.save("ops", f"note {index} about deploys", "archival")
    found = service.recall("ops", "DEPLOY")
    assert found.mode == "keyword" and found.semantic == "off" and found.index is None
    assert [e.content for e in found.entries] == [f"note {i} about deploys" for i in range(30)]
    assert service.engine is None and not service.embeds
    assert vector_rows(workspace, "ops") == []


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("top_k", [20, 1000])
def test_upstreams_ranking_is_reachable_hit_for_hit(
    workspace: Workspace, backend: str, top_k: int
) -> None:
    settings = settings_for(backend, profile="upstream", top_k=top_k)
    clock = Clock()
    service = MemoryService.open(workspace, settings, clock)
    texts = corpus(60)
    fill(service, "ops", texts, clock)
    if backend == "markdown":  # lines upstream reads too: no time, no seconds
        path = workspace.memory_file("ops")
        with path.open("a", encoding="utf-8") as handle:
            handle.write("- hand-written deploy note\n- [2026-07-01 09:05] cat lunch\n")
    assert service.sync_index("ops").pending == 0
    rows = [
        (row["entry_hash"], decode(row["embedding"]).tolist())
        for row in vector_rows(workspace, "ops")
    ]
    prepared = service.engine.prepare("ops")
    lines = list(prepared.corpus.texts)
    times = [upstream_time(t) for t in lines]
    if backend == "sqlite":
        times = [e.time or "" for e in prepared.corpus.entries]
    for query in ("deploy", "cat lunch", "window friday", "zzz", "a"):
        ours = [hit.entry for hit in service.recall("ops", query).hits]
        keyword_lines = [t for t in lines if query.lower() in t.lower()]
        theirs = upstream_recall(
            "ops",
            list(zip(lines, times, strict=True)),
            keyword_lines,
            rows,
            mock_vector(query).tolist(),
            (1.0, 1.0, 1.0),
            top_k,
        )
        if backend == "markdown":
            assert [entry.line for entry in ours] == theirs, query
        else:
            assert [entry.content for entry in ours] == theirs, query


@pytest.mark.parametrize("backend", BACKENDS)
def test_index_rows_are_upstreams(workspace: Workspace, backend: str) -> None:
    clock = Clock()
    service = MemoryService.open(workspace, settings_for(backend), clock)
    service.save("ops", "deploy window is friday", "archival")
    service.save("ops", "core is never embedded", "core")
    status = service.sync_index("ops")
    assert (status.entries, status.indexed, status.model, status.dim) == (
        1,
        1,
        "mock/deterministic",
        64,
    )
    (row,) = vector_rows(workspace, "ops")
    text = (
        "- [2026-07-01 09:00:00] deploy window is friday"
        if backend == "markdown"
        else ("deploy window is friday")
    )
    assert row["content"] == text  # the text upstream hashes: the line; the content column
    assert row["entry_hash"] == entry_hash("ops", text)
    assert row["embedding"] == encode(mock_vector(text)) and row["dim"] == 64
    assert row["embedding_model"] == "mock/deterministic"
    assert row["entry_time"] == int(datetime(2026, 7, 1, 9, 0).timestamp() * 1000)
    assert isinstance(row["created_at"], int) and row["created_at"] > 1_700_000_000_000
    with sqlite3.connect(workspace.db_path) as connection:
        (ddl,) = connection.execute(
            "SELECT sql FROM sqlite_master WHERE name = 'memory_vectors'"
        ).fetchone()
    assert "UNIQUE (agent_name, entry_hash)" in ddl


class CountingMock(MockEmbedder):
    def __init__(self) -> None:
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str], kind: str = "passage") -> list[np.ndarray]:
        self.texts += texts
        return super().embed(texts)


def test_rows_written_the_upstream_way_are_used(workspace: Workspace) -> None:
    make_agent(workspace, "ops")
    workspace.memory_file("ops").write_text(f"{CORE_HEADER}\n{ARCHIVAL_HEADER}\nhello\n")
    with sqlite3.connect(workspace.db_path) as connection:  # as upstream's JPA writes a row
        connection.execute(
            "CREATE TABLE IF NOT EXISTS memory_vectors (id INTEGER PRIMARY KEY AUTOINCREMENT,"
            " entry_hash VARCHAR(64) NOT NULL, agent_name VARCHAR(128) NOT NULL, content TEXT"
            " NOT NULL, embedding BLOB NOT NULL, dim INTEGER NOT NULL, embedding_model"
            " VARCHAR(128) NOT NULL, entry_time TIMESTAMP, created_at TIMESTAMP NOT NULL,"
            " UNIQUE (agent_name, entry_hash))"
        )
        connection.execute(
            "INSERT INTO memory_vectors (entry_hash, agent_name, content, embedding, dim,"
            " embedding_model, entry_time, created_at) VALUES (?, 'ops', 'hello', ?, 64,"
            " 'mock/deterministic', NULL, 1785000000000)",
            (entry_hash("ops", "hello"), bytes.fromhex(JAVA_MOCK_HELLO)),
        )
    service = MemoryService.open(workspace, settings_for("markdown", min_similarity=-1))
    embedder = CountingMock()
    service.engine.embedder = embedder
    found = service.recall("ops", "hello")
    assert embedder.texts == ["hello"]  # the query only: the entry's vector was upstream's
    assert found.semantic == "used" and found.index.indexed == 1
    assert found.hits[0].routes["semantic"].score == pytest.approx(1.0)


def test_vectors_of_another_model_are_ignored_and_rebuilt(workspace: Workspace) -> None:
    service = MemoryService.open(workspace, settings_for("markdown"), Clock())
    service.save("ops", "deploy window is friday", "archival")
    line = service.snapshot("ops").archival[0].line
    assert service.index_status("ops").indexed == 0
    with sqlite3.connect(workspace.db_path) as connection:
        connection.execute(
            "INSERT INTO memory_vectors (entry_hash, agent_name, content, embedding, dim,"
            " embedding_model, entry_time, created_at) VALUES (?, 'ops', ?, ?, 3,"
            " 'openai/other-model', NULL, 0)",
            (entry_hash("ops", line), line, encode(np.ones(3, np.float32))),
        )
    assert service.index_status("ops").indexed == 0
    assert service.sync_index("ops").indexed == 1
    (row,) = vector_rows(workspace, "ops")
    assert row["embedding_model"] == "mock/deterministic" and row["dim"] == 64


# Better than upstream ------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_nothing_found_exists(workspace: Workspace, backend: str) -> None:
    clock = Clock()
    service = MemoryService.open(workspace, settings_for(backend), clock)
    fill(service, "ops", corpus(40), clock)
    assert service.recall("ops", "kubernetes").hits == []
    upstreams = MemoryService.open(workspace, settings_for(backend, profile="upstream"))
    assert len(upstreams.recall("ops", "kubernetes").hits) == 20  # upstream: always 20


@pytest.mark.parametrize("backend", BACKENDS)
def test_words_in_any_order_and_cjk_without_an_embedder(workspace: Workspace, backend: str) -> None:
    service = MemoryService.open(workspace, settings_for(backend, {}, mode="hybrid"), Clock())
    for text in [
        "Friday is when the deploy window opens",
        "window cleaning on monday",
        "部署窗口在周五下午两点",
        "窗口清洁",
        "the deploy went fine",
    ]:
        service.save("ops", text, "archival")
    found = service.recall("ops", "deploy window friday")
    assert found.mode == "hybrid" and found.semantic == "off"
    # Every entry sharing a word is a hit; the one holding all three comes first.
    assert found.entries[0].content == "Friday is when the deploy window opens"
    assert {e.content for e in found.entries} == {
        "Friday is when the deploy window opens",
        "window cleaning on monday",
        "the deploy went fine",
    }
    assert found.hits[0].routes.keys() == {"lexical"}  # recency only breaks ties
    assert [e.content for e in service.recall("ops", "窗口部署").entries] == [
        "部署窗口在周五下午两点",
        "窗口清洁",
    ]
    keyword = service.recall("ops", "deploy")  # keyword and lexical both; best first
    assert {e.content for e in keyword.entries} == {
        "Friday is when the deploy window opens",
        "the deploy went fine",
    }
    assert keyword.hits[0].routes["keyword"].rank == 1


def test_outside_edits_are_indexed_and_removed_lines_leave(workspace: Workspace) -> None:
    make_agent(workspace, "ops")
    path = workspace.memory_file("ops")
    path.write_text(f"{CORE_HEADER}\n- [2026-07-01 09:00:00] core\n{ARCHIVAL_HEADER}\n")
    service = MemoryService.open(workspace, settings_for("markdown"))
    with path.open("a", encoding="utf-8") as editor:  # upstream, an editor, another program
        editor.write("- [2026-07-01 09:01:00] written by hand\n")
    found = service.recall("ops", "hand")  # a recall that finds it missing indexes it
    assert found.index.indexed == 1 and len(vector_rows(workspace, "ops")) == 1
    path.write_text(
        f"{CORE_HEADER}\n{ARCHIVAL_HEADER}\n- [2026-07-01 09:02:00] the only one left\n"
    )
    status = service.sync_index("ops")
    assert (status.entries, status.indexed) == (1, 1)
    (row,) = vector_rows(workspace, "ops")
    assert row["content"] == "- [2026-07-01 09:02:00] the only one left"


def test_a_recall_indexes_a_few_and_leaves_the_rest_to_the_indexer(
    workspace: Workspace,
) -> None:
    make_agent(workspace, "ops")
    lines = "".join(f"- [2026-07-01 09:{i // 60:02d}:{i % 60:02d}] entry {i}\n" for i in range(100))
    workspace.memory_file("ops").write_text(f"{CORE_HEADER}\n{ARCHIVAL_HEADER}\n{lines}")
    service = MemoryService.open(workspace, settings_for("markdown"))
    found = service.recall("ops", "entry 99")
    assert (found.index.indexed, found.index.pending) == (64, 36)
    indexed = {row["content"] for row in vector_rows(workspace, "ops")}
    assert "- [2026-07-01 09:01:39] entry 99" in indexed  # newest first
    assert "- [2026-07-01 09:00:00] entry 0" not in indexed


def test_global_memory_keeps_its_vectors(workspace: Workspace) -> None:
    service = MemoryService.open(workspace, settings_for("markdown"), Clock())
    service.save(None, "shared glossary lives in confluence", "archival")
    service.save("ops", "ops note", "archival")
    for _ in range(2):
        service.sync_index(None)
        service.sync_index("ops")
    assert [row["content"] for row in vector_rows(workspace, "__global__")] == [
        "- [2026-07-01 09:00:00] shared glossary lives in confluence"
    ]
    assert service.recall(None, "glossary").index.indexed == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_live_index_catches_an_outside_write(workspace: Workspace, backend: str) -> None:
    service = MemoryService.open(workspace, settings_for(backend), Clock())
    service.save("ops", "first", "archival")
    other = MemoryService.open(workspace, settings_for(backend, {}), Clock())  # another program
    reported: list[tuple[str | None, int]] = []
    keeper = IndexKeeper(
        service.engine,
        lambda: ["ops"],
        lambda agent, status: reported.append((agent, status.indexed)),
        interval=0.05,
    )
    thread = keeper.start()
    try:
        deadline = time.monotonic() + 10
        while ("ops", 1) not in reported:
            assert time.monotonic() < deadline, "the first entry was never indexed"
            time.sleep(0.01)
        written = time.monotonic()
        other.save("ops", "written by someone else", "archival")
        while ("ops", 2) not in reported:
            assert time.monotonic() < deadline, "the outside write was never indexed"
            time.sleep(0.01)
        assert time.monotonic() - written < 2.0
    finally:
        keeper.stop()
        thread.join(timeout=10)
    assert len(vector_rows(workspace, "ops")) == 2


# The OpenAI-compatible embedder, through the SDK ------------------------------------------


def embedding_settings(url: str, backend: str = "markdown", **recall: Any) -> Settings:
    return settings_for(
        backend,
        {"provider": "openai", "base_url": url, "model": "concepts", "batch_size": 2},
        **recall,
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_meaning_finds_what_no_word_matches(workspace: Workspace, backend: str) -> None:
    with ScriptedLLM([]) as server:
        service = MemoryService.open(workspace, embedding_settings(server.base_url, backend))
        for text in [
            "payments v2 rollout finished at 15:10",
            "the cat sleeps on the keyboard",
            "postgres vacuum runs nightly",
            "上线流程改为分批放量",
            "lunch is at noon",
        ]:
            service.save("ops", text, "archival")
        found = service.recall("ops", "when is the next release?")
        assert found.semantic == "used"
        assert [e.content for e in found.entries] == [
            "上线流程改为分批放量",
            "payments v2 rollout finished at 15:10",
        ] or [e.content for e in found.entries] == [
            "payments v2 rollout finished at 15:10",
            "上线流程改为分批放量",
        ]
        assert all(hit.routes.keys() == {"semantic"} for hit in found.hits)  # no word shared
        assert found.index.model == "openai/concepts" and found.index.dim == 13
        batches = [len(request["input"]) for request in server.embeddings[1:]]
        assert batches and max(batches) <= 2  # embedding.batch_size
        assert {row["embedding_model"] for row in vector_rows(workspace, "ops")} == {
            "openai/concepts"
        }


def test_the_endpoint_going_down_falls_back_with_upstreams_notice(workspace: Workspace) -> None:
    with ScriptedLLM([]) as server:
        settings = embedding_settings(server.base_url)
        service = MemoryService.open(workspace, settings)
        service.save("ops", "deploy window is friday", "archival")
        assert service.recall("ops", "deploy").semantic == "used"
    service.engine.retry_after = 0
    found = service.recall("ops", "deploy window")  # a new query: the endpoint is asked
    assert found.semantic == "failed" and found.notice == DEGRADE_NOTICE
    assert "Cannot reach the embedding endpoint" in found.problem
    assert [e.content for e in found.entries] == ["deploy window is friday"]
    tool = RecallMemory(service)
    token = current_agent.set("ops")
    try:
        result = tool.run(tool.Input(keyword="friday window"))
    finally:
        current_agent.reset(token)
    assert result["notice"] == DEGRADE_NOTICE and result["count"] == 1
    (workspace.root / "config.toml").write_text(
        f'[embedding]\nprovider = "openai"\nbase_url = "{server.base_url}"\nmodel = "concepts"\n'
    )
    cli = run_oryxtui("memory", "recall", "--root", str(workspace.root), "--agent", "ops", "deploy")
    assert cli.returncode == 0
    assert cli.stdout.endswith("deploy window is friday\n")
    assert DEGRADE_NOTICE in cli.stderr and "Cannot reach" in cli.stderr
    root = str(workspace.root)
    assert run_oryxtui("memory", "save", "--root", root, "--agent", "ops", "new").returncode == 0
    index = run_oryxtui("memory", "index", "--root", root, "--agent", "ops")
    assert index.returncode == 1 and "Cannot reach" in index.stderr
    assert "1/2 entries" in index.stdout and "1 pending" in index.stdout


def test_cli_explain_and_index(workspace: Workspace) -> None:
    make_agent(workspace, "ops")
    (workspace.root / "config.toml").write_text('[embedding]\nprovider = "mock"\n')
    root = str(workspace.root)
    for text in ["deploy window is friday", "cat", "friday deploy retro"]:
        assert run_oryxtui("memory", "save", "--root", root, "--agent", "ops", text).returncode == 0
    index = run_oryxtui("memory", "index", "--root", root, "--agent", "ops", "--json")
    assert index.returncode == 0, index.stderr
    assert json.loads(index.stdout) == {
        "agent": "ops",
        "rebuilt": False,
        "entries": 3,
        "indexed": 3,
        "pending": 0,
        "model": "mock/deterministic",
        "dimensions": 64,
        "meaningless": True,
        "problem": None,
    }
    every = json.loads(run_oryxtui("memory", "index", "--root", root, "--all", "--json").stdout)
    assert [(r["agent"], r["indexed"]) for r in every] == [(None, 0), ("ops", 3)]
    shown = run_oryxtui("memory", "index", "--root", root, "--agent", "ops", "--rebuild")
    assert "3/3 entries, model mock/deterministic (mock: meaningless" in shown.stdout
    explained = run_oryxtui(
        "memory", "recall", "--root", root, "--agent", "ops", "--explain", "deploy friday"
    )
    lines = explained.stdout.splitlines()
    assert len(lines) == 4  # two hits, each with its explanation
    assert {lines[0][24:], lines[2][24:]} == {"deploy window is friday", "friday deploy retro"}
    assert re.match(r"    score \d+\.\d+ · ", lines[1]) and "lexical #" in lines[1]
    assert "semantic #" in lines[3]
    data = json.loads(
        run_oryxtui(
            "memory", "recall", "--root", root, "--agent", "ops", "--json", "--explain", "cat"
        ).stdout
    )
    assert data["mode"] == "hybrid" and data["index"]["indexed"] == 3
    # The mock's vectors are hashes of whole lines, times included: another entry is now and
    # then near enough by chance (about 1 run in 100) — by meaning only, and after "cat".
    hit, *by_chance = data["hits"]
    assert hit["content"] == "cat" and hit["routes"]["keyword"] == {"rank": 1, "score": None}
    assert hit["score"] > 0 and "semantic" in hit["routes"]
    assert all("keyword" not in other["routes"] for other in by_chance)


def test_index_without_an_embedder_says_how_to_set_one(workspace: Workspace) -> None:
    done = run_oryxtui("memory", "index", "--root", str(workspace.root))
    assert done.returncode == 2 and "[embedding] provider" in done.stderr


def test_concurrent_recalls_and_syncs_agree(workspace: Workspace) -> None:
    clock = Clock()
    service = MemoryService.open(workspace, settings_for("markdown"), clock)
    fill(service, "ops", corpus(200), clock)
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(5):
                service.recall("ops", "deploy window")
                service.sync_index("ops")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors
    hashes = [row["entry_hash"] for row in vector_rows(workspace, "ops")]
    assert len(hashes) == len(set(hashes)) == service.index_status("ops").entries > 150
