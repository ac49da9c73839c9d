"""The past at a bounded cost (issue 56, item 5), its parts: the timeline gives, for every
change, exactly the memory the whole replay gives — from kept states, followed as records are
added, started again for another history — and a key's budget of the server's time for costly
reads refuses (429, with when to try again) only a caller that spent it, and refills."""

from __future__ import annotations

from datetime import datetime

import pytest

from oryxtui.api.limits import CostBudget
from oryxtui.config import Settings
from oryxtui.errors import TooManyRequests
from oryxtui.memory import MemoryService
from oryxtui.memory.history import memory_at, timeline
from oryxtui.memory.history.timeline import Timeline
from oryxtui.workspace import Workspace
from tests.support import Ticking, agents_with_notes


def _lived(workspace: Workspace, changes: int) -> MemoryService:
    """A memory that lived: saves, replacements, edits, moves, deletes, an outside edit."""
    agents_with_notes(workspace, "ops")
    memory = MemoryService.open(workspace, Settings(), clock=Ticking())
    for n in range(changes):
        entries = memory.snapshot("ops").archival
        if n % 7 == 3 and entries:
            memory.replace("ops", entries[n % len(entries)].id, f"fact {n} is now {n * 3}")
        elif n % 11 == 5 and entries:
            memory.delete("ops", entries[0].id)
        elif n % 13 == 6 and entries:
            memory.change("ops", entries[-1].id, None, "core")
        elif n % 17 == 8:
            with workspace.memory_file("ops").open("a", encoding="utf-8") as opened:
                opened.write(f"- [2026-07-03 10:{n % 60:02d}] written by another program {n}\n")
            memory.reconcile("ops")
        else:
            memory.save("ops", f"fact {n} is {n}")
    return memory


def test_the_timeline_gives_what_the_whole_replay_gives_at_every_change(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(timeline, "EVERY", 4)  # many kept states, and replays between them
    memory = _lived(workspace, 60)
    records = memory.store.changes("ops").records  # type: ignore[attr-defined]
    kept = Timeline()
    numbers = [record.n for record in records]
    for n in [0, *numbers, numbers[-1] + 5]:
        assert kept.memory_at(records, n) == memory_at(records, n), n
    # Followed as the history grows (only the new records are replayed) …
    for n in range(60, 75):
        memory.save("ops", f"later fact {n}")
    grown = memory.store.changes("ops").records  # type: ignore[attr-defined]
    for n in [record.n for record in grown][-20:]:
        assert kept.memory_at(grown, n) == memory_at(grown, n), n
    # … and started again for another history (compacted, or another memory's).
    other = grown[5:]
    assert kept.memory_at(other, other[3].n) == memory_at(other, other[3].n)


def test_the_service_answers_as_of_from_its_timeline(workspace: Workspace) -> None:
    memory = _lived(workspace, 40)
    records = memory.store.changes("ops").records  # type: ignore[attr-defined]
    middle = records[len(records) // 2]
    assert middle.time is not None
    snapshot, _, n = memory.as_of_time("ops", datetime.fromisoformat(middle.time))
    expected = memory_at(records, n)
    assert expected is not None
    assert [e.line for e in snapshot.archival] == expected[snapshot.archival[0].scope]


def test_a_budget_refuses_only_the_caller_that_spent_it_and_refills() -> None:
    now = [100.0]
    budget = CostBudget(seconds=1.0, per_second=0.5, monotonic=lambda: now[0])
    budget.check("key 'reader'", "the memory as of a moment")
    budget.charge("key 'reader'", 1.5)  # a costly read past the whole share
    with pytest.raises(
        TooManyRequests, match=r"key 'reader' has used its share.*try again in 1\.0 s"
    ):
        budget.check("key 'reader'", "the memory as of a moment")
    budget.check("key 'other'", "the memory as of a moment")  # others are not held back
    now[0] += 1.0  # refilled by half a second's worth
    budget.check("key 'reader'", "the memory as of a moment")
