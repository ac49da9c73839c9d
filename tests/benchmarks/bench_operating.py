"""What operating the server costs (issue 47). Prints JSON.

Run: python tests/benchmarks/bench_operating.py [--calls N] [--baseline-src PATH]

- p50 of a recall and of a save over HTTP against real `oryxtui serve` processes on 127.0.0.1,
  in the same run, requests interleaved — each round in another order — so the machine's noise
  falls on all alike (all the recalls, then all the saves): metrics off
  (`[telemetry.metrics] enabled = false`: the code path of before), metrics on with tracing
  off (the default), and metrics with tracing on, its spans sent by OTLP over HTTP to a
  receiver on 127.0.0.1. With --baseline-src (a checkout of the commit before, e.g. made by
  `git worktree add`), that commit's server is measured beside them too.
- a scrape of /metrics on a server with 100 agents: p50 of 30 scrapes after the first (which
  reads every agent's figures), and how many series it holds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from oryxtui.workspace import Workspace, init_workspace
from tests.local_http import LocalHttpServer
from tests.serve_process import ServeProcess
from tests.support import agents_with_notes, make_agent


class Sink(LocalHttpServer):
    """An OTLP/HTTP endpoint that takes every export and answers 200."""

    url_suffix = "/v1/traces"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: object) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["Content-Length"]))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

        return Handler


class Server(ServeProcess):
    """`oryxtui serve` of `source` (None: this checkout: its code found first on PYTHONPATH),
    up, with a client."""

    def __init__(self, root: Path, source: Path | None = None) -> None:
        super().__init__(root, env={"PYTHONPATH": str(source)} if source else None)
        self.__enter__()
        self.http = self.client()

    def stop(self) -> None:
        self.http.close()
        self.__exit__()


def workspace_with_notes(folder: Path, config: str = "") -> Workspace:
    workspace = init_workspace(folder)
    agents_with_notes(workspace, "ops")
    lines = [
        f"- [2026-11-{1 + n % 28:02d} 09:00:00] note {n}: window {n % 7} for service s{n % 40}"
        for n in range(2000)
    ]
    memory = workspace.memory_file("ops")
    memory.write_text(memory.read_text() + "\n".join(lines) + "\n")
    # (a benchmark sends more than the 600 requests a minute a key may by default)
    workspace.config_path.write_text("[api]\nrate_limit_per_minute = 0\n" + config)
    return workspace


def overhead(calls: int, baseline_src: Path | None) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as folder, Sink() as sink:
        tracing = f'[telemetry.tracing]\nenabled = true\nendpoint = "{sink.base_url}"\n'
        configs = {
            "metrics_off": "[telemetry.metrics]\nenabled = false\n",
            "metrics_on": "",
            "metrics_and_tracing": tracing,
        }
        servers = {
            name: Server(workspace_with_notes(Path(folder) / name, config).root)
            for name, config in configs.items()
        }
        if baseline_src is not None:
            root = workspace_with_notes(Path(folder) / "before").root
            servers["commit_before"] = Server(root, baseline_src)
        recall: dict[str, list[float]] = {name: [] for name in servers}
        save: dict[str, list[float]] = {name: [] for name in servers}
        try:
            for server in servers.values():  # warm: imports, first recall, connections
                for _ in range(20):
                    server.http.get(
                        "/api/v1/agents/ops/memory/recall", params={"keyword": "window 3"}
                    )
            # Recalls first, then saves: a save sets the server's change feed to work, which
            # would fall on the next requests of every server.
            names = list(servers)
            for n in range(calls):
                for name in names[n % len(names) :] + names[: n % len(names)]:  # turn about
                    server = servers[name]
                    started = time.perf_counter()
                    answer = server.http.get(
                        "/api/v1/agents/ops/memory/recall", params={"keyword": f"service s{n % 40}"}
                    )
                    recall[name].append(time.perf_counter() - started)
                    assert answer.status_code == 200
            for n in range(calls):
                for name in names[n % len(names) :] + names[: n % len(names)]:
                    server = servers[name]
                    started = time.perf_counter()
                    answer = server.http.post(
                        "/api/v1/agents/ops/memory",
                        json={"content": f"benchmark note {n} of {name}"},
                    )
                    save[name].append(time.perf_counter() - started)
                    assert answer.status_code == 200, answer.text
        finally:
            for server in servers.values():
                server.stop()
    base = "commit_before" if baseline_src is not None else "metrics_off"
    told: dict[str, object] = {"calls": calls, "baseline": base}
    for name in servers:
        told[name] = {
            "recall_p50_ms": round(statistics.median(recall[name]) * 1000, 3),
            "save_p50_ms": round(statistics.median(save[name]) * 1000, 3),
            "recall_ratio": round(
                statistics.median(recall[name]) / statistics.median(recall[base]), 3
            ),
            "save_ratio": round(statistics.median(save[name]) / statistics.median(save[base]), 3),
        }
    return told


def scrape(agents: int = 100, scrapes: int = 30) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as folder:
        workspace = init_workspace(Path(folder) / "w")
        for number in range(agents):
            make_agent(workspace, f"agent-{number:03d}")
        agents_with_notes(workspace, *(f"agent-{n:03d}" for n in range(agents)))
        server = Server(workspace.root)
        try:
            started = time.perf_counter()
            first = server.http.get("/metrics")
            cold = time.perf_counter() - started
            samples = []
            for _ in range(scrapes):
                started = time.perf_counter()
                text = server.http.get("/metrics").text
                samples.append(time.perf_counter() - started)
        finally:
            server.stop()
    assert first.status_code == 200
    series = [line for line in text.splitlines() if line and not line.startswith("#")]
    return {
        "agents": agents,
        "first_scrape_ms": round(cold * 1000, 3),
        "scrape_p50_ms": round(statistics.median(samples) * 1000, 3),
        "scrape_max_ms": round(max(samples) * 1000, 3),
        "series": len(series),
        "bytes": len(text.encode()),
    }


def run(calls: int = 300, baseline_src: Path | None = None) -> dict[str, object]:
    return {"overhead": overhead(calls, baseline_src), "scrape": scrape()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--baseline-src", type=Path, default=None)
    args = parser.parse_args()
    print(json.dumps(run(args.calls, args.baseline_src), indent=2))


if __name__ == "__main__":
    main()
