"""Change-history benchmarks (issue 14): what recording every change costs a save, how fast an
outside change is found in a big memory, and reading, replaying and compacting a long history.
Prints JSON.

Run: python tests/benchmarks/bench_history.py. Baselines measured in the same run: a bare atomic
write (temp file + fsync + replace, no lock, no parse, no history) of the same file, and parsing
the same MEMORY.md once (what any reader of it pays).
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from bench_memory import _bare_atomic_write, _memory_text
from timing import summarize, time_calls

from oryxtui.config import Settings
from oryxtui.memory import MemoryService
from oryxtui.memory.document import parse
from oryxtui.memory.history import Actor
from oryxtui.workspace import init_workspace


def _service(root: Path, name: str, entries: int) -> tuple[MemoryService, Path]:
    workspace = init_workspace(root / name)
    memory_file = workspace.global_memory_file
    memory_file.write_text(_memory_text(entries=entries))
    return MemoryService.open(workspace, Settings(), actor=Actor("cli")), memory_file


def bench_save(root: Path) -> dict[str, object]:
    """A save into 1,500 entries (~100 KB) with a history of 5,000 records behind it."""
    service, memory_file = _service(root, "save", 1500)
    for index in range(50):
        service.save(None, f"warm-up {index}", "archival")
    history = memory_file.with_name("MEMORY.md.journal")
    last = len(history.read_text(encoding="utf-8").splitlines())
    with open(history, "a", encoding="utf-8") as handle:  # a long history, as years of saves
        for n in range(last + 1, last + 5000):
            record = {"n": n, "time": "2026-07-22T09:30:00", "op": "seen", "actor": "outside"}
            handle.write(json.dumps(record) + "\n")
    service.reconcile(None)
    counter = iter(range(10**9))
    save = time_calls(lambda: service.save(None, f"bench {next(counter)}", "archival"), 60)
    data = memory_file.read_bytes()
    bare = time_calls(lambda: _bare_atomic_write(root / "bare.md", data), 60)
    return {"file_bytes": len(data), "save": save, "baseline_bare_atomic_write": bare}


def bench_outside(root: Path, entries: int) -> dict[str, object]:
    """Another program appends a line; oryxtui finds and records exactly that."""
    service, memory_file = _service(root, f"outside{entries}", entries)
    service.reconcile(None)  # the baseline
    samples = []
    for index in range(20):
        with open(memory_file, "a", encoding="utf-8") as handle:
            handle.write(f"- [2026-07-22 10:00:00] typed by hand {index}\n")
        started = time.perf_counter()
        records = service.reconcile(None)
        samples.append((time.perf_counter() - started) * 1000)
        assert [len(r.after) for r in records] == [1], records
    text = memory_file.read_text()
    parse_once = time_calls(lambda: parse(text).archival_lines, 10)
    return {"entries": entries, "found": summarize(samples), "baseline_parse_once": parse_once}


def bench_read_and_replay(root: Path) -> dict[str, object]:
    """5,000 changes to a 10,000-entry memory: the log read cold, and the oldest point
    replayed (the history view's "memory then")."""
    service, _ = _service(root, "long", 10_000)
    for index in range(5000):
        service.save(None, f"change {index}", "archival")
    workspace = service.store.workspace  # type: ignore[attr-defined]
    fresh = MemoryService.open(workspace, Settings())
    started = time.perf_counter()
    log = fresh.history(None)
    cold = (time.perf_counter() - started) * 1000
    warm = time_calls(lambda: fresh.history(None), 10)
    oldest = log[-1].n
    replay = time_calls(lambda: fresh.as_of(None, oldest), 5)
    return {
        "records": len(log),
        "history_cold_ms": round(cold, 1),
        "history_warm": warm,
        "as_of_oldest": replay,
    }


def bench_compaction(root: Path) -> dict[str, object]:
    """The save that passes 7,500 records folds all but the newest 5,000 into a baseline."""
    service, memory_file = _service(root, "compact", 1000)
    samples = []
    for index in range(7600):
        started = time.perf_counter()
        service.save(None, f"entry {index}", "archival")
        samples.append((time.perf_counter() - started) * 1000)
    history = memory_file.with_name("MEMORY.md.journal")
    return {
        "saves": len(samples),
        "save_median_ms": summarize(samples)["median_ms"],
        "slowest_save_ms (the compaction)": round(max(samples), 1),
        "history_bytes_after": history.stat().st_size,
    }


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        report = {
            "save_100kb_with_5000_records": bench_save(root),
            "outside_change_found_10k": bench_outside(root, 10_000),
            "outside_change_found_100k": bench_outside(root, 100_000),
            "read_and_replay": bench_read_and_replay(root),
            "compaction": bench_compaction(root),
        }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
