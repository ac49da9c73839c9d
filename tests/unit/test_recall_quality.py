"""Recall finds what the agent knows, and nothing when it knows nothing: on the self-made
conversational data set (LoCoMo's schema, `tests/benchmarks/quality_fixture.py`), the default
recall without an embedder finds at least what a plain BM25 finds at 5, and every question that
shares a content word with its evidence gets hits; with each in-process model, on the held-out
splits of both self-made sets (chats, and an operations agent's notes) — data its floors were
not calibrated on — questions no memory answers get a hit by meaning alone at most 1 % of the
time, made-up words find nothing, and the default is never below its best single route.
(`tests/benchmarks/bench_quality.py` reports the full tables.)"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from oryxtui.config import Settings
from oryxtui.memory import MemoryService
from oryxtui.workspace import Workspace

sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
import bench_quality


def _bench(*arguments: str) -> dict:
    import json
    import subprocess

    done = subprocess.run(
        [sys.executable, str(Path(bench_quality.__file__)), *arguments],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    return json.loads(done.stdout)["systems"]


@pytest.fixture(scope="module")
def report() -> dict:
    return _bench()


def test_the_default_without_an_embedder_beats_plain_bm25(report: dict) -> None:
    ours, bm25 = report["oryxtui default, no embedder"], report["plain BM25"]
    assert ours["R@5"] >= bm25["R@5"] and ours["MRR@10"] >= bm25["MRR@10"], report
    assert ours["no_hit_of_sharing_pct"] <= 5.0
    assert report["oryxtui keyword mode (upstream's substring rule)"]["R@5"] <= ours["R@5"]


def test_a_repeated_line_never_shifts_which_entry_a_hit_names(workspace: Workspace) -> None:
    """Entries are told apart by text (a repeated line is one entry, as upstream hashes it):
    the hit must be the entry that holds the words, however many repeats stand before it."""
    service = MemoryService.open(workspace, Settings.model_validate({}))
    for text in ["hello there", "hello there", "fine, thanks", "hello there", "fine, thanks"]:
        service.save("ops", text, "archival")
    service.save("ops", "I ran a marathon in Porto", "archival")
    found = service.recall("ops", "Where was the marathon?")
    assert [e.content for e in found.entries] == ["I ran a marathon in Porto"]
