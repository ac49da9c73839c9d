"""Real OS processes: concurrent writers lose nothing; a writer killed mid-save tears nothing."""

from __future__ import annotations

import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from oryxtui.config import Settings
from oryxtui.memory import MemoryService
from oryxtui.memory.document import parse
from oryxtui.memory.format import Scope
from oryxtui.memory.history import memory_at
from oryxtui.workspace import Workspace
from tests.support import make_agent

# Real processes, terminals, browsers, installs or scale: one at a time (`--dist loadgroup`),
# so no two of them compete for the machine at the same moment.
pytestmark = [pytest.mark.system, pytest.mark.xdist_group("system")]

REPO = Path(__file__).resolve().parents[2]
# 50 kills in the normal run; ORYXTUI_CRASH_ROUNDS=500 for the long run (see the README).
CRASH_ROUNDS = int(os.environ.get("ORYXTUI_CRASH_ROUNDS", "50"))


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
    seed.max_entry_chars = 50_000  # long seed entries, as a hand edit could write them
    for index in range(40):
        seed.save("victim", f"seed-{index:03d} " + "s" * 20_000, "archival")
    seed_prefix = memory_file.read_bytes()
    rng = random.Random(1234)
    seen = 0
    for _round in range(CRASH_ROUNDS):
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
    assert time.monotonic() - started < 5  # no stale lock to wait out (that would be 10 s+)
    assert [p.name for p in memory_file.parent.iterdir() if p.name.endswith(".tmp")] == []
    assert "after the kills" in memory_file.read_text(encoding="utf-8")


def _kill_at_random(
    workspace: Workspace,
    mode: str,
    rng: random.Random,
    agent: str = "victim",
    after: str | None = None,
) -> list[str]:
    """Start a writer, let it run a random moment — from when it is ready, or from when it
    first prints `after` — SIGKILL it; return what it printed."""
    writer = _worker(mode, str(workspace.root), agent, "kill", "0")
    assert writer.stdout is not None
    assert writer.stdout.readline().strip() == "ready"
    printed: list[str] = []
    while after is not None and after not in printed:
        line = writer.stdout.readline()
        assert line, f"the writer ended before it printed {after!r}"
        printed += line.split()
    time.sleep(rng.uniform(0.0, 0.08))
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait(timeout=30)
    return printed + writer.stdout.read().split()


def test_killed_sqlite_writers_never_corrupt_the_database(workspace: Workspace) -> None:
    import sqlite3

    rng = random.Random(99)
    acknowledged = 0
    for _round in range(CRASH_ROUNDS // 2):
        printed = _kill_at_random(workspace, "sqlite-forever", rng)
        acknowledged += len([word for word in printed if word.isdigit()])
        with sqlite3.connect(workspace.db_path) as connection:
            assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            # A writer killed before its first save may not have created the schema yet.
            tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
            stored = 0
            if "memory_entries" in tables:
                (stored,) = connection.execute("SELECT count(*) FROM memory_entries").fetchone()
        assert stored >= acknowledged  # every save that returned is there
    assert acknowledged > 0, "no save ever returned: the test proved nothing"
    started = time.monotonic()
    service = MemoryService.open(
        workspace, Settings.model_validate({"memory": {"backend": "sqlite"}})
    )
    service.save("victim", "after the kills", "archival")
    assert time.monotonic() - started < 5  # no stale lock to wait out (that would be 10 s+)


def test_no_session_is_lost_once_a_chat_turn_has_returned(workspace: Workspace) -> None:
    import json
    import sqlite3

    make_agent(workspace, "victim")
    rng = random.Random(7)
    returned = 0
    for round_ in range(CRASH_ROUNDS // 5):
        # Every other writer is killed only once a turn has returned (then at a random moment
        # of the turns after it): on a busy machine a first turn can outlast the whole random
        # window, and every writer killed in its first turn proves nothing of what returned.
        after = "done" if round_ % 2 else None
        printed = _kill_at_random(workspace, "chat-forever", rng, after=after)
        returned += printed.count("done")
        if not workspace.db_path.exists():
            continue  # killed before it ever opened the database: nothing to check yet
        with sqlite3.connect(workspace.db_path) as connection:
            assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            tables = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if "sessions" not in {name for (name,) in tables}:
                assert returned == 0  # killed while making its tables (one transaction)
                continue
            row = connection.execute(
                "SELECT messages_json FROM sessions WHERE session_id = 'crash:tester:victim'"
            ).fetchone()
        messages = json.loads(row[0]) if row else []
        users = [m for m in messages if m["role"] == "user"]
        assert len(users) >= returned
        memory_file = workspace.memory_file("victim")
        if memory_file.exists():  # a writer killed before its first save never created it
            parse(memory_file.read_text(encoding="utf-8"))
    assert returned > 0, "no turn ever returned: the test proved nothing"


@pytest.mark.parametrize("backend", ["markdown", "sqlite"])
def test_two_processes_steering_beside_an_outside_writer_lose_nothing(
    workspace: Workspace, backend: str
) -> None:
    """Saves, edits and deletes from two processes while another program writes without the
    lock: nothing lost that was not deleted on purpose, every change in the history once."""
    memory_file = make_agent(workspace, "shared") / "MEMORY.md"
    settings = Settings.model_validate({"memory": {"backend": backend}})
    service = MemoryService.open(workspace, settings)
    assert service.count_archival("shared") == 0  # (and the tables exist)
    mode = "sqlite-steer" if backend == "sqlite" else "steer"
    writers = [_worker(mode, str(workspace.root), "shared", f"p{n}", "30") for n in range(2)]
    outside = [f"outside-{n:03d}" for n in range(40)]
    # Lines written into a file a save had switched out between the writer's open and its
    # write: no program that ignores the lock can be protected there (docs/reliability.md).
    raced: set[str] = set()
    for index, text in enumerate(outside):
        line = f"- [2026-07-22 10:{index // 60:02d}:{index % 60:02d}] {text}"
        if backend == "markdown":  # as `echo >> MEMORY.md`: no lock, one write
            if not memory_file.exists():
                memory_file.write_text(f"## 核心记忆\n## 归档记忆\n{line}\n")
            else:
                descriptor = os.open(memory_file, os.O_WRONLY | os.O_APPEND)
                os.write(descriptor, f"{line}\n".encode())
                if os.fstat(descriptor).st_ino != os.stat(memory_file).st_ino:
                    raced.add(text)  # written into the file a save displaced
                os.close(descriptor)
        else:  # upstream OryxOS inserting rows
            with sqlite3.connect(workspace.db_path, timeout=30) as db:
                db.execute(
                    "INSERT INTO memory_entries (agent_name, scope, content, created_at)"
                    " VALUES ('shared', 'ARCHIVAL', ?, '2026-07-22 10:00:00')",
                    (text,),
                )
        time.sleep(random.uniform(0, 0.05))  # spread over the writers' work, not a wait
    for writer in writers:
        assert writer.wait(timeout=120) == 0
    snapshot = service.snapshot("shared")
    present = [e.content for e in snapshot.archival]
    kept = {f"p{n}-{s:05d}" for n in range(2) for s in range(0, 30, 3)}
    edited = {f"p{n}-{s:05d} edited" for n in range(2) for s in range(1, 30, 3)}
    # Every outside line is there but those written into a displaced file (which may be).
    assert set(present) - set(outside) == kept | edited and len(present) == len(set(present))
    assert set(outside) - raced <= set(present)
    outside = [text for text in outside if text in present]
    assert service.lost("shared") == []

    history = service.history("shared")[::-1]  # oldest first
    saves = [e.content for r in history if r.op == "save" for e in r.added]
    assert sorted(saves) == sorted(f"p{n}-{s:05d}" for n in range(2) for s in range(30))
    assert sorted(e.content for r in history if r.op == "edit" for e in r.added) == sorted(edited)
    deleted = [e.content for r in history if r.op == "delete" for e in r.removed]
    assert sorted(deleted) == sorted(f"p{n}-{s:05d}" for n in range(2) for s in range(2, 30, 3))
    found = [e.content for r in history if r.op in ("outside", "baseline") for e in r.added]
    found += [
        e.content
        for r in service._recorded().changes("shared").records
        if r.op == "baseline"
        for e in r.added
    ]
    assert sorted(found) == sorted(outside)  # each outside line found exactly once
    assert not [e for r in history if r.op == "outside" for e in r.removed]
    records = service._recorded().changes("shared").records
    assert memory_at(records, records[-1].n) == {
        Scope.CORE: [e.line for e in snapshot.core],
        Scope.ARCHIVAL: [e.line for e in snapshot.archival],
    }
