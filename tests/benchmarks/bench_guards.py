"""What security round 4's guards cost (issue 43). Prints JSON.

Run: python tests/benchmarks/bench_guards.py [--calls N]

- a remote call (`GET /api/v1/agents` of a real `oryxtui serve` on 127.0.0.1) through oryxtui's
  client — its total deadline kept at the socket, its answer capped as it streams in — against
  the same request through a plain httpx client in the same run (p50, ratio);
- an entry through the one door (`sanitize_content`) with and without escape sequences in it,
  against the same text through `str.translate` alone (what the door did before it took
  sequences out whole), p50 per 1,000 entries.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from oryxtui.memory.format import _FLATTEN, sanitize_content
from oryxtui.remote.client import Server
from oryxtui.workspace import init_workspace
from tests.serve_process import ServeProcess
from tests.support import agents_with_notes


def p50_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 3)


def remote_calls(calls: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as folder:
        workspace = init_workspace(Path(folder) / "w")
        agents_with_notes(workspace, "ops", "atlas", "mei")
        with ServeProcess(workspace.root) as server:
            ours = Server(server.url)
            plain = httpx.Client(base_url=server.url + "/api/v1", timeout=30)
            ours.get("/agents"), plain.get("/agents")  # connections made
            guarded, bare = [], []
            for _ in range(calls):  # interleaved: the machine's noise falls on both
                started = time.perf_counter()
                ours.get("/agents")
                guarded.append(time.perf_counter() - started)
                started = time.perf_counter()
                plain.get("/agents").json()
                bare.append(time.perf_counter() - started)
            ours.close()
            plain.close()
    return {
        "calls": calls,
        "oryxtui_client_p50_ms": p50_ms(guarded),
        "plain_httpx_p50_ms": p50_ms(bare),
        "ratio": round(statistics.median(guarded) / statistics.median(bare), 3),
    }


def entry_door(entries: int = 1000, rounds: int = 30) -> dict[str, object]:
    clean = [f"deploy window {n} is Tuesdays 14:00-16:00, ask ops first" for n in range(entries)]
    hostile = [f"deploy \x1b[31mwindow\x1b[0m {n} \x1b]0;t\x07 Tuesdays" for n in range(entries)]

    def timed(texts: list[str], clean_one: object) -> float:
        samples = []
        for _ in range(rounds):
            started = time.perf_counter()
            for text in texts:
                clean_one(text)  # type: ignore[operator]
            samples.append(time.perf_counter() - started)
        return p50_ms(samples)

    return {
        "entries": entries,
        "door_plain_p50_ms": timed(clean, sanitize_content),
        "door_with_escapes_p50_ms": timed(hostile, sanitize_content),
        "translate_only_plain_p50_ms": timed(clean, lambda t: t.translate(_FLATTEN)),
        "translate_only_escapes_p50_ms": timed(hostile, lambda t: t.translate(_FLATTEN)),
    }


def run(calls: int = 300) -> dict[str, object]:
    return {"remote_call": remote_calls(calls), "entry_door": entry_door()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    print(json.dumps(run(args.calls)))


if __name__ == "__main__":
    main()
