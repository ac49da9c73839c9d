"""Recall with each in-process model on data its floors were not calibrated on — the held-out
splits of the two calibration sets (chats, an operations agent's notes), and the whole of a
third set built by another generator (an assistant's memory of a person): questions no memory
answers get a hit by meaning alone at most 1 % of the time (on the third set, at most 2 %: its
one is "What is the currency of Kazakhstan?" finding a currency conversion the assistant did),
and the default is never below its best single route at R@1, R@5 and R@10
(`tests/benchmarks/bench_quality.py`, one process each)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).parents[1] / "benchmarks" / "bench_quality.py"
pytestmark = pytest.mark.system  # a benchmark process each, about 30 s

# Where the default is measured below a route on a held-out split, by how much (points): the
# local model on the notes, below the default without an embedder (which the benchmark counts
# as a route since issue 55) at R@1 and R@5 (1 and 2 of 36 questions, where its weak
# similarities outrank a words match); the recall page says so. Anything else below is a
# regression.
KNOWN_SHORT = {("local", "notes", "R@1"): 2.8, ("local", "notes", "R@5"): 5.6}


@pytest.mark.parametrize("provider", ["onnx", "local"])
@pytest.mark.parametrize("made", ["chats", "notes", "assistant"])
def test_on_held_out_data_meaning_is_honest_and_fusion_keeps_its_best_route(
    provider: str, made: str
) -> None:
    """The targets of the calibrated floors and the fusion, on conversations the floors were
    not set on (`--split test`)."""
    done = subprocess.run(
        [sys.executable, str(BENCH), "--provider", provider, "--set", made,
         "--split", "all" if made == "assistant" else "test", "--quick"],
        capture_output=True, text=True, timeout=900, check=True,
    )  # fmt: skip
    found = json.loads(done.stdout)
    default = "oryxtui default, with the embedder"
    false_hits = found["false_hits"][default]
    bound = 2.0 if made == "assistant" else 1.0
    assert false_hits["unrelated_semantic_only_pct"] <= bound, false_hits
    assert false_hits["nonsense_semantic_only_pct"] <= bound, false_hits
    for at, margin in found["default_minus_best_route"].items():
        assert margin >= -KNOWN_SHORT.get((provider, made, at), 0.0), found["systems"]
