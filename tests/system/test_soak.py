"""The soak in its short form: every kind of writer at once, then nothing may be missing.

The long form is `python -m tests.reliability.soak --seconds 60` (see the README).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# Real processes, terminals, browsers, installs or scale: one at a time (`--dist loadgroup`),
# so no two of them compete for the machine at the same moment.
pytestmark = [pytest.mark.system, pytest.mark.xdist_group("system")]

ROOT = Path(__file__).resolve().parents[2]


def test_a_short_soak_with_every_writer_at_once_loses_nothing() -> None:
    seconds = os.environ.get("ORYXTUI_SOAK_SECONDS", "6")
    result = subprocess.run(
        [sys.executable, "-m", "tests.reliability.soak", "--seconds", seconds],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=float(seconds) * 5 + 120,
    )
    assert result.stdout, result.stderr
    report = json.loads(result.stdout)
    print(json.dumps(report, indent=2, ensure_ascii=False))  # the counts, with `pytest -s`
    assert report["ok"], (report["violations"], report["errors"], result.stderr[-2000:])
    assert result.returncode == 0
    # Every kind of writer really ran, and the editors really did overwrite saves.
    assert all(report["saves"].get(kind, 0) > 0 for kind in ("cli", "library", "loop"))
    assert report["editor_saves"]["rename"] > 0 and report["editor_saves"]["truncate"] > 0
    assert report["reported_lost"] > 0 and report["restored"] == report["reported_lost"]
    assert report["dashboard_equals_disk"] and report["dashboard_switches"] > 0
