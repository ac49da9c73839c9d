"""The check's term index kept beside MEMORY.md (issue 56, item 4): a process that saves once
reads it rather than working out every entry's terms; it is private, follows the memory's
appends, and anything wrong with it — damaged, of another memory, unwritable — only makes it
anew: the check's answer is the same either way."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from oryxtui.config import Settings
from oryxtui.memory import MemoryService
from oryxtui.memory.terms_file import read_terms
from oryxtui.workspace import Workspace
from tests.support import agents_with_notes

ROUTINE = [f"Routine check {n} of service s{n}: all green." for n in range(80)]
OLD, NEW = "Staging host for ledger is stg-11.", "Staging host for ledger is now stg-14."


def _fresh(workspace: Workspace) -> MemoryService:
    return MemoryService.open(workspace, Settings())  # a new process: nothing indexed


def _terms(workspace: Workspace) -> Path:
    memory = workspace.memory_file("ops")
    return memory.with_name(memory.name + ".terms")


def _filled(workspace: Workspace) -> Workspace:
    agents_with_notes(workspace, "ops")
    writer = _fresh(workspace)
    for text in [*ROUTINE, OLD]:
        writer.save("ops", text)
    return workspace


def test_the_check_keeps_its_index_and_a_new_process_reads_it(workspace: Workspace) -> None:
    _filled(workspace)
    first = _fresh(workspace).may_update("ops", NEW)
    kept = _terms(workspace)
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600  # as private as the memory
    lines = _fresh(workspace).snapshot("ops").archival
    index = read_terms(kept, [entry.line for entry in lines])
    assert index is not None and len(index) == len(lines)
    assert any("stg" in held for held in index) and "ledger" in index[-1]
    again = _fresh(workspace).may_update("ops", NEW)  # read from the file: the same answer
    assert [u.entry for u in again] == [u.entry for u in first] and again[0].entry.content == OLD
    # Saves since are followed (the file is not written for each: it is a few lines behind).
    _fresh(workspace).save("ops", "Primary region for ledger is eu-west-1.")
    follows = _fresh(workspace).may_update("ops", "Primary region for ledger is now us-east-2.")
    assert [u.entry.content for u in follows] == ["Primary region for ledger is eu-west-1."]


def test_a_damaged_or_foreign_index_is_made_anew(workspace: Workspace) -> None:
    _filled(workspace)
    expected = [u.entry for u in _fresh(workspace).may_update("ops", NEW)]
    kept = _terms(workspace)
    for wrong in (b"\x00\xff not json", b'{"format": "oryxtui-terms/2"}', b"[]"):
        kept.write_bytes(wrong)
        assert [u.entry for u in _fresh(workspace).may_update("ops", NEW)] == expected
        assert json.loads(kept.read_bytes())["count"] == len(ROUTINE) + 2  # made anew
    # Of these very entries, but not terms (a hand-made file): no traceback, made anew.
    data = json.loads(kept.read_bytes())
    kept.write_text(json.dumps(data | {"terms": [[1]] * data["count"]}))
    assert [u.entry for u in _fresh(workspace).may_update("ops", NEW)] == expected
    assert json.loads(kept.read_bytes())["terms"][0] != [1]
    # An index of other entries (a line edited by hand): its digest does not match.
    data = json.loads(kept.read_bytes())
    kept.write_text(json.dumps(data | {"digest": "0" * 64}))
    assert [u.entry for u in _fresh(workspace).may_update("ops", NEW)] == expected
    assert json.loads(kept.read_bytes())["digest"] != "0" * 64


def test_the_check_against_held_saves_leaves_the_index_as_it_was(workspace: Workspace) -> None:
    """Saves waiting for review are counted while a save is checked, then gone again — two of
    them sharing words included."""
    from oryxtui.memory.format import Scope, entry_from_line

    _filled(workspace)
    memory = _fresh(workspace)
    subjects = memory._subjects_of("ops")
    assert subjects is not None
    before = (list(subjects.lines), {t: list(p) for t, p in subjects.postings.items()})
    held = [
        entry_from_line(f"- [2026-12-07 10:03] {text}", Scope.ARCHIVAL)
        for text in (
            "Staging database for ledger is quokka-3.",
            "Payout staging runs on quokka-web.",
        )
    ]
    found = memory.may_update("ops", "Staging database for ledger is quokka-7.", held)
    assert [u.entry for u in found] == [held[0]] and found[0].held
    assert (subjects.lines, subjects.postings) == before


def test_a_running_service_writes_the_index_only_when_it_is_far_behind(
    workspace: Workspace,
) -> None:
    """A service that holds the index (the dashboard, `serve`) follows what other programs
    append and writes the file again only once it is TERMS_BEHIND entries behind — not once
    for every append it followed."""
    from oryxtui.memory.service.currency import TERMS_BEHIND

    _filled(workspace)
    running = _fresh(workspace)
    running.may_update("ops", NEW)  # reads the file: its index is the file's
    kept = _terms(workspace)
    written = kept.read_bytes()
    for n in range(3):
        _fresh(workspace).save("ops", f"Nightly backup {n} of ledger finished.")  # another program
        assert [u.entry.content for u in running.may_update("ops", NEW)] == [OLD]
    assert kept.read_bytes() == written  # followed, not written again
    for n in range(TERMS_BEHIND):
        _fresh(workspace).save("ops", f"Hourly check {n} of payouts: green.")
    running.may_update("ops", NEW)
    assert json.loads(kept.read_bytes())["count"] == len(ROUTINE) + 2 + 3 + TERMS_BEHIND
