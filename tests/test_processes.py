"""Real OS processes: concurrent writers lose nothing; a writer killed mid-save tears nothing."""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from oryxtui.config import Settings
from oryxtui.memory import MemoryService
from oryxtui.memory.format import parse
from oryxtui.workspace import Workspace
from tests.support import make_agent

REPO = Path(__file__).resolve().parent.parent


def _worker(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.workers", *args],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )


def test_eight_processes_appending_at_once_lose_nothing(workspace: Workspace) -> None:
    make_agent(workspace, "shared")
    writers = [_worker("mixed", str(workspace.root), "shared", f"w{n}", "50") for n in range(8)]
    for writer in writers:
        assert writer.wait(timeout=120) == 0
    document = parse(workspace.memory_file("shared").read_text(encoding="utf-8"))
    saved = [e.content for e in [*document.core_entries(), *document.archival_entries()]]
    assert len(saved) == 400
    assert sorted(saved) == sorted(f"w{n}-{s:05d}" for n in range(8) for s in range(50))
    core = {e.content for e in document.core_entries()}
    assert core == {f"w{n}-{s:05d}" for n in range(8) for s in range(0, 50, 3)}
    # Each writer's own entries keep their order.
    for n in range(8):
        mine = [
            c for c in (e.content for e in document.archival_entries()) if c.startswith(f"w{n}-")
        ]
        assert mine == sorted(mine)


_LINE = re.compile(r"- \[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] kill-(\d{5})")


def test_a_writer_killed_at_random_points_never_tears_the_file(workspace: Workspace) -> None:
    make_agent(workspace, "victim")
    memory_file = workspace.memory_file("victim")
    # A large file makes each write take long enough for kills to land mid-write.
    seed = MemoryService.open(workspace, Settings())
    for index in range(40):
        seed.save("victim", f"seed-{index:03d} " + "s" * 20_000, "archival")
    seed_prefix = memory_file.read_bytes()
    rng = random.Random(1234)
    seen = 0
    for _round in range(25):
        writer = _worker("forever", str(workspace.root), "victim", "kill", "0")
        assert writer.stdout is not None
        assert writer.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.0, 0.08))
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait(timeout=30)
        raw = memory_file.read_bytes()
        assert raw.startswith(seed_prefix), "the existing content was damaged"
        tail = raw[len(seed_prefix) :].decode("utf-8")
        assert tail == "" or tail.endswith("\n"), f"torn write: {tail[-80:]!r}"
        numbers = [int(_LINE.fullmatch(line)[1]) for line in tail.splitlines()]  # type: ignore[index]
        # Each round's writer restarts at 00000; entries of all rounds so far are all there.
        assert len(numbers) >= seen
        seen = len(numbers)
        leftovers = [p.name for p in memory_file.parent.iterdir() if p.name.endswith(".tmp")]
        assert len(leftovers) <= 1
    # The lock is not left held: the next writer gets it at once.
    started = time.monotonic()
    seed.save("victim", "after the kills", "archival")
    assert time.monotonic() - started < 2
    assert [p.name for p in memory_file.parent.iterdir() if p.name.endswith(".tmp")] == []
    assert "after the kills" in memory_file.read_text(encoding="utf-8")
