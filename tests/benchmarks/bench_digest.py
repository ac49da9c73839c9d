"""Digest benchmarks (issue 15): `consolidate --dry-run` over 10,000 archival entries with the
extractive summariser, in the library and through the real CLI. Prints JSON.

Run: python tests/benchmarks/bench_digest.py. Baseline measured in the same run: reading the
same memory (`MemoryService.snapshot`), which any consolidation starts with.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from timing import summarize, time_calls

from oryxtui.config import Settings
from oryxtui.memory import MemoryService
from oryxtui.memory.format import ARCHIVAL_HEADER, CORE_HEADER
from oryxtui.workspace import init_workspace

FACTS = [
    "Deployed ledger v{} to pay-prod: canary then 100%, no errors.",
    "Mei Lin is on call until Monday 10:00; Ravi is secondary (rotation {}).",
    "The fx-rates cache was warmed after incident {} and the alert threshold lowered.",
    "网关 gateway 的值班交接改到周一 {} 点。",
    "Customer {} asked for weekly settlement reports in CSV, not PDF.",
]


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        workspace = init_workspace(Path(folder) / "w")
        lines = [CORE_HEADER, "- [2026-07-01 08:00:00] the team is Falcon", ARCHIVAL_HEADER]
        lines += [
            f"- [2026-07-{1 + i // 1000 % 28:02d} {i // 60 % 24:02d}:{i % 60:02d}:00] "
            + FACTS[i % len(FACTS)].format(i)
            for i in range(10_000)
        ]
        workspace.global_memory_file.write_text("\n".join(lines) + "\n")
        service = MemoryService.open(workspace, Settings())
        covered = len(service.consolidate(None, dry_run=True).covers)  # type: ignore[union-attr]
        library = time_calls(lambda: service.consolidate(None, dry_run=True), 10)
        snapshot = time_calls(lambda: service.snapshot(None), 10)
        command = [sys.executable, "-m", "oryxtui", "memory", "consolidate", "--dry-run"]
        command += ["--root", str(workspace.root), "--json"]
        samples = []
        for _ in range(5):
            started = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True)
            samples.append((time.perf_counter() - started) * 1000)
    print(
        json.dumps(
            {
                "archival_entries": 10_000,
                "covered": covered,
                "consolidate_dry_run_library": library,
                "baseline_snapshot": snapshot,
                "consolidate_dry_run_cli_process": summarize(samples),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
