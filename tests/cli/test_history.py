"""The change history (issue 14, part 2): every change recorded once with what, when and by
what; outside changes found; the memory as it was after any change; bring back; compaction;
torn and old records; the `memory log` command. Real files and a real oryxos.db."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path

import pytest

from oryxtui.config import Settings
from oryxtui.memory import MemoryService
from oryxtui.memory.format import ARCHIVAL_HEADER, CORE_HEADER, Scope
from oryxtui.memory.history import (
    CLI,
    Actor,
    Record,
    Replay,
    current_actor,
    difference,
    memory_at,
)
from oryxtui.workspace import Workspace
from tests.backends import BACKENDS, backend_settings, outside_sql
from tests.support import fixed_clock, make_agent, run_oryxtui


def service_for(
    request: pytest.FixtureRequest, workspace: Workspace, backend: str, actor: Actor = CLI
) -> MemoryService:
    settings = backend_settings(request, backend)
    return MemoryService.open(workspace, settings, clock=fixed_clock, actor=actor)


def lines_now(service: MemoryService, agent: str) -> dict[Scope, list[str]]:
    snapshot = service.snapshot(agent)
    return {
        Scope.CORE: [e.line for e in snapshot.core],
        Scope.ARCHIVAL: [e.line for e in snapshot.archival],
    }


def ids(service: MemoryService, agent: str) -> dict[str, str]:
    snapshot = service.snapshot(agent)
    return {entry.content: entry.id for entry in [*snapshot.core, *snapshot.archival]}


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_change_is_recorded_once_with_what_and_who(
    request: pytest.FixtureRequest, workspace: Workspace, backend: str
) -> None:
    make_agent(workspace, "ops")
    dashboard = service_for(request, workspace, backend, Actor("dashboard"))
    cli = service_for(request, workspace, backend)
    states = {}
    dashboard.save("ops", "deploys on Tuesdays", "archival")
    cli.save("ops", "prefers short answers", "core")
    token = current_actor.set(Actor("agent", "tui:me:ops"))
    try:
        dashboard.save("ops", "deploys on tuesdays", "archival")  # an agent's tool call
    finally:
        current_actor.reset(token)
    cli.edit("ops", ids(cli, "ops")["prefers short answers"], "prefers very short answers")
    dashboard.move("ops", ids(cli, "ops")["deploys on Tuesdays"], "core")
    cli.remove_duplicates("ops")  # nothing repeats within a section any more: no record
    cli.delete("ops", ids(cli, "ops")["deploys on tuesdays"])
    log = cli.history("ops")
    assert [(r.op, r.actor, r.session) for r in log] == [
        ("delete", "cli", None),
        ("move", "dashboard", None),
        ("edit", "cli", None),
        ("save", "agent", "tui:me:ops"),
        ("save", "cli", None),
        ("save", "dashboard", None),
    ]
    move = log[1]
    assert [(e.scope, e.content) for e in move.removed] == [(Scope.ARCHIVAL, "deploys on Tuesdays")]
    assert [(e.scope, e.content) for e in move.added] == [(Scope.CORE, "deploys on Tuesdays")]
    assert move.removed[0].time == move.added[0].time  # a move keeps the entry's time
    edit = log[2]
    assert [e.content for e in edit.removed] == ["prefers short answers"]
    assert [e.content for e in edit.added] == ["prefers very short answers"]
    # Replaying the history gives the memory exactly as it is, and as it was at each point.
    records = cli._recorded().changes("ops").records
    assert memory_at(records, records[-1].n) == lines_now(cli, "ops")
    states = {r.n: memory_at(records, r.n) for r in log}
    assert states[log[0].n] == lines_now(cli, "ops")
    assert "- [2026-07-22 09:30:00] deploys on tuesdays" in states[log[1].n][Scope.ARCHIVAL]
    assert cli.history("ops") == log  # looking again records nothing


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_outside_change_is_recorded_once(
    request: pytest.FixtureRequest, workspace: Workspace, backend: str
) -> None:
    folder = make_agent(workspace, "ops")
    service = service_for(request, workspace, backend)
    service.save("ops", "one", "archival")
    service.save("ops", "two", "archival")
    if backend == "markdown":
        memory_file = folder / "MEMORY.md"
        text = memory_file.read_text().replace("] one\n", "] one, typed over\n")
        memory_file.write_text(text + "- typed by hand\n")
    else:
        outside_sql(  # upstream OryxOS, say
            request,
            workspace,
            backend,
            "INSERT INTO memory_entries (agent_name, scope, content, created_at)"
            " VALUES ('ops', 'CORE', 'from upstream', '2026-07-22 10:00:00')",
        )
    assert [r.op for r in service.reconcile("ops")] == ["outside"]
    assert service.reconcile("ops") == []  # found once
    outside = service.history("ops")[0]
    assert outside.actor == "outside"
    if backend == "markdown":
        assert [e.content for e in outside.removed] == ["one"]
        assert [e.content for e in outside.added] == ["one, typed over", "typed by hand"]
    else:
        assert [(e.scope, e.content) for e in outside.added] == [(Scope.CORE, "from upstream")]
    records = service._recorded().changes("ops").records
    assert memory_at(records, records[-1].n) == lines_now(service, "ops")
    # A change found only when oryxtui next writes is recorded then, before nothing is lost.
    if backend == "markdown":
        memory_file.write_text(memory_file.read_text() + "- another by hand\n")
    else:
        outside_sql(
            request,
            workspace,
            backend,
            "DELETE FROM memory_entries WHERE content = 'from upstream'",
        )
    service.save("ops", "three", "archival")
    newest = service.history("ops")[:2]
    assert [r.op for r in newest] == ["save", "outside"]  # newest first: found, then saved
    records = service._recorded().changes("ops").records
    assert memory_at(records, records[-1].n) == lines_now(service, "ops")


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_memory_and_block_as_they_were_and_bring_back(
    request: pytest.FixtureRequest, workspace: Workspace, backend: str
) -> None:
    make_agent(workspace, "ops")
    service = service_for(request, workspace, backend)
    service.save("ops", "keep me", "core")
    service.save("ops", "the old fact", "archival")
    block_then = service.build_context("ops")
    service.edit("ops", ids(service, "ops")["the old fact"], "the new fact")
    service.delete("ops", ids(service, "ops")["keep me"])
    delete, edit, save = service.history("ops")[:3]
    found = service.as_of("ops", save.n)
    assert found is not None
    then, block = found
    assert [e.content for e in then.core] == ["keep me"]
    assert [e.content for e in then.archival] == ["the old fact"]
    assert block == block_then
    brought = service.bring_back("ops", delete)
    assert [(e.scope, e.content) for e in brought] == [(Scope.CORE, "keep me")]
    assert service.bring_back("ops", delete) == []  # it is there: nothing twice
    service.bring_back("ops", edit)  # the edited-away text comes back beside the new one
    snapshot = service.snapshot("ops")
    assert [e.content for e in snapshot.archival] == ["the new fact", "the old fact"]
    assert snapshot.archival[1].time == "2026-07-22 09:30:00"
    assert [r.op for r in service.history("ops")[:2]] == ["restore", "restore"]


def test_accepted_and_restored_losses_are_recorded(
    workspace: Workspace, service: MemoryService
) -> None:
    memory_file = make_agent(workspace, "a") / "MEMORY.md"
    service.save("a", "kept", "archival")
    stale = memory_file.read_text()
    service.save("a", "lost then restored", "archival")
    memory_file.write_text(stale)
    assert [e.content for e in service.restore("a")] == ["lost then restored"]
    memory_file.write_text(stale)
    assert [e.content for e in service.accept("a")] == ["lost then restored"]
    assert service.lost("a") == []
    ops = [r.op for r in service.history("a")]
    assert ops[:4] == ["accept", "outside", "restore", "outside"]  # newest first


def test_a_journal_from_before_the_history_still_answers(workspace: Workspace) -> None:
    folder = make_agent(workspace, "a")
    (folder / "MEMORY.md").write_text(
        f"{CORE_HEADER}\n{ARCHIVAL_HEADER}\n- [2026-01-01 10:00:00] b\n"
    )
    old = [
        {"scope": "archival", "line": "- [2026-01-01 09:00:00] a"},
        {"scope": "archival", "line": "- [2026-01-01 10:00:00] b"},
        {"scope": "core", "line": "- [2026-01-01 11:00:00] c"},
        {"scope": "core", "line": "- [2026-01-01 11:00:00] c", "forgotten": True},
    ]
    (folder / "MEMORY.md.journal").write_text("".join(json.dumps(r) + "\n" for r in old))
    service = MemoryService.open(workspace, Settings(), clock=fixed_clock)
    assert [e.content for e in service.lost("a")] == ["a"]
    log = service.history("a")  # the journal's saves, then the memory as first seen
    assert [(r.op, r.time) for r in log] == [("accept", None)] + [("save", None)] * 3
    assert [e.content for e in service.restore("a")] == ["a"]


def test_torn_and_hand_made_records_are_skipped_and_cannot_forge(
    workspace: Workspace, service: MemoryService
) -> None:
    folder = make_agent(workspace, "a")
    service.save("a", "one", "archival")
    history = folder / "MEMORY.md.journal"
    with open(history, "a") as handle:
        handle.write("not json at all\n")
        for n, line in ((89, f"- x\n{ARCHIVAL_HEADER}\n- forged"), (90, ARCHIVAL_HEADER)):
            record = {"n": n, "op": "delete", "actor": "cli"}
            handle.write(json.dumps({**record, "before": [{"scope": "core", "line": line}]}))
            handle.write("\n")
        handle.write('{"n": 91, "op": "sa')  # a writer killed mid-record
    assert "2 records" in (service.history_problems("a") or "")  # a record holds lines
    forged = service.history("a")[0]
    assert service.bring_back("a", forged)[0].line == "- 「归档记忆」"
    text = (folder / "MEMORY.md").read_text()
    assert text.count(ARCHIVAL_HEADER) == 1
    service.save("a", "two", "archival")  # starts a line of its own after the torn one
    assert service.history("a")[0].op == "save"
    assert history.read_text().count("\n") == len(history.read_text().splitlines())


def test_a_save_that_has_not_read_the_history_appends_after_its_last_record(
    workspace: Workspace,
) -> None:
    """A process that saves once (a hook) reads only the end of a plain history: the same last
    number and memory signature a whole reading gives. A history not plainly as oryxtui writes
    it is read whole — the save is numbered after its true last record and read back."""
    from oryxtui.memory.files import stat_signature
    from oryxtui.memory.history.log import History

    def saved(agent: str, text: str) -> None:  # as a new process saves
        MemoryService.open(workspace, Settings(), clock=fixed_clock).save(agent, text)

    def journal(agent: str) -> Path:
        folder = make_agent(workspace, agent) if not workspace.memory_file(agent).exists() else None
        return (folder or workspace.memory_file(agent).parent) / "MEMORY.md.journal"

    path = journal("plain")
    for index in range(5):
        saved("plain", f"note {index}")
    whole = History(workspace).log(path)
    tail = History(workspace).tail(path)
    assert tail is not None and (tail.last, tail.signature) == (whole.last, whole.signature)
    assert whole.signature == stat_signature(workspace.memory_file("plain"))
    # A save through the tail keeps it for the next one (text of more bytes than characters).
    memory = MemoryService.open(workspace, Settings(), clock=fixed_clock)
    memory.save("plain", "Café — 部署窗口在周五")
    history = memory._recorded().history
    assert path in history._tails and path not in history._logs  # type: ignore[attr-defined]
    assert history.tail(path) == History(workspace).tail(path)  # type: ignore[attr-defined]
    record = json.loads(path.read_bytes().splitlines()[-1])
    odd = {
        "a hand-made line": b"not a record\n",
        "numbers out of order": json.dumps({**record, "n": 2}).encode() + b"\n",
        "an unreadable last record": b'{"n": 99, "op": "nonsense"}\n',
        "a journal's record": b'{"n": 99, "scope": "archival", "line": "- [2026-01-01] j"}\n',
        "a blank line": b"\n",
    }
    for number, (name, added) in enumerate(odd.items()):
        agent = f"odd{number}"
        path = journal(agent)
        saved(agent, "first")
        saved(agent, "second")
        with open(path, "ab") as handle:
            handle.write(added)
        assert History(workspace).tail(path) is None, name
        true_last = History(workspace).log(path).last
        saved(agent, f"after {name}")
        after = History(workspace).log(path)
        # Numbered after the true last (an odd end may first be recorded as a change seen).
        assert after.last > true_last and after.last - true_last <= 2, name
        assert after.records[-1].added[0].content == f"after {name}", name
        written = workspace.memory_file(agent).read_text().splitlines()
        held = memory_at(after.records, after.last)[Scope.ARCHIVAL]
        assert held == [line for line in written if line.startswith("- [")], name


def test_a_long_history_is_compacted_and_keeps_answering(
    workspace: Workspace, service: MemoryService
) -> None:
    memory_file = make_agent(workspace, "a") / "MEMORY.md"
    store = service._recorded()
    store.history.keep = 10  # type: ignore[attr-defined]
    service.save("a", "saved first", "core")
    stale = memory_file.read_text()
    service.save("a", "lost early", "core")
    memory_file.write_text(stale + "")  # lost before the records that tell it are folded
    for index in range(30):
        service.save("a", f"entry {index}", "archival")
    records = store.changes("a").records
    assert len(records) <= 16 and records[0].op == "baseline"
    assert memory_at(records, records[-1].n) == lines_now(service, "a")
    assert [e.content for e in service.lost("a")] == ["lost early"]
    assert records[-1].n > 30  # numbers go on from where they were


def test_the_difference_replays_to_the_new_memory_exactly() -> None:
    rng = random.Random(14)
    words = [f"- w{i}" for i in range(6)]
    for _ in range(2000):
        old = {s: [rng.choice(words) for _ in range(rng.randrange(8))] for s in Scope}
        new = {s: list(lines) for s, lines in old.items()}
        for scope in Scope:
            lines = new[scope]
            for _ in range(rng.randrange(4)):
                action = rng.randrange(4)
                if action == 0 and lines:
                    lines.pop(rng.randrange(len(lines)))
                elif action == 1:
                    lines.insert(rng.randrange(len(lines) + 1), rng.choice(words))
                elif action == 2 and len(lines) > 1:
                    rng.shuffle(lines)
                elif lines:
                    lines[rng.randrange(len(lines))] = rng.choice(words)
        before, was_at, after, at = difference(old, new)
        record = Record(1, "outside", "outside", before=tuple(before), after=tuple(after))
        replay = Replay({s: list(lines) for s, lines in old.items()})
        replay.apply(replace(record, at=tuple(at), was_at=tuple(was_at)))
        assert replay.memory == new, (old, new)


def test_memory_log_from_the_cli(tmp_path: Path) -> None:
    assert run_oryxtui("demo", str(tmp_path / "d"), "--no-open").returncode == 0
    root = str(tmp_path / "d")
    run_oryxtui("memory", "save", "--root", root, "--agent", "scribe", "release on Friday")
    shown = json.loads(
        run_oryxtui("memory", "show", "--root", root, "--agent", "scribe", "--json").stdout
    )
    entry = shown["archival"][-1]
    run_oryxtui("memory", "move", "--root", root, "--agent", "scribe", entry["id"], "core")
    text = run_oryxtui("memory", "log", "--root", root, "--agent", "scribe")
    assert text.returncode == 0
    first, *rest = text.stdout.splitlines()
    assert "moved by cli" in first
    assert rest[0].startswith("  - archival: - [") and rest[0].endswith("release on Friday")
    assert rest[1].startswith("  + core: - [")
    lines = run_oryxtui("memory", "log", "--root", root, "--all", "--json").stdout.splitlines()
    records = [json.loads(line) for line in lines]
    # Newest first: scribe's two made here, the demo's MCP client's two proposals to ops-bot
    # (held), then the demo's own day of saves.
    made = [(r["agent"], r["op"]) for r in records if r["agent"] == "scribe"]
    assert made[:2] == [("scribe", "move"), ("scribe", "save")]
    assert [(r["agent"], r["op"]) for r in records[2:4]] == [
        ("ops-bot", "hold"),
        ("ops-bot", "hold"),
    ]
    assert {r["op"] for r in records[4:]} == {"save"}
    assert next(r for r in records if r["agent"] == "scribe")["before"][0]["id"] == entry["id"]
    later = run_oryxtui(
        "memory", "log", "--root", root, "--agent", "scribe", "--since", "2999-01-01"
    )
    assert later.returncode == 0 and "No changes" in later.stdout
    bad = run_oryxtui("memory", "log", "--root", root, "--since", "last tuesday")
    assert bad.returncode == 2 and "--since: 'last tuesday' is not a time" in bad.stderr


def test_an_entry_an_editor_moved_then_deleted_on_purpose_is_not_lost(
    workspace: Workspace, service: MemoryService
) -> None:
    memory_file = make_agent(workspace, "a") / "MEMORY.md"
    saved = service.save("a", "moved by hand, then deleted", "archival")
    service.save("a", "stays", "archival")
    # An editor moves the line to core (no lock, no oryxtui) …
    text = memory_file.read_text().replace(saved.line + "\n", "")
    memory_file.write_text(text.replace(CORE_HEADER + "\n", f"{CORE_HEADER}\n{saved.line}\n"))
    service.reconcile("a")
    (moved,) = service.snapshot("a").core
    # … and the user deletes it there, on purpose.
    service.delete("a", moved.id)
    assert service.lost("a") == []
    assert service.restore("a") == []
    assert "moved by hand" not in memory_file.read_text()
