"""Recall with each in-process model, on the held-out splits of both self-made sets (chats, and an
operations agent's notes) — conversations its floors were not calibrated on: questions no memory
answers get a hit by meaning alone at most 1 % of the time, and the default is never below its
best single route at R@1, R@5 and R@10 (`tests/benchmarks/bench_quality.py`, one process each)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).parents[1] / "benchmarks" / "bench_quality.py"
pytestmark = pytest.mark.system  # a benchmark process each, about 30 s

# Where the default is measured below a route on a held-out split, by how much (points): the
# local model on the notes, at R@1 (2 of 36 questions, where its weak similarities outrank a
# words match); the recall page says so. Anything else below is a regression.
KNOWN_SHORT = {("local", "notes", "R@1"): 5.6}


@pytest.mark.parametrize("provider", ["onnx", "local"])
@pytest.mark.parametrize("made", ["chats", "notes"])
def test_on_held_out_data_meaning_is_honest_and_fusion_keeps_its_best_route(
    provider: str, made: str
) -> None:
    """The targets of the calibrated floors and the fusion, on conversations the floors were
    not set on (`--split test`)."""
    done = subprocess.run(
        [sys.executable, str(BENCH), "--provider", provider, "--set", made,
         "--split", "test"],
        capture_output=True, text=True, timeout=900, check=True,
    )  # fmt: skip
    found = json.loads(done.stdout)
    default = "oryxtui default, with the embedder"
    false_hits = found["false_hits"][default]
    assert false_hits["unrelated_semantic_only_pct"] <= 1.0, false_hits
    assert false_hits["nonsense_semantic_only_pct"] <= 1.0, false_hits
    for at, margin in found["default_minus_best_route"].items():
        assert margin >= -KNOWN_SHORT.get((provider, made, at), 0.0), found["systems"]
