"""The past at a bounded cost over a real `oryxtui serve` (issue 56, item 5): a memory with a
history of replacements; one read key asks for the memory as of a moment several times a
second while /healthz is probed. Every probe answers 200; the key's answers are 200 or 429
with a sentence — never 503 — and a key that spent its share of the server's time is told
when to come back while another key is still answered."""

from __future__ import annotations

import sys
from pathlib import Path

import httpx
import pytest

from tests.serve_process import ServeProcess
from tests.support import bearer, make_key

sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))

from bench_past import lived, under_load  # the benchmark's own driver

pytestmark = pytest.mark.system


def test_as_of_under_load_never_takes_the_server_down(tmp_path: Path) -> None:
    workspace, middle = lived(tmp_path / "w", entries=2_000, replacements=200)
    reader, other = make_key(workspace, "reader", "read"), make_key(workspace, "other", "read")
    # A small share of the server's time, so that a key can spend it in a test's seconds.
    config = workspace.config_path
    existing = config.read_text() if config.exists() else ""
    config.write_text(
        existing + "\n[api]\ncostly_seconds = 0.05\ncostly_refill_per_second = 0.01\n"
    )
    path = f"/api/v1/agents/big/memory/as-of/{middle.strftime('%Y-%m-%dT%H:%M:%S')}"
    with ServeProcess(workspace.root) as server:
        loaded = under_load(server.url, reader, path, seconds=4.0)
        assert loaded["healthz_statuses"] and set(loaded["healthz_statuses"]) == {200}
        assert loaded["asked"] and set(loaded["asked"]) <= {200, 429}, loaded
        assert all("share of the server's time" in said for said in loaded["refusals"])
        # A key that keeps asking past its share is refused with when to try again …
        with httpx.Client(base_url=server.url, timeout=30, headers=bearer(reader)) as client:
            answers = [client.get(path) for _ in range(200)]
            refused = [a for a in answers if a.status_code == 429]
            assert {a.status_code for a in answers} <= {200, 429}
            assert refused, "200 as-of reads in a row stayed within the share"
            assert "try again in" in refused[0].json()["message"]
        # … while another key is answered, and so is the memory now.
        with httpx.Client(base_url=server.url, timeout=30, headers=bearer(other)) as client:
            assert client.get(path).status_code == 200
            assert client.get("/api/v1/agents/big/memory/entries").status_code == 200
