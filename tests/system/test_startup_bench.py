"""The start-up benchmark sees the program it exists for: the real `oryxtui` dashboard in tmux
reaches its first usable frame (content and footer), measured beside a minimal Textual app —
so a change to the first frame cannot make `bench_startup.py` skip oryxtui in silence."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.system, pytest.mark.xdist_group("system")]

BENCH = Path(__file__).parents[1] / "benchmarks" / "bench_startup.py"


def test_the_startup_benchmark_measures_oryxtui(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(BENCH), "--runs", "1", "--peers", str(tmp_path / "no-peers")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    frame = report["oryxtui"]["first_usable_frame"]
    assert 0 < frame["median_ms"] < 30_000 and frame["n"] == 1
    assert "minimal_textual_app" in report
    assert set(report["skipped"]) == {"toolong", "harlequin", "posting"}  # not installed here
