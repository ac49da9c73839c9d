"""The CLI as hooks and scripts call it: whole `oryxtui memory save` / `memory recall` processes
on the demo workspace, next to `python -c "import pydantic"` measured in the same run.

Run: python tests/benchmarks/bench_cli.py [--runs N]
The commands run interleaved (one of each per round), after a warm-up that compiles bytecode.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from timing import summarize


def _run(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, capture_output=True, check=True)
    return (time.perf_counter() - started) * 1000


def run(runs: int = 15) -> dict[str, object]:
    oryxtui = str(Path(sys.executable).parent / "oryxtui")
    with tempfile.TemporaryDirectory() as folder:
        demo = Path(folder) / "demo"
        subprocess.run([oryxtui, "demo", str(demo), "--no-open"], capture_output=True, check=True)
        where = ["--root", str(demo), "--agent", "ops-bot"]
        commands = {
            "baseline_import_pydantic": [sys.executable, "-c", "import pydantic"],
            "memory_save": [oryxtui, "memory", "save", *where, "benchmark entry"],
            "memory_recall": [oryxtui, "memory", "recall", *where, "deploy"],
            "help": [oryxtui, "--help"],
        }
        for command in commands.values():  # warm-up: bytecode compiled, files cached
            _run(command)
        samples: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(runs):
            for name, command in commands.items():
                samples[name].append(_run(command))
    report: dict[str, object] = {name: summarize(times) for name, times in samples.items()}
    baseline = report["baseline_import_pydantic"]["median_ms"]  # type: ignore[index]
    for name in ("memory_save", "memory_recall"):
        report[f"{name}_vs_pydantic"] = round(report[name]["median_ms"] / baseline, 2)  # type: ignore[index]
    return report


if __name__ == "__main__":
    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 15
    print(json.dumps(run(runs), indent=2))
