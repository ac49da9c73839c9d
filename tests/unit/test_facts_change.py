"""Facts that change (issue 45): replace as a change of its own, chains, bring-back, the memory
as of a time, recall of the past, suggestions of what a save replaces — on MEMORY.md files,
oryxos.db and a real PostgreSQL."""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oryxtui.config import Settings
from oryxtui.errors import StaleEntry, UsageError
from oryxtui.memory import MemoryService
from oryxtui.memory.format import Scope, entry_from_line
from oryxtui.memory.history import Actor, current_actor, history_path
from oryxtui.memory.history.records import parsed
from oryxtui.memory.tokens import terms
from oryxtui.memory.updates import Subjects, reports_done, terms_of
from oryxtui.workspace import Workspace
from tests.backends import BACKENDS, backend_settings
from tests.support import Ticking, make_agent


def open_service(
    request: pytest.FixtureRequest, workspace: Workspace, backend: str, **extra: object
) -> tuple[MemoryService, Ticking]:
    make_agent(workspace, "ops")
    clock = Ticking()
    settings = backend_settings(request, backend)
    if extra:
        settings = Settings.model_validate({**settings.model_dump(), **extra})
    return MemoryService.open(workspace, settings, clock=clock), clock


def contents(service: MemoryService) -> list[str]:
    return [entry.content for entry in service.snapshot("ops").archival]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_chain_of_replacements_keeps_only_the_current_version(
    request: pytest.FixtureRequest, workspace: Workspace, backend: str
) -> None:
    service, _ = open_service(request, workspace, backend)
    first = service.save("ops", "Staging host is stg-1.")
    service.save("ops", "Deploys are on Tuesdays.")
    old, second = service.replace("ops", first.id, "Staging host is stg-2.")
    assert old == first and second.scope is Scope.ARCHIVAL
    assert second.time is not None and first.time is not None and second.time > first.time
    # The replacement is the newest entry; the old one is gone from the memory and the block.
    assert contents(service) == ["Deploys are on Tuesdays.", "Staging host is stg-2."]
    third = service.replace("ops", second.id, "Staging host is stg-3.")[1]
    block = service.build_context("ops")
    assert "stg-3" in block and "stg-1" not in block and "stg-2" not in block
    versions = service.replaced_versions("ops")
    assert [v.entry.content for v in versions] == [
        "Staging host is stg-2.",
        "Staging host is stg-1.",
    ]
    assert {v.current.id for v in versions} == {third.id}  # the chain followed to its end
    assert versions[1].successor.content == "Staging host is stg-2."
    assert versions[0].until is not None and versions[0].until > versions[1].until  # type: ignore[operator]
    # Recall finds only what is true now.
    assert [h.entry.content for h in service.recall("ops", "staging host").hits] == [
        "Staging host is stg-3."
    ]
    # The history says what happened; bring-back restores the replaced version.
    record = next(r for r in service.history("ops") if r.op == "replace")
    assert record.removed[0].content == "Staging host is stg-2."
    assert record.added[0].content == "Staging host is stg-3."
    assert [e.content for e in service.bring_back("ops", record.n)] == ["Staging host is stg-2."]
    assert [v.entry.content for v in service.replaced_versions("ops")] == ["Staging host is stg-1."]
    with pytest.raises(StaleEntry):
        service.replace("ops", first.id, "Staging host is stg-9.")  # no longer there
    with pytest.raises(UsageError, match="the entry's own"):
        service.replace("ops", third.id, "Staging host is stg-3.")


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_memory_as_of_a_time_and_recall_of_the_past(
    request: pytest.FixtureRequest, workspace: Workspace, backend: str
) -> None:
    service, clock = open_service(request, workspace, backend)
    first = service.save("ops", "The on-call engineer this week is Priya.")
    service.save("ops", "Release notes go to the releases channel.")
    before_change = clock.now + timedelta(seconds=30)
    clock.now += timedelta(hours=1)
    service.replace("ops", first.id, "The on-call engineer this week is Marco.")
    snapshot, block, n = service.as_of_time("ops", before_change)
    assert [e.content for e in snapshot.archival] == [
        "The on-call engineer this week is Priya.",
        "Release notes go to the releases channel.",
    ]
    assert "Priya" in block and "Marco" not in block and n >= 2
    past = service.recall_past("ops", "on-call engineer", as_of=before_change)
    assert [h.entry.content for h in past.hits] == ["The on-call engineer this week is Priya."]
    assert past.hits[0].newer is not None and "Marco" in past.hits[0].newer
    assert past.hits[0].to_json()["replaced"]["current"]["content"].endswith("Marco.")  # type: ignore[index]
    both = service.recall_past("ops", "on-call engineer", include_replaced=True)
    assert {h.entry.content: h.newer is None for h in both.hits} == {
        "The on-call engineer this week is Marco.": True,
        "The on-call engineer this week is Priya.": False,
    }
    with pytest.raises(UsageError, match=r"starts at .*, after 20"):
        service.as_of_time("ops", datetime(2020, 1, 1))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_save_names_what_it_may_replace_and_a_person_acts_on_it(
    request: pytest.FixtureRequest, workspace: Workspace, backend: str
) -> None:
    service, _ = open_service(request, workspace, backend)
    for n in range(30):
        service.save("ops", f"Routine note {n}: synthetic checks for service {n} all green.")
    old = service.save("ops", "Staging host for ledger is stg-11.internal.")
    saved = service.save_checked("ops", "Staging host for ledger is now stg-14.internal.")
    assert [u.entry.id for u in saved.may_update] == [old.id]
    assert 0 < saved.may_update[0].score <= 1
    # A repeat, and the same thing said of something else, are not updates.
    repeat = service.save_checked("ops", "Staging host for ledger is now stg-14.internal.")
    assert repeat.may_update == ()
    assert service.suggestions("ops")[0][:2] == (old, saved.entry)
    service.dismiss("ops", old.id, saved.entry.id)
    assert service.suggestions("ops") == []  # remembered
    with pytest.raises(UsageError, match="No open suggestion"):
        service.dismiss("ops", old.id, saved.entry.id)
    # Three versions of one fact saved side by side look like a series: no suggestion then.
    assert service.save_checked("ops", "Staging host for ledger: stg-15.internal.").may_update == ()
    target = service.save("ops", "Primary region for ledger is eu-west-1.")
    again = service.save_checked("ops", "Primary region for ledger is now us-east-2.")
    assert [u.entry for u in again.may_update] == [target]
    retired = service.supersede("ops", target.id, again.entry.id)
    assert retired == target and target.content not in contents(service)
    version = next(v for v in service.replaced_versions("ops") if v.entry.id == target.id)
    assert version.successor == again.entry


def test_an_mcp_replacement_waits_for_review_then_replaces(workspace: Workspace) -> None:
    make_agent(workspace, "ops")
    service = MemoryService.open(workspace, Settings(), clock=Ticking())
    old = service.save("ops", "The freeze window is Dec 18 to Jan 3.")
    token = current_actor.set(Actor("mcp:Claude-Code"))
    try:
        service.replace("ops", old.id, "The freeze window is Dec 20 to Jan 5.")
    finally:
        current_actor.reset(token)
    assert contents(service) == ["The freeze window is Dec 18 to Jan 3."]  # held
    (held,) = service.held("ops")
    assert held.proposes == "replace" and held.was == old
    service.approve("ops", [held.id])
    assert contents(service) == ["The freeze window is Dec 20 to Jan 5."]
    assert [v.entry for v in service.replaced_versions("ops")] == [old]


def test_a_line_rewritten_in_an_editor_is_a_replacement(workspace: Workspace) -> None:
    make_agent(workspace, "ops")
    service = MemoryService.open(workspace, Settings(), clock=Ticking())
    service.save("ops", "Deploys are on Tuesdays.")
    service.save("ops", "The VPN gateway is 10.0.0.1.")
    path = workspace.memory_file("ops")
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("10.0.0.1", "10.0.0.7"), encoding="utf-8")
    service.reconcile("ops")
    (version,) = service.replaced_versions("ops")
    assert version.entry.content == "The VPN gateway is 10.0.0.1."
    assert version.successor.content == "The VPN gateway is 10.0.0.7."
    assert version.actor == "outside"


def test_records_keep_successor_and_suggestions_and_refuse_forged_ones(
    workspace: Workspace,
) -> None:
    line = {"scope": "archival", "line": "- [2026-07-01 09:00:00] new"}
    good = {"n": 3, "op": "replace", "actor": "cli", "before": [line], "successor": line}
    record = parsed(json.dumps(good), 2)
    assert record is not None and record.succeeded_by == (Scope.ARCHIVAL, line["line"])
    assert parsed(json.dumps(record.stored()), 2) == record
    saved = {"n": 4, "op": "save", "actor": "agent", "after": [line], "may_update": [line]}
    assert parsed(json.dumps(saved), 3).may_update == ((Scope.ARCHIVAL, line["line"]),)  # type: ignore[union-attr]
    for forged in (
        {**good, "successor": {"scope": "nowhere", "line": "x"}},
        {**good, "successor": "a line"},
        {**saved, "may_update": [{"scope": "core", "line": "two\nlines"}]},
        {**saved, "may_update": "everything"},
    ):
        assert parsed(json.dumps(forged), 2) is None
    # A history with a forged line is read past it: the memory's other records stand.
    make_agent(workspace, "ops")
    service = MemoryService.open(workspace, Settings(), clock=Ticking())
    service.save("ops", "kept")
    with history_path(workspace.memory_file("ops")).open("a", encoding="utf-8") as file:
        file.write(json.dumps({**good, "n": 99, "successor": 5}) + "\n")
    assert service.replaced_versions("ops") == []


def entry(text: str) -> object:
    return entry_from_line(f"- [2026-07-01 09:00:00] {text}", Scope.ARCHIVAL)


def test_the_check_tells_updates_from_repeats_logs_and_other_subjects() -> None:
    routine = [f"Nightly backup of ledger finished in {n} minutes." for n in range(3)]
    routine += [f"Looked up the weather for Ana: {n} degrees." for n in range(3)]
    routine += [f"Note {n} about something else entirely, number {n}." for n in range(40)]
    facts = [
        "Staging host for ledger is stg-11.internal.",
        "Hannah's home wifi network is called Lighthouse.",
    ]
    subjects = Subjects(entry(text) for text in [*routine, *facts])  # type: ignore[misc]
    found = subjects.updated_by("Staging host for ledger is now stg-14.internal.")
    assert [u.entry.content for u in found] == [facts[0]]  # type: ignore[attr-defined]
    assert subjects.updated_by(facts[0]) == []  # a repeat
    assert subjects.updated_by("Nightly backup of ledger finished in 9 minutes.") == []  # a series
    assert subjects.updated_by("Looked up the weather for Ana: 30 degrees.") == []  # done
    assert reports_done("Deployed gateway 1.2") and not reports_done("Staging host is x")
    assert subjects.updated_by("") == [] and Subjects().updated_by("anything") == []


def test_a_compacted_history_keeps_what_was_replaced() -> None:
    from oryxtui.memory.history import change
    from oryxtui.memory.history.log import baseline
    from oryxtui.memory.history.validity import retired

    old, new = entry("the gateway is 10.0.0.1"), entry("the gateway is 10.0.0.7")
    made = [
        dataclasses.replace(
            change("save", Actor("cli"), after=[old]), n=1, time="2026-07-01T09:00:00"
        ),
        dataclasses.replace(
            change("replace", Actor("agent"), before=[old], after=[new]),
            n=2,
            time="2026-07-02T09:00:00",
        ),
    ]
    folded = baseline(made)
    read = parsed(json.dumps(folded.stored()), 0)
    assert read is not None and read.op in ("baseline", "untracked")
    (version,) = retired([read]).values()
    assert version.key == (Scope.ARCHIVAL, old.line)  # type: ignore[attr-defined]
    assert version.until == "2026-07-02T09:00:00" and version.actor == "agent"
    assert version.successor == (Scope.ARCHIVAL, new.line)  # type: ignore[attr-defined]
    forged = {**folded.stored(), "retired": [{"scope": "archival", "line": "x"}]}
    assert parsed(json.dumps(forged), 0) is None


def test_the_check_follows_other_writers(workspace: Workspace) -> None:
    make_agent(workspace, "ops")
    service = MemoryService.open(workspace, Settings(), clock=Ticking())
    for n in range(30):
        service.save("ops", f"Routine check {n} of service s{n}: all green.")
    assert service.save_checked("ops", "Unrelated words entirely.").may_update == ()
    path = workspace.memory_file("ops")  # another program appends, behind oryxtui's back
    path.write_text(
        path.read_text() + "- [2026-07-02 09:00:00] Primary region for ledger is eu-west-1.\n"
    )
    later = service.save_checked("ops", "Primary region for ledger is now us-east-2.")
    assert [u.entry.content for u in later.may_update] == [
        "Primary region for ledger is eu-west-1."
    ]
    lines = path.read_text().splitlines()  # … or rewrites one in the middle: read again whole
    path.write_text("\n".join(line for line in lines if "check 3 " not in line) + "\n")
    assert service.may_update("ops", "Primary region for ledger: ap-south-1.") != []
    off = MemoryService.open(
        workspace, Settings.model_validate({"memory": {"may_update": False}}), clock=Ticking()
    )
    assert off.save_checked("ops", "Primary region for ledger is now eu-north-1.").may_update == ()


@settings(deadline=None, max_examples=300)
@given(st.lists(st.text(alphabet=st.sampled_from("aZé ß'’\n-_0部署ﬁΣ.")), max_size=6))
def test_terms_read_in_one_pass_are_each_texts_own(texts: list[str]) -> None:
    assert terms_of(texts) == [frozenset(terms(text)) for text in texts]


def test_in_a_big_memory_the_check_weighs_only_the_newest_entries(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A save into a memory of a million entries took 9 s and 1.3 GB when the check weighed
    them all: it reads only the newest CHECKED_BYTES (an older entry is not suggested)."""
    from oryxtui.memory.service import currency

    make_agent(workspace, "ops")
    service = MemoryService.open(workspace, Settings(), clock=Ticking())
    service.save("ops", "Staging host for ledger is stg-11.internal.")  # the oldest
    for n in range(200):
        service.save("ops", f"Routine check {n} of service s{n}: all green.")
    newer = service.save("ops", "Primary region for ledger is eu-west-1.")
    monkeypatch.setattr(currency, "CHECKED_BYTES", 4096)  # well under the file's size
    fresh = MemoryService.open(workspace, Settings(), clock=Ticking())
    assert [u.entry for u in fresh.may_update("ops", "Primary region for ledger: us-east-2.")] == [
        newer
    ]
    assert fresh.may_update("ops", "Staging host for ledger is now stg-14.internal.") == []
    whole = MemoryService.open(workspace, Settings(), clock=Ticking())
    monkeypatch.setattr(currency, "CHECKED_BYTES", 1 << 30)
    assert [u.entry.content for u in whole.may_update("ops", "Staging host for ledger: stg-9.")]
