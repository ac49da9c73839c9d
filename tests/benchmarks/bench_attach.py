"""The dashboard attached to servers (issue 26). Prints JSON.

Run: python tests/benchmarks/bench_attach.py

- a save on the server's host → shown on the attached dashboard (p50/p95, target ≤ 300 ms on
  loopback); baseline: the same save shown by a local dashboard watching the files;
- what a change costs the attached dashboard on an agent of 2,000 entries: latency and bytes
  received per change, applying the change the event carries (after) against reading the
  memory whole again on every change (before; the copies disabled in the same run);
- attach to a server with 50 agents and 100,000 entries → the first usable frame (the first
  agent's entries on screen; target within 1.5× local); baseline: the local dashboard;
- events sustained per second by one server while a process saves as fast as it can;
  baseline: that process's own saves per second.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from timing import summarize

LIVE_SAMPLES = 30
CHANGE_ENTRIES = 2000
AGENTS, ENTRIES = 50, 100_000
FRAME_ROUNDS = 5
EVENT_SAVES = 1000

SAVER = """
import sys, time
from oryxtui.config import Settings
from oryxtui.memory.service import MemoryService
from pathlib import Path
from oryxtui.workspace import Workspace
root, agent, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
service = MemoryService.open(Workspace(Path(root)), Settings())
for line in sys.stdin:
    if line.strip() == "burst":
        started = time.time()
        for i in range(count):
            service.save(f"{agent}{i % 10}", f"burst note {i}", "archival")
        print(started, time.time(), flush=True)
        continue
    service.save(agent, f"live note {time.time()}", "archival")
    print(time.time(), flush=True)
"""


def start_saver(script: Path, root: Path, agent: str, count: str) -> subprocess.Popen[str]:
    """The saving process: one save per line it reads ("burst": `count` saves at once)."""
    return subprocess.Popen(
        [sys.executable, str(script), str(root), agent, count],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def attached_app(url: str):  # type: ignore[no-untyped-def]
    from oryxtui.remote.client import Server
    from oryxtui.remote.fleet import Fleet
    from oryxtui.tui.app import OryxApp

    fleet = Fleet([Server(url, name="bench")])
    return OryxApp.attached(fleet, user="bench")


async def live(folder: Path) -> dict[str, object]:
    from oryxtui.workspace import init_workspace
    from tests.dashboard_support import archival_pane, make_app
    from tests.serve_process import ServeProcess
    from tests.support import make_agent

    workspace = init_workspace(folder / "live")
    make_agent(workspace, "alpha")
    script = folder / "saver.py"
    script.write_text(SAVER)
    figures: dict[str, object] = {}
    with ServeProcess(workspace.root) as server:
        for name, app in (
            ("local_watcher", make_app(workspace)),
            ("attached", attached_app(server.url)),
        ):
            saver = start_saver(script, workspace.root, "alpha", "0")
            assert saver.stdin is not None and saver.stdout is not None
            samples = []
            async with app.run_test(size=(120, 40)) as pilot:
                pane = archival_pane(app)
                while app.dashboard.shown not in ("alpha", "alpha@bench"):
                    await pilot.pause(0.01)
                await pilot.pause(0.5)
                start = pane.view.row_count
                for i in range(LIVE_SAMPLES):
                    saver.stdin.write("go\n")
                    saver.stdin.flush()
                    saved = float(await asyncio.to_thread(saver.stdout.readline))
                    while pane.view.row_count < start + i + 1:
                        await pilot.pause(0.002)
                    samples.append((time.time() - saved) * 1000)
            saver.stdin.close()
            saver.wait(timeout=60)
            figures[name] = summarize(samples)
    return {"save_to_screen": figures}


async def change_cost(folder: Path) -> dict[str, object]:
    """A save on the server's host → on the attached dashboard, for an agent of CHANGE_ENTRIES
    entries: latency and the bytes the dashboard received per change (answers and event
    stream), with the copies the fleet keeps current from the events ("after") and with them
    disabled, so every change reads the memory whole again ("before", as before typed
    events)."""
    from oryxtui.remote.copies import Copies
    from oryxtui.workspace import init_workspace
    from tests.dashboard_support import archival_pane
    from tests.serve_process import ServeProcess
    from tests.support import make_agent

    workspace = init_workspace(folder / "cost")
    lines = "".join(
        f"- [2026-07-21 09:{i // 60 % 60:02d}:{i % 60:02d}] note {i}: a line of plausible "
        "length about deploys and pagers\n"
        for i in range(CHANGE_ENTRIES)
    )
    (make_agent(workspace, "alpha") / "MEMORY.md").write_text(
        f"## 核心记忆\n- [2026-07-20 08:00:00] core\n## 归档记忆\n{lines}"
    )
    script = folder / "saver.py"
    script.write_text(SAVER)
    figures: dict[str, object] = {"entries": CHANGE_ENTRIES}
    take = Copies.take
    with ServeProcess(workspace.root) as server:
        for name in ("before", "after"):
            Copies.take = take if name == "after" else (lambda *_: None)  # type: ignore[method-assign]
            app = attached_app(server.url)
            remote = app.place.source.places["bench"].memory  # type: ignore[attr-defined]
            saver = start_saver(script, workspace.root, "alpha", "0")
            assert saver.stdin is not None and saver.stdout is not None
            samples, sizes = [], []
            async with app.run_test(size=(120, 40)) as pilot:
                pane = archival_pane(app)
                while app.dashboard.shown != "alpha@bench" or pane.view.row_count < 2:
                    await pilot.pause(0.01)
                await pilot.pause(0.5)
                for _ in range(LIVE_SAMPLES):
                    shown = pane.view.row_count
                    received = remote.server.received + remote.server.streamed
                    saver.stdin.write("go\n")
                    saver.stdin.flush()
                    saved = float(await asyncio.to_thread(saver.stdout.readline))
                    while pane.view.row_count <= shown:
                        await pilot.pause(0.002)
                    samples.append((time.time() - saved) * 1000)
                    await pilot.pause(0.2)  # what the change costs, counted whole
                    sizes.append(remote.server.received + remote.server.streamed - received)
            saver.stdin.close()
            saver.wait(timeout=60)
            figures[name] = {
                "save_to_screen": summarize(samples),
                "bytes_per_change_median": int(statistics.median(sizes)),
            }
    Copies.take = take  # type: ignore[method-assign]
    return figures


def big_workspace(folder: Path):  # type: ignore[no-untyped-def]
    from oryxtui.workspace import init_workspace
    from tests.support import make_agent

    workspace = init_workspace(folder / "big")
    per = ENTRIES // AGENTS
    for a in range(AGENTS):
        lines = "".join(
            f"- [2026-07-21 {9 + i // 3600 % 10:02d}:{i // 60 % 60:02d}:{i % 60:02d}] "
            f"agent {a} note {i}: a line of plausible length about deploys and pagers\n"
            for i in range(per)
        )
        (make_agent(workspace, f"agent{a:02d}") / "MEMORY.md").write_text(
            f"## 核心记忆\n- [2026-07-20 08:00:00] core of agent {a}\n## 归档记忆\n{lines}"
        )
    return workspace


async def first_frame(folder: Path) -> dict[str, object]:
    from tests.dashboard_support import make_app, memory_shown
    from tests.serve_process import ServeProcess

    workspace = big_workspace(folder)
    samples: dict[str, list[float]] = {"local": [], "attached": []}
    with ServeProcess(workspace.root) as server:
        for _ in range(FRAME_ROUNDS):
            for name in ("local", "attached"):
                started = time.perf_counter()
                app = make_app(workspace) if name == "local" else attached_app(server.url)
                async with app.run_test(size=(120, 40)) as pilot:
                    while not memory_shown(app):
                        await pilot.pause(0.002)
                    samples[name].append((time.perf_counter() - started) * 1000)
    local, attached = summarize(samples["local"]), summarize(samples["attached"])
    return {
        "agents": AGENTS,
        "entries": ENTRIES,
        "local": local,
        "attached": attached,
        "ratio": round(attached["median_ms"] / local["median_ms"], 2),
    }


def events_per_second(folder: Path) -> dict[str, object]:
    from oryxtui.workspace import init_workspace
    from tests.api_server import EventReader
    from tests.serve_process import ServeProcess
    from tests.support import make_agent

    workspace = init_workspace(folder / "events")
    for i in range(10):
        make_agent(workspace, f"w{i}")
    script = folder / "saver.py"
    script.write_text(SAVER)
    with ServeProcess(workspace.root) as server, EventReader(server.url) as events:
        events.next()
        saver = start_saver(script, workspace.root, "w", str(EVENT_SAVES))
        assert saver.stdin is not None and saver.stdout is not None
        saver.stdin.write("burst\n")
        saver.stdin.flush()
        told = 0
        while told < EVENT_SAVES:
            _, data = events.next()
            if data["kind"] == "memory" and "change" in data:
                told += 1
        last_event = time.time()
        started, finished = map(float, saver.stdout.readline().split())
        saver.stdin.close()
        saver.wait(timeout=60)
    return {
        "saves": EVENT_SAVES,
        "events_per_second": round(EVENT_SAVES / (last_event - started), 1),
        "saves_per_second_baseline": round(EVENT_SAVES / (finished - started), 1),
    }


def run() -> dict[str, object]:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        return {
            **asyncio.run(live(root)),
            "change_cost": asyncio.run(change_cost(root)),
            "first_usable_frame": asyncio.run(first_frame(root)),
            "events": events_per_second(root),
        }


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
