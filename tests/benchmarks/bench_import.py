"""Import benchmark (issue 22): `oryxtui memory import` of 100,000 entries, for each store, and
how long another writer waits for the agent's lock meanwhile. Prints JSON.

Run: python tests/benchmarks/bench_import.py. Baselines measured in the same run: reading and
checking the export alone (what any import pays before it writes), and a bare atomic write of
the resulting MEMORY.md (temp file + fsync + replace).
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench_memory import _bare_atomic_write
from timing import summarize, time_calls

from oryxtui.cli import main
from oryxtui.config import Settings
from oryxtui.memory import MemoryService
from oryxtui.memory.transfer import read_export
from oryxtui.workspace import init_workspace

ENTRIES = 100_000
ROUNDS = 3


def _export(entries: int) -> str:
    return "".join(
        json.dumps(
            {
                "scope": "archival",
                "time": f"2026-01-{1 + i % 28:02d} {i % 24:02d}:{i % 60:02d}:00",
                "content": f"imported entry {i} about deploys, incidents and tea",
            }
        )
        + "\n"
        for i in range(entries)
    )


def _import(root: Path, dump: Path, backend: str) -> tuple[float, list[float], list[float]]:
    """Seconds the import took, how long (ms) each save by another thread took meanwhile, and
    how long the same save takes after the import (the baseline for those)."""
    workspace = init_workspace(root)
    (workspace.root / "config.toml").write_text(f'[memory]\nbackend = "{backend}"\n')
    workspace.create_agent("ops")
    other = MemoryService.open(workspace, Settings.model_validate({"memory": {"backend": backend}}))
    other.save("ops", "before the import", "archival")
    waits: list[float] = []
    done = threading.Event()

    def writer() -> None:
        while not done.is_set():
            started = time.perf_counter()
            other.save("ops", f"saved beside the import {len(waits)}", "archival")
            waits.append((time.perf_counter() - started) * 1000)
            time.sleep(0.005)

    thread = threading.Thread(target=writer)
    thread.start()
    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(["memory", "import", str(dump), "--root", str(root), "--agent", "ops"])
    took = time.perf_counter() - started
    done.set()
    thread.join()
    assert code == 0
    after = [
        time_calls(lambda: other.save("ops", "a save after the import", "archival"), 1)["median_ms"]
        for _ in range(10)
    ]
    return took, waits, after


def run() -> dict[str, object]:
    report: dict[str, object] = {"entries": ENTRIES}
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        dump = base / "export.jsonl"
        dump.write_text(_export(ENTRIES))
        text = dump.read_text()
        reads = []
        for _ in range(ROUNDS):
            started = time.perf_counter()
            read_export(text, "bench")
            reads.append(time.perf_counter() - started)
        report["baseline_read_and_check_s"] = round(sorted(reads)[len(reads) // 2], 3)
        for backend in ("markdown", "sqlite"):
            times: list[float] = []
            waits: list[float] = []
            alone: list[float] = []
            for round_ in range(ROUNDS):
                took, waited, after = _import(base / f"{backend}{round_}", dump, backend)
                times.append(took)
                waits += waited
                alone += after
            report[backend] = {
                "import_s_median": round(sorted(times)[len(times) // 2], 3),
                "another_save_during_the_import": summarize(waits) if waits else None,
                "baseline_the_same_save_after_it": summarize(alone),
            }
        memory = (base / "markdown0" / ".oryxos" / "agents" / "ops" / "MEMORY.md").read_bytes()
        bare = []
        for _ in range(ROUNDS):
            started = time.perf_counter()
            _bare_atomic_write(base / "bare.md", memory)
            bare.append(time.perf_counter() - started)
        report["baseline_bare_atomic_write_s"] = round(sorted(bare)[len(bare) // 2], 4)
        report["memory_bytes"] = len(memory)
    return report


if __name__ == "__main__":
    sys.stdout.write(json.dumps(run(), indent=2) + "\n")
