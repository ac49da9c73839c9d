"""Counted words from one place: every count-bearing message reads right with 0, 1 and 2."""

from __future__ import annotations

import json

import pytest

from oryxtui.agent.providers.offline import OfflineModel
from oryxtui.phrases import counted, entries, were


@pytest.mark.parametrize(
    ("count", "said"),
    [(0, "0 turns were"), (1, "1 turn was"), (2, "2 turns were"), (1000, "1,000 turns were")],
)
def test_a_count_and_its_verb_agree(count: int, said: str) -> None:
    assert f"{counted(count, 'turn')} {were(count)}" == said


def test_entries_and_irregular_plurals() -> None:
    assert [entries(n) for n in (0, 1, 2)] == ["0 entries", "1 entry", "2 entries"]
    assert counted(2, "reply", "replies") == "2 replies" and counted(1, "reply") == "1 reply"


@pytest.mark.parametrize(("count", "word"), [(1, "1 thing"), (2, "2 things")])
def test_the_offline_model_counts_what_it_remembers(count: int, word: str) -> None:
    result = {"entries": [f"- fact {i}" for i in range(count)], "keyword": "tea"}
    said = OfflineModel._after_tool([{"role": "tool", "content": json.dumps(result)}])
    assert said.startswith(f"I remember {word} about tea:") and "(s)" not in said
    talked = {"turns": [{"time": "t", "user": "u"}] * count, "query": "tea"}
    said = OfflineModel._after_tool([{"role": "tool", "content": json.dumps(talked)}])
    assert said.startswith(f"We talked about tea {counted(count, 'time')}:")


@pytest.mark.parametrize("lost", [1, 2])
def test_doctor_says_was_or_were(lost: int, tmp_path) -> None:
    from oryxtui.config import Settings
    from oryxtui.memory import MemoryService
    from oryxtui.workspace import init_workspace
    from tests.support import cli, make_agent

    workspace = init_workspace(tmp_path / "w")
    make_agent(workspace, "ops")
    service = MemoryService.open(workspace, Settings())
    for n in range(lost):
        service.save("ops", f"fact {n}", "archival")
    path = workspace.memory_file("ops")
    kept = [line for line in path.read_text().split("\n") if "fact" not in line]
    path.write_text("\n".join(kept))
    said = cli("memory", "doctor", "--agent", "ops", "--root", str(workspace.root)).stdout
    verb = "was" if lost == 1 else "were"
    assert f"{entries(lost)} oryxtui saved to agent ops {verb} removed" in said


def test_what_was_brought_back_says_where_it_went() -> None:
    from oryxtui.memory.format import Scope, entry_from_line
    from oryxtui.phrases import brought_back

    one = [entry_from_line("- [2026-07-22 13:55:00] the old fact", Scope.ARCHIVAL)]
    said = brought_back("Restored", one)
    assert said == (
        "Restored 1 entry, from 2026-07-22 13:55:00: written at the end of the section with its "
        "own time, so it may stand after newer entries."
    )
    assert "2 entries: written at the end of the section with their own time, so they" in (
        brought_back("Brought back", one * 2)
    )
