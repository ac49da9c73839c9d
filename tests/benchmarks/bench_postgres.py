"""The shared database (issue 25) on a real PostgreSQL 16 + pgvector started here (pgserver).
Prints JSON.

Run: python tests/benchmarks/bench_postgres.py

- saves/s with 8 writer processes: one workspace's oryxos.db (sqlite backend) vs 8 "hosts"
  (their own workspace folders) on one PostgreSQL, measured in the same run;
- a save in one process → shown on another process's dashboard (p50/p95), announced by
  LISTEN/NOTIFY; baseline: the same dashboard seeing a MEMORY.md change through its file
  watcher;
- `db migrate` of 100,000 memory entries from an oryxos.db; baseline: reading them;
- `db migrate` of a lived workspace: 100,000 entries in MEMORY.md files with 10,000 history
  records, moved with their history; baseline: reading the files and histories.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from timing import summarize

from tests.postgres_server import PostgresServer

WRITERS = 8
SAVES = 150
ROUNDS = 3
LIVE_SAMPLES = 30
MIGRATE_ENTRIES = 100_000

WRITER = """
import sys, time
from oryxtui.config import Settings
from oryxtui.memory.service import MemoryService
from oryxtui.workspace import init_workspace
root, url, name = sys.argv[1], sys.argv[2], sys.argv[3]
count, start = int(sys.argv[4]), float(sys.argv[5])
data = {"memory": {"backend": "sqlite"}}
if url != "-":
    data["database"] = {"url": url}
service = MemoryService.open(init_workspace(root), Settings.model_validate(data))
service.save("warm", "first", "archival")  # connections and imports before the clock
while time.time() < start:
    time.sleep(0.001)
for i in range(count):
    service.save("shared", f"{name} note {i}", "archival")
print(time.time())
"""


def _writers(folder: Path, url: str | None, shared_root: bool) -> float:
    """Saves per second of WRITERS processes saving SAVES entries each, started together."""
    script = folder / "writer.py"
    script.write_text(WRITER)
    start = time.time() + 3.0
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                str(script),
                str(folder / ("one" if shared_root else f"host{i}")),
                url or "-",
                f"w{i}",
                str(SAVES),
                str(start),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(WRITERS)
    ]
    ends = [float(p.communicate(timeout=600)[0].split()[-1]) for p in processes]
    return WRITERS * SAVES / (max(ends) - start)


def saves_per_second(server: PostgresServer) -> dict[str, object]:
    sqlite_rates, postgres_rates = [], []
    for _ in range(ROUNDS):
        with tempfile.TemporaryDirectory() as folder:
            sqlite_rates.append(_writers(Path(folder), None, shared_root=True))
        with tempfile.TemporaryDirectory() as folder:
            url = _database(server)
            postgres_rates.append(_writers(Path(folder), url, shared_root=False))
    return {
        "writers": WRITERS,
        "saves_each": SAVES,
        "sqlite_saves_per_s_median": round(statistics.median(sqlite_rates), 1),
        "postgres_saves_per_s_median": round(statistics.median(postgres_rates), 1),
    }


def _database(server: PostgresServer) -> str:
    from oryxtui.config import DatabaseSettings
    from oryxtui.postgres import Postgres

    url = server.database()
    database = Postgres(DatabaseSettings(url=url))
    database.upgrade()
    database.close()
    return url


SAVER = """
import sys, time
from oryxtui.config import Settings
from oryxtui.memory.service import MemoryService
from oryxtui.workspace import init_workspace
root, url, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = {"memory": {"backend": "database"}, "database": {"url": url}}
service = MemoryService.open(init_workspace(root), Settings.model_validate(data))
for i in range(count):
    line = sys.stdin.readline()  # the dashboard is ready for the next one
    service.save("alpha", f"live note {i}", "archival")
    print(time.time(), flush=True)
"""


async def live_latency(server: PostgresServer) -> dict[str, object]:
    """Saves in another process until the dashboard shows each (ms from commit to screen)."""
    from oryxtui.config import Settings
    from oryxtui.workspace import init_workspace
    from tests.dashboard_support import archival_pane, make_app
    from tests.support import make_agent

    url = _database(server)
    with tempfile.TemporaryDirectory() as folder:
        workspace = init_workspace(Path(folder) / "viewer")
        make_agent(workspace, "alpha")
        settings = Settings.model_validate(
            {"memory": {"backend": "database"}, "database": {"url": url}}
        )
        script = Path(folder) / "saver.py"
        script.write_text(SAVER)
        saver = subprocess.Popen(
            [sys.executable, str(script), str(Path(folder) / "other"), url, str(LIVE_SAMPLES)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert saver.stdin is not None and saver.stdout is not None
        samples = []
        app = make_app(workspace, settings)
        async with app.run_test(size=(120, 40)) as pilot:
            while archival_pane(app).view.row_count != 0 or app.dashboard.shown != "alpha":
                await pilot.pause(0.01)
            await pilot.pause(0.5)
            for i in range(LIVE_SAMPLES):
                saver.stdin.write("go\n")
                saver.stdin.flush()
                committed = float(await asyncio.to_thread(saver.stdout.readline))
                while archival_pane(app).view.row_count < i + 1:
                    await pilot.pause(0.002)
                samples.append((time.time() - committed) * 1000)
        saver.wait(timeout=60)
    return {"save_to_screen": summarize(samples)}


def migrate_figures(server: PostgresServer) -> dict[str, object]:
    from oryxtui.config import DatabaseSettings
    from oryxtui.database import connect
    from oryxtui.memory.migration import migrate
    from oryxtui.postgres import Postgres
    from oryxtui.workspace import init_workspace

    with tempfile.TemporaryDirectory() as folder:
        workspace = init_workspace(Path(folder) / "from")
        connection = connect(workspace.db_path)
        connection.execute("BEGIN")
        connection.executemany(
            "INSERT INTO memory_entries (agent_name, scope, content, created_at)"
            " VALUES (?, 'ARCHIVAL', ?, ?)",
            (
                (f"agent{i % 10}", f"entry {i} about deploys and tea", "2026-11-01 09:00:00")
                for i in range(MIGRATE_ENTRIES)
            ),
        )
        connection.execute("COMMIT")
        connection.close()
        started = time.perf_counter()
        with sqlite3.connect(workspace.db_path) as source:
            read = len(source.execute("SELECT * FROM memory_entries").fetchall())
        reading = time.perf_counter() - started
        database = Postgres(DatabaseSettings(url=server.database()))
        started = time.perf_counter()
        done = migrate(workspace, database, memory_files=False)
        first = time.perf_counter() - started
        started = time.perf_counter()
        again = migrate(workspace, database, memory_files=False)
        second = time.perf_counter() - started
        database.close()
    assert read == MIGRATE_ENTRIES == done.copied["memory_entries"]
    assert again.copied["memory_entries"] == 0
    return {
        "entries": MIGRATE_ENTRIES,
        "migrate_s": round(first, 2),
        "migrate_again_s": round(second, 2),
        "baseline_read_s": round(reading, 3),
    }


LIVED_AGENTS = 10
LIVED_SAVES = 1_000  # per agent: 10,000 history records in all


def migrate_lived(server: PostgresServer) -> dict[str, object]:
    """`db migrate` of a workspace that has lived: 10 agents' MEMORY.md files, 100,000 entries
    with 10,000 single saves among them (each a history record) and one import each; the
    history moves with them. Baseline: reading the source — every file and its history."""
    from oryxtui.config import DatabaseSettings, Settings
    from oryxtui.memory import MemoryService
    from oryxtui.memory.backends.markdown.store import MarkdownMemoryStore
    from oryxtui.memory.format import MemoryEntry, Scope, entry_from_line, entry_line
    from oryxtui.memory.migration import migrate
    from oryxtui.postgres import Postgres
    from oryxtui.workspace import init_workspace
    from tests.support import make_agent

    per_agent = MIGRATE_ENTRIES // LIVED_AGENTS - LIVED_SAVES
    with tempfile.TemporaryDirectory() as folder:
        workspace = init_workspace(Path(folder) / "lived")
        service = MemoryService.open(workspace, Settings())
        for number in range(LIVED_AGENTS):
            agent = f"agent{number}"
            make_agent(workspace, agent)
            bulk: list[MemoryEntry] = [
                entry_from_line(
                    entry_line("2026-11-01 09:00:00", f"{agent} note {i} about deploys and tea"),
                    Scope.ARCHIVAL,
                )
                for i in range(per_agent)
            ]
            service.import_entries(agent, bulk, "the benchmark")
            for i in range(LIVED_SAVES):
                service.save(agent, f"{agent} saved fact {i}", "archival")
        started = time.perf_counter()
        markdown = MarkdownMemoryStore(workspace)
        entries = records = 0
        for number in range(LIVED_AGENTS):
            read = markdown.read(f"agent{number}")
            entries += len(read.core) + len(read.archival)
            records += len(markdown.changes(f"agent{number}").records)
        reading = time.perf_counter() - started
        database = Postgres(DatabaseSettings(url=server.database()))
        started = time.perf_counter()
        done = migrate(workspace, database, memory_files=True)
        first = time.perf_counter() - started
        started = time.perf_counter()
        again = migrate(workspace, database, memory_files=True)
        second = time.perf_counter() - started
        database.close()
    assert entries == MIGRATE_ENTRIES == done.copied["MEMORY.md"]
    assert sum(done.carried.values()) == records and again.copied.get("MEMORY.md", 0) == 0
    return {
        "entries": entries,
        "history_records": records,
        "migrate_s": round(first, 2),
        "migrate_again_s": round(second, 2),
        "baseline_read_s": round(reading, 3),
        "target_s": 30,
    }


RECALLER = """
import json, sys, time
from pathlib import Path
from bench_recall import QUERIES, WideEmbedder, rss_mb
from timing import summarize
from oryxtui.config import Settings
from oryxtui.memory import MemoryService
from oryxtui.workspace import init_workspace

settings = Settings.model_validate({
    "memory": {"backend": "database"},
    "database": {"url": sys.argv[2]},
    "embedding": {"provider": "mock"},
})
service = MemoryService.open(init_workspace(sys.argv[1]), settings)
service.engine.embedder = WideEmbedder()
started = time.perf_counter()
found = service.recall("ops", "warm-up")
first = (time.perf_counter() - started) * 1000
samples = []
for _ in range(6):
    for query in QUERIES:
        began = time.perf_counter()
        found = service.recall("ops", query)
        samples.append((time.perf_counter() - began) * 1000)
assert found.semantic == "used" and found.index.pending == 0, found.index
print(json.dumps({"first_recall_ms": round(first, 1), "hybrid_recall_warm": summarize(samples),
                  "resident_mb": round(rss_mb(), 1)}))
"""


def recall_100k(server: PostgresServer) -> dict[str, object]:
    """Hybrid recall over 100,000 entries × 768 dimensions with the vectors in pgvector, in a
    process of its own (its resident memory is the figure; the in-process matrix held them all)."""
    import numpy as np
    import psycopg
    from bench_recall import WideEmbedder, _texts

    from oryxtui.config import DatabaseSettings
    from oryxtui.memory.recall.pgvector import vector_text
    from oryxtui.memory.recall.vectors import encode, entry_hash
    from oryxtui.postgres import Postgres

    url = _database(server)
    texts = _texts(100_000, seed=5)
    embedder = WideEmbedder()
    with psycopg.connect(url, autocommit=True) as connection:
        with connection.cursor().copy(
            "COPY memory_entries (agent_name, scope, content, created_at) FROM STDIN"
        ) as copy:
            for text in texts:
                copy.write_row(("ops", "ARCHIVAL", text, "2026-11-01 09:00:00+00"))
        started = time.perf_counter()
        with connection.cursor().copy(
            "COPY memory_vectors (entry_hash, agent_name, content, embedding, dim,"
            " embedding_model, created_at, embedding_vector) FROM STDIN"
        ) as copy:
            for start in range(0, len(texts), 5000):
                part = texts[start : start + 5000]
                for text, vector in zip(part, embedder.embed(part), strict=True):
                    copy.write_row(
                        (
                            entry_hash("ops", text),
                            "ops",
                            text,
                            encode(np.asarray(vector)),
                            768,
                            embedder.model_id,
                            "2026-11-01 09:00:00+00",
                            vector_text(vector),
                        )
                    )
        load = time.perf_counter() - started
        started = time.perf_counter()
        connection.execute("SET maintenance_work_mem = '1GB'")
        database = Postgres(DatabaseSettings(url=url))
        from oryxtui.memory.recall.pgvector import PgVectorTable

        PgVectorTable(database)._ensure_index(768)
        database.close()
        build = time.perf_counter() - started
    with tempfile.TemporaryDirectory() as folder:
        done = subprocess.run(
            [sys.executable, "-c", RECALLER, str(Path(folder) / "host"), url],
            capture_output=True,
            text=True,
            cwd=Path(__file__).parent,
            timeout=900,
        )
    if done.returncode:
        return {"failed": done.stderr.strip().splitlines()[-3:]}
    return {
        "entries": len(texts),
        "dimensions": 768,
        "load_vectors_s": round(load, 1),
        "build_hnsw_s": round(build, 1),
        **json.loads(done.stdout.strip().splitlines()[-1]),
    }


def run() -> dict[str, object]:
    server = PostgresServer()
    try:
        return {
            "saves": saves_per_second(server),
            "live": asyncio.run(live_latency(server)),
            "migrate": migrate_figures(server),
            "migrate_lived": migrate_lived(server),
            "recall": recall_100k(server),
        }
    finally:
        server.stop()


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
