"""Throughput with 8 concurrent writer processes; the dashboard's peak memory with 100,000
archival entries (baseline: a minimal Textual app); and one MEMORY.md of a million entries: the
dashboard opening it, the CLI recalling and saving in it (baselines: parsing the whole file in a
bare process, and `grep -i`). Every figure comes from a fresh process. Prints JSON.

Run: python tests/benchmarks/bench_scale.py
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from timing import summarize

REPO = Path(__file__).resolve().parents[2]
WRITERS = 8
SECONDS = 5.0

# VmHWM, not ru_maxrss: ru_maxrss survives exec, so a child of a big parent reports the parent's.
PEAK = """
def PEAK():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) // 1024
"""

PEAK_OF_DASHBOARD = (
    PEAK
    + """
import asyncio, sys
from pathlib import Path
from oryxtui.config import Settings
from oryxtui.tui.app import OryxApp
from oryxtui.workspace import Workspace

async def main():
    app = OryxApp(Workspace(Path(sys.argv[1])), Settings(), watch=False)
    async with app.run_test(size=(160, 45)) as pilot:
        while app.dashboard.memory_view.archival.view.row_count < 100_000:
            await pilot.pause(0.02)
        await pilot.press("end", "home", "end")
        await pilot.pause(0.2)
asyncio.run(main())
print(PEAK())
"""
)

PEAK_OF_MINIMAL_APP = (
    PEAK
    + """
import asyncio
from textual.app import App
from textual.widgets import Static

class Minimal(App):
    def compose(self):
        yield Static("hello")

async def main():
    async with Minimal().run_test(size=(160, 45)) as pilot:
        await pilot.pause(0.2)
asyncio.run(main())
print(PEAK())
"""
)


def _workspace(root: Path, archival: int) -> Path:
    from oryxtui.memory.format import ARCHIVAL_HEADER, CORE_HEADER
    from oryxtui.workspace import init_workspace

    workspace = init_workspace(root)
    folder = workspace.agents_dir / "big"
    folder.mkdir(parents=True)
    (folder / "AGENT.md").write_text("---\nname: big\n---\n")
    lines = [CORE_HEADER, "- [2026-07-22 09:30:00] core fact", ARCHIVAL_HEADER]
    lines += [f"- [2026-07-22 09:30:00] entry {i} about deploys" for i in range(archival)]
    (folder / "MEMORY.md").write_text("\n".join(lines) + "\n")
    return workspace.root


def throughput(root: Path) -> dict[str, object]:
    workspace = _workspace(root / "soak", 10)
    writers = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.workers", "forever", str(workspace), "big", f"w{n}", "0"],
            cwd=REPO,
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(WRITERS)
    ]
    for writer in writers:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "ready"
    time.sleep(SECONDS)
    for writer in writers:
        writer.terminate()
    saves = sum(len(writer.communicate()[0].split()) for writer in writers)
    text = (workspace / "agents" / "big" / "MEMORY.md").read_text()
    in_file = text.count("] w")
    return {
        "writers": WRITERS,
        "seconds": SECONDS,
        "saves_acknowledged": saves,
        "saves_per_second": round(saves / SECONDS, 1),
        "entries_in_file": in_file,
        "lost": max(0, saves - in_file),
    }


def _peak_mb(script: str, *args: str) -> int:
    result = subprocess.run(
        [sys.executable, "-c", script, *args], cwd=REPO, capture_output=True, text=True, check=True
    )
    return int(result.stdout.split()[-1])


def peak_memory(root: Path) -> dict[str, object]:
    workspace = _workspace(root / "peak", 100_000)
    return {
        "dashboard_100k_entries_peak_mb": _peak_mb(PEAK_OF_DASHBOARD, str(workspace)),
        "baseline_minimal_textual_app_peak_mb": _peak_mb(PEAK_OF_MINIMAL_APP),
        "target_mb": 150,
    }


MILLION_DASHBOARD = (
    PEAK
    + """
import asyncio, json, sys, time
from pathlib import Path
from oryxtui.config import Settings
from oryxtui.tui.app import OryxApp
from oryxtui.workspace import Workspace

async def main():
    started = time.perf_counter()
    app = OryxApp(Workspace(Path(sys.argv[1])), Settings(), watch=False)
    async with app.run_test(size=(160, 45)) as pilot:
        while getattr(app.dashboard.memory_view.shown, "summary", None) is None or (
            app.dashboard.memory_view.shown.summary.name != "big"
        ):
            await pilot.pause(0.01)
        shown = time.perf_counter() - started
        shown_peak = PEAK()
        while app.dashboard.agent_list.summaries["big"].archival_count is None:
            await pilot.pause(0.02)
        counted = time.perf_counter() - started
        rows = app.dashboard.memory_view.archival.view.row_count
    print(json.dumps({"newest_shown_s": shown, "peak_mb_when_shown": shown_peak,
                      "all_counted_s": counted, "rows_shown": rows, "peak_mb": PEAK()}))
asyncio.run(main())
"""
)

WHOLE_PARSE = (
    PEAK
    + """
import json, sys, time
from pathlib import Path
from oryxtui.config import Settings
from oryxtui.memory import MemoryService
from oryxtui.workspace import Workspace
started = time.perf_counter()
snapshot = MemoryService.open(Workspace(Path(sys.argv[1])), Settings()).snapshot("big")
print(json.dumps({"s": time.perf_counter() - started, "entries": len(snapshot.archival),
                  "peak_mb": PEAK()}))
"""
)


def _json_of(script: str, *args: str) -> dict[str, object]:
    result = subprocess.run(
        [sys.executable, "-c", script, *args], cwd=REPO, capture_output=True, text=True, check=True
    )
    return json.loads(result.stdout)


def _timed(command: list[str], runs: int = 3) -> dict[str, float]:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, cwd=REPO, capture_output=True, check=True)
        samples.append((time.perf_counter() - started) * 1000)
    return summarize(samples)


def million(root: Path) -> dict[str, object]:
    workspace = _workspace(root / "million", 1_000_000)
    memory = workspace / "agents" / "big" / "MEMORY.md"
    oryxtui = str(Path(sys.executable).parent / "oryxtui")
    base = [oryxtui, "memory"]
    where = ["--root", str(workspace), "--agent", "big"]
    return {
        "file_bytes": memory.stat().st_size,
        "dashboard": _json_of(MILLION_DASHBOARD, str(workspace)),
        "baseline_whole_file_parsed": _json_of(WHOLE_PARSE, str(workspace)),
        "cli_recall": _timed([*base, "recall", *where, "entry 999999 "]),
        "baseline_grep_i": _timed(["grep", "-ci", "entry 999999 ", str(memory)]),
        "cli_save": _timed([*base, "save", *where, "one more"]),
        "baseline_cli_startup": _timed([oryxtui, "--help"]),
    }


def run() -> dict[str, object]:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        return {
            "throughput": throughput(root),
            "peak_memory": peak_memory(root),
            "million_entries": million(root),
        }


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
