"""The past at a bounded cost (issue 56, item 5), over a real `oryxtui serve` on 127.0.0.1.
Prints JSON.

Run: python tests/benchmarks/bench_past.py [--entries 10000] [--replacements 1000]
     [--seconds 15]

A memory of `entries` entries, `replacements` of them replaced (through the service, as a
person or an agent would); then, same run: `GET …/memory/entries` (everything now) against
`GET …/memory/as-of/{moment}` (the memory as it stood half way through the replacements),
medians of 15 each; then one read key asks as-of at 9 a second for `seconds` while `/healthz`
is probed 5 times a second: the probes' statuses and p50/p95, the key's answers by status.
Targets: as-of ≤ 2× everything now; every probe 200, p95 ≤ 100 ms; the key's answers 200 or
429 with a sentence, never 503.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import threading
import time
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[2]))

from timing import summarize

from oryxtui.config import Settings
from oryxtui.memory import MemoryService
from oryxtui.workspace import Workspace, init_workspace

START = datetime(2026, 3, 2, 9, 0, 0)


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        self.now += timedelta(minutes=1)
        return self.now


def lived(root: Path, entries: int, replacements: int) -> tuple[Workspace, datetime]:
    """The workspace (agent `big`) and a moment half way through its replacements."""
    workspace = init_workspace(root)
    folder = workspace.root / "agents" / "big"
    folder.mkdir(parents=True)
    (folder / "AGENT.md").write_text("---\nname: big\n---\n", encoding="utf-8")
    lines = [
        f"- [{(START + timedelta(minutes=i)).strftime('%Y-%m-%d %H:%M:%S')}] note {i}: service "
        f"s{i % 97} is owned by team t{i % 13} on host h{i}"
        for i in range(entries)
    ]
    (folder / "MEMORY.md").write_text(
        "## 核心记忆\n## 归档记忆\n" + "\n".join(lines) + "\n", encoding="utf-8"
    )
    clock = Clock(START + timedelta(days=30))
    memory = MemoryService.open(workspace, Settings(), clock=clock)
    ids = [entry.id for entry in memory.snapshot("big").archival]
    middle = clock.now
    for k, i in enumerate(random.Random(3).sample(range(entries), replacements)):
        memory.replace("big", ids[i], f"note {i}: now owned by team r{k}")
        if k == replacements // 2:
            middle = clock.now
    return workspace, middle


def medians(client: httpx.Client, paths: dict[str, str], runs: int = 15) -> dict[str, Any]:
    samples: dict[str, list[float]] = {name: [] for name in paths}
    for path in paths.values():
        client.get(path).raise_for_status()  # warm: the first builds what the rest reuse
    for _ in range(runs):
        for name, path in paths.items():
            started = time.perf_counter()
            client.get(path).raise_for_status()
            samples[name].append((time.perf_counter() - started) * 1000)
    return {name: summarize(times) for name, times in samples.items()}


def under_load(url: str, key: str, path: str, seconds: float, rate: float = 9.0) -> dict[str, Any]:
    """One key asks `path` at `rate` a second while /healthz is probed 5 times a second."""
    statuses: Counter[int] = Counter()
    refusals: list[str] = []
    probes: list[float] = []
    probe_statuses: Counter[int] = Counter()
    stop = time.monotonic() + seconds

    def ask() -> None:
        with httpx.Client(
            base_url=url, timeout=30, headers={"Authorization": f"Bearer {key}"}
        ) as c:
            sent = 0
            began = time.monotonic()
            while time.monotonic() < stop:
                answered = c.get(path)
                statuses[answered.status_code] += 1
                if answered.status_code != 200:
                    refusals.append(str(answered.json().get("message", "")))
                sent += 1
                time.sleep(max(0.0, began + sent / rate - time.monotonic()))

    def probe() -> None:
        with httpx.Client(base_url=url, timeout=30) as c:
            while time.monotonic() < stop:
                started = time.perf_counter()
                answered = c.get("/healthz")
                probes.append((time.perf_counter() - started) * 1000)
                probe_statuses[answered.status_code] += 1
                time.sleep(0.2)

    workers = [threading.Thread(target=ask), threading.Thread(target=probe)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return {
        "asked": dict(statuses),
        "refusals": sorted(set(refusals))[:3],
        "healthz": summarize(probes),
        "healthz_statuses": dict(probe_statuses),
    }


def run(entries: int, replacements: int, seconds: float) -> dict[str, Any]:
    from tests.serve_process import ServeProcess  # the tests' own helpers
    from tests.support import make_key

    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        workspace, middle = lived(Path(folder) / "w", entries, replacements)
        built = time.perf_counter() - started
        key = make_key(workspace, "reader", "read")
        moment = middle.strftime("%Y-%m-%dT%H:%M:%S")
        with (
            ServeProcess(workspace.root) as server,
            server.client(Authorization=f"Bearer {key}") as client,
        ):
            paths = {
                "entries_now": "/api/v1/agents/big/memory/entries",
                "as_of": f"/api/v1/agents/big/memory/as-of/{moment}",
            }
            timed = medians(client, paths)
            loaded = under_load(server.url, key, paths["as_of"], seconds)
    now, past = timed["entries_now"]["median_ms"], timed["as_of"]["median_ms"]
    return {
        "entries": entries,
        "replacements": replacements,
        "built_seconds": round(built, 1),
        **timed,
        "as_of_vs_entries_now": round(past / now, 2),
        "load": loaded,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--replacements", type=int, default=1_000)
    parser.add_argument("--seconds", type=float, default=15.0)
    options = parser.parse_args()
    print(json.dumps(run(options.entries, options.replacements, options.seconds), indent=2))


if __name__ == "__main__":
    main()
