"""Ranked recall benchmarks. Prints JSON.

Run: python tests/benchmarks/bench_recall.py [--quick]

- hybrid recall, warm, with 10,000 archival entries and the 64-dimension mock embedder; and
  with 100,000 entries and 768-dimension vectors (the resident memory of the process holding
  that index is reported). Baseline in the same run: upstream's keyword recall over the same
  file (every hit, oldest first), which oryxtui still answers without an embedder.
- indexing 10,000 entries with the mock embedder (embed, write the rows, load them), and with
  the `local` and `onnx` providers (each model's first load included), then hybrid recall over
  them; the models index sentences (the self-made sets' chat turns and notes, each line with its
  own time), not the mock's made-up words, which a sentence model's tokenizer cuts into 3-4
  pieces each.
- the live index: an outside write (another process appending like upstream) until its vector
  is in `memory_vectors`, with the keeper `serve` and the dashboard run.

Upstream OryxOS measured, for its own engine (specs/015, not re-measured here): 10,000 mock
entries indexed in 11.3 s, one recall in 189 ms.
"""

from __future__ import annotations

import hashlib
import json
import resource
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from timing import summarize, time_calls

from oryxtui.config import Settings
from oryxtui.memory import MemoryService
from oryxtui.memory.format import ARCHIVAL_HEADER, CORE_HEADER
from oryxtui.memory.recall.keeper import IndexKeeper
from oryxtui.memory.recall.vectors import NewVector, agent_key
from oryxtui.workspace import Workspace, init_workspace

QUERIES = ["deploy window friday", "incident postmortem", "部署窗口", "database backup", "tea"]
VOCABULARY = [
    "deploy", "window", "friday", "incident", "postmortem", "database", "backup", "tea", "cat",
    "release", "rollback", "latency", "budget", "customer", "ticket", "pager", "migration",
    "schema", "index", "cache", "部署", "窗口", "故障", "发布", "数据库", "备份",
]  # fmt: skip


def _texts(count: int, seed: int = 11) -> list[str]:
    rng = np.random.default_rng(seed)
    filler = [f"w{n}" for n in range(3000)]
    texts = []
    for index in range(count):
        words = list(rng.choice(VOCABULARY, size=2)) + list(
            rng.choice(filler, size=int(rng.integers(6, 16)))
        )
        rng.shuffle(words)
        texts.append(f"note {index}: " + " ".join(words))
    return texts


def _write_memory(workspace: Workspace, agent: str, texts: Sequence[str]) -> Path:
    folder = workspace.agents_dir / agent
    folder.mkdir(parents=True, exist_ok=True)
    lines = [CORE_HEADER, "- [2026-07-01 09:00:00] core fact", ARCHIVAL_HEADER]
    lines += [
        f"- [2026-07-{1 + i // 86400 % 28:02d} {i // 3600 % 24:02d}:{i // 60 % 60:02d}:"
        f"{i % 60:02d}] {text}"
        for i, text in enumerate(texts)
    ]
    path = folder / "MEMORY.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


class WideEmbedder:
    """768 numbers per text, seeded by its hash: a stand-in for a real model's vectors."""

    model_id = "bench/wide-768"
    meaningless = True
    batch_size = 1024

    def embed(self, texts: Sequence[str], kind: str = "passage") -> list[np.ndarray]:
        vectors = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
            vectors.append(np.random.default_rng(seed).standard_normal(768).astype(np.float32))
        return vectors


def _service(workspace: Workspace, embedding: dict[str, object]) -> MemoryService:
    settings = Settings.model_validate({"embedding": embedding})
    return MemoryService.open(workspace, settings)


def bench_10k(root: Path) -> dict[str, object]:
    workspace = init_workspace(root / "ten")
    _write_memory(workspace, "ops", _texts(10_000))
    legacy = _service(workspace, {})
    legacy.recall("ops", "warm-up")
    keyword = time_calls(lambda: [legacy.recall("ops", q) for q in QUERIES], 20)
    indexing, samples = _index_then_recall(workspace, {"provider": "mock"})
    per_query_keyword = {k: v / len(QUERIES) for k, v in keyword.items() if k != "n"}
    return {
        "archival_entries": 10_000,
        "dimensions": 64,
        "index_mock_ms": round(indexing, 1),
        "hybrid_recall_warm": summarize(samples),
        "baseline_keyword_recall_warm": per_query_keyword,
    }


def _index_then_recall(
    workspace: Workspace, embedding: dict[str, object]
) -> tuple[float, list[float]]:
    """Milliseconds to open the store and index agent `ops` from nothing, then the
    milliseconds of each warm recall (20 rounds of QUERIES)."""
    started = time.perf_counter()
    service = _service(workspace, embedding)
    status = service.sync_index("ops")
    indexing = (time.perf_counter() - started) * 1000
    assert status is not None and status.pending == 0
    service.recall("ops", "warm-up")
    samples = []
    for _ in range(20):
        for query in QUERIES:
            began = time.perf_counter()
            service.recall("ops", query)
            samples.append((time.perf_counter() - began) * 1000)
    return indexing, samples


def bench_model(root: Path, provider: str) -> dict[str, object]:
    """An in-process model (the `local` or `onnx` extra): index 10,000 entries from nothing —
    the model's first load included — then recall warm. `local` reads the mock's made-up words
    (a word-vector model takes them whole); `onnx` reads sentences (`_sentences`: a sentence
    model's tokenizer would cut each made-up word into 3-4 pieces)."""
    workspace = init_workspace(root / provider)
    texts = _sentences(10_000) if provider == "onnx" else _texts(10_000)
    _write_memory(workspace, "ops", texts)
    indexing, samples = _index_then_recall(workspace, {"provider": provider})
    return {
        "archival_entries": 10_000,
        f"index_{provider}_ms": round(indexing, 1),
        "hybrid_recall_warm": summarize(samples),
    }


def _sentences(count: int) -> list[str]:
    """`count` lines of the self-made sets' chat turns and notes (66 characters at the median),
    each a distinct entry by its own time."""
    import bench_quality

    texts = [
        text
        for made in ("chats", "notes")
        for sample in bench_quality.load(None, made)
        for _, _, text in bench_quality.turns_of(sample)
    ]
    return [texts[i % len(texts)] for i in range(count)]


def bench_100k(root: Path) -> dict[str, object]:
    workspace = init_workspace(root / "hundred")
    texts = _texts(100_000, seed=5)
    _write_memory(workspace, "ops", texts)
    service = _service(workspace, {"provider": "mock"})
    engine = service.engine
    assert engine is not None
    engine.embedder = WideEmbedder()
    started = time.perf_counter()
    prepared = engine.prepare("ops")
    prepare_ms = (time.perf_counter() - started) * 1000
    embedder = WideEmbedder()
    started = time.perf_counter()
    for start in range(0, prepared.size, 5000):
        part = range(start, min(start + 5000, prepared.size))
        vectors = embedder.embed([prepared.texts[i] for i in part])
        engine.table.write(
            agent_key("ops"),
            embedder.model_id,
            [
                NewVector(prepared.hashes[i], prepared.texts[i], v, None)
                for i, v in zip(part, vectors, strict=True)
            ],
        )
    write_ms = (time.perf_counter() - started) * 1000
    started = time.perf_counter()
    service.recall("ops", "warm-up")
    first_ms = (time.perf_counter() - started) * 1000
    samples = []
    for _ in range(6):
        for query in QUERIES:
            began = time.perf_counter()
            found = service.recall("ops", query)
            samples.append((time.perf_counter() - began) * 1000)
    assert found.index is not None and found.index.pending == 0
    legacy = _service(workspace, {})
    legacy.recall("ops", "warm-up")
    keyword = time_calls(lambda: legacy.recall("ops", "deploy window"), 20)
    return {
        "archival_entries": 100_000,
        "dimensions": 768,
        "prepare_cold_ms": round(prepare_ms, 1),
        "write_rows_ms": round(write_ms, 1),
        "first_recall_loading_vectors_ms": round(first_ms, 1),
        "hybrid_recall_warm": summarize(samples),
        "baseline_keyword_recall_warm": keyword,
        "dashboard": _dashboard_with_index(workspace),
    }


DASHBOARD = """
import asyncio, json, sys, time
from pathlib import Path
from bench_recall import WideEmbedder, rss_mb
from oryxtui.config import Settings
from oryxtui.memory import MemoryService
from oryxtui.tui.app import OryxApp
from oryxtui.tui.widgets.memory_pane import ArchivalPane
from oryxtui.workspace import Workspace

workspace = Workspace(Path(sys.argv[1]))
settings = Settings.model_validate({"embedding": {"provider": "mock"}})
service = MemoryService.open(workspace, settings)
service.engine.embedder = WideEmbedder()
app = OryxApp(workspace, settings, service=service, user="bench")

async def main():
    async with app.run_test(size=(160, 45)) as pilot:
        started = time.monotonic()
        before = rss_mb()
        pane = app.dashboard.query_one(ArchivalPane)
        while "index 100,000/100,000" not in str(pane.border_subtitle):
            await pilot.pause(0.1)
        ready = time.monotonic() - started
        await pilot.pause(0.5)
        print(json.dumps({"resident_mb_before_the_index": round(before, 1),
                          "resident_mb_with_the_index": round(rss_mb(), 1),
                          "index_loaded_in_background_s": round(ready, 2)}))

asyncio.run(main())
"""


def _dashboard_with_index(workspace: Workspace) -> dict[str, object]:
    """The real dashboard (headless), in a process of its own, holding the index."""
    done = subprocess.run(
        [sys.executable, "-c", DASHBOARD, str(workspace.root)],
        capture_output=True,
        text=True,
        cwd=Path(__file__).parent,
        timeout=600,
    )
    if done.returncode:
        return {"failed": done.stderr.strip().splitlines()[-1:]}
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


APPEND = """
import os, sys, tempfile
path, line = sys.argv[1], sys.argv[2]
text = open(path, encoding="utf-8").read() + line + "\\n"
handle, temp = tempfile.mkstemp(dir=os.path.dirname(path), prefix="MEMORY", suffix=".tmp")
with os.fdopen(handle, "w", encoding="utf-8") as out:
    out.write(text)
os.replace(temp, path)
"""


def bench_live(root: Path, writes: int) -> dict[str, object]:
    workspace = init_workspace(root / "live")
    path = _write_memory(workspace, "ops", _texts(1000))
    service = _service(workspace, {"provider": "mock"})
    assert service.engine is not None
    service.sync_index("ops")
    keeper = IndexKeeper(service.engine, lambda: ["ops"])  # the default interval, as served
    thread = threading.Thread(target=keeper.run, daemon=True)
    thread.start()
    samples = []
    try:
        for index in range(writes):
            line = f"- [2026-08-01 10:00:{index:02d}] outside write {index}"
            written = time.perf_counter()
            subprocess.run([sys.executable, "-c", APPEND, str(path), line], check=True)
            digest = hashlib.sha256(f"ops|ARCHIVAL|{line}".encode()).hexdigest()
            deadline = time.monotonic() + 30
            while not _has_row(workspace, digest):
                if time.monotonic() > deadline:
                    raise RuntimeError("the live index missed an outside write")
                time.sleep(0.005)
            samples.append((time.perf_counter() - written) * 1000)
    finally:
        keeper.stop()
        thread.join(timeout=10)
    return {"outside_write_to_indexed": summarize(samples), "keeper_interval_ms": 500}


def _has_row(workspace: Workspace, digest: str) -> bool:
    with sqlite3.connect(workspace.db_path) as connection:
        row = connection.execute(
            "SELECT 1 FROM memory_vectors WHERE entry_hash = ?", (digest,)
        ).fetchone()
    return row is not None


def run(quick: bool = False) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        report: dict[str, object] = {
            "recall_10k_64d": bench_10k(root),
            "recall_10k_local": bench_model(root, "local"),
            "recall_10k_onnx": bench_model(root, "onnx"),
            "live_index": bench_live(root, 5 if quick else 15),
        }
        if not quick:
            report["recall_100k_768d"] = bench_100k(root)
    report["targets"] = {
        "hybrid_recall_10k_warm_median_ms": 20,
        "hybrid_recall_100k_768d_warm_median_ms": 150,
        "index_10k_mock_ms": 2000,
        "index_10k_local_ms": 10_000,
        "index_10k_onnx_ms": 30_000,
        "outside_write_to_indexed_ms": 2000,
    }
    report["upstream_measured"] = {"index_10k_mock_ms": 11_300, "recall_ms": 189}
    return report


if __name__ == "__main__":
    print(json.dumps(run(quick="--quick" in sys.argv), indent=2, ensure_ascii=False))
