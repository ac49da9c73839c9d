"""Memory-engine benchmarks: save latency, load + truncate, recall warm and cold. Prints JSON.

Run: python tests/benchmarks/bench_memory.py. Baselines measured in the same run: a bare atomic
write (temp file + fsync + replace, no lock, no parse) of the same file, and a plain
`str.lower()` scan over the same lines.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

from timing import time_calls

from oryxtui.config import Settings
from oryxtui.memory import MemoryService
from oryxtui.memory.document import parse
from oryxtui.memory.format import ARCHIVAL_HEADER, CORE_HEADER
from oryxtui.workspace import init_workspace


def _memory_text(target_bytes: int | None = None, entries: int | None = None) -> str:
    lines = [CORE_HEADER, "- [2026-07-22 09:30:00] core fact", ARCHIVAL_HEADER]
    index, size = 0, 0
    while (entries is not None and index < entries) or (target_bytes and size < target_bytes):
        line = f"- [2026-07-22 09:{index % 60:02d}:00] archival entry {index} about deploys and tea"
        lines.append(line)
        size += len(line.encode()) + 1
        index += 1
    return "\n".join(lines) + "\n"


def _bare_atomic_write(path: Path, data: bytes) -> None:
    descriptor, temp = tempfile.mkstemp(dir=path.parent)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temp, path)


def bench_save(root: Path, size: int) -> dict[str, object]:
    workspace = init_workspace(root / f"save{size}")
    memory_file = workspace.global_memory_file
    memory_file.write_text(_memory_text(target_bytes=size))
    service = MemoryService.open(workspace, Settings())
    counter = iter(range(10**9))
    save = time_calls(
        lambda: service.save(None, f"benchmark entry {next(counter)}", "archival"), 60
    )
    data = memory_file.read_bytes()
    baseline = time_calls(lambda: _bare_atomic_write(root / "bare.md", data), 60)
    return {"file_bytes": len(data), "save": save, "baseline_bare_atomic_write": baseline}


def bench_load(root: Path) -> dict[str, object]:
    workspace = init_workspace(root / "load")
    memory_file = workspace.global_memory_file
    memory_file.write_text(_memory_text(target_bytes=1_000_000))
    service = MemoryService.open(workspace, Settings())
    warm = time_calls(lambda: service.build_context(None), 50)

    def cold() -> None:
        os.utime(memory_file, ns=(time.time_ns(), time.time_ns()))
        service.build_context(None)

    return {"file_bytes": memory_file.stat().st_size, "warm": warm, "cold": time_calls(cold, 20)}


def bench_recall(root: Path) -> dict[str, object]:
    workspace = init_workspace(root / "recall")
    memory_file = workspace.global_memory_file
    memory_file.write_text(_memory_text(entries=100_000))
    service = MemoryService.open(workspace, Settings())
    service.recall(None, "warm-up")
    warm = time_calls(lambda: service.recall(None, "Entry 99999 ABOUT"), 50)

    def cold() -> None:
        os.utime(memory_file, ns=(time.time_ns(), time.time_ns()))
        service.recall(None, "entry 99999 about")

    lines = parse(memory_file.read_text()).archival_lines
    naive = time_calls(lambda: [line for line in lines if "entry 99999" in line.lower()], 10)
    return {
        "archival_entries": 100_000,
        "file_bytes": memory_file.stat().st_size,
        "warm": warm,
        "cold": time_calls(cold, 15),
        "baseline_lower_scan_of_parsed_lines": naive,
    }


def run() -> dict[str, object]:
    """Every figure of this benchmark, as a dict."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        report = {
            "save_100kb": bench_save(root, 100_000),
            "save_1mb": bench_save(root, 1_000_000),
            "load_1mb": bench_load(root),
            "recall_100k": bench_recall(root),
        }
    report["targets"] = {
        "save_100kb_median_ms": 5,
        "recall_warm_median_ms": 15,
        "recall_cold_median_ms": 400,
    }
    return report


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
