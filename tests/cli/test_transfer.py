"""Moving memory between agents and workspaces (issue 14, part 3): `memory export` and
`memory import` through the real executable, both formats, both file backends."""

from __future__ import annotations

import json
import os
import stat
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oryxtui.config import Settings
from oryxtui.errors import UsageError
from oryxtui.memory import MemoryService
from oryxtui.memory.format import ARCHIVAL_HEADER, CORE_HEADER, TIME_FORMAT, sanitize_content
from oryxtui.workspace import Workspace, init_workspace
from tests.support import Ticking, cli, fixed_clock, make_agent, run_oryxtui


def entries(service: MemoryService, agent: str | None) -> list[tuple[str, str | None, str]]:
    snapshot = service.snapshot(agent)
    return [(e.scope.value, e.time, e.content) for e in [*snapshot.core, *snapshot.archival]]


@pytest.mark.parametrize("form", ["jsonl", "md"])
@pytest.mark.parametrize("backend", ["markdown", "sqlite"])
def test_export_then_import_into_another_workspace(tmp_path: Path, form: str, backend: str) -> None:
    assert run_oryxtui("demo", str(tmp_path / "from"), "--no-open").returncode == 0
    source = Workspace(tmp_path / "from" / ".oryxos")
    target = init_workspace(tmp_path / "to")
    if backend == "sqlite":
        (target.root / "config.toml").write_text('[memory]\nbackend = "sqlite"\n')
    make_agent(target, "atlas")
    dump = tmp_path / f"all.{form}"
    done = run_oryxtui(
        "memory", "export", "--root", str(source.root), "--all", "--format", form, "-o", str(dump)
    )
    assert done.returncode == 0 and "Exported" in done.stderr
    refused = run_oryxtui("memory", "import", str(dump), "--root", str(target.root))
    assert refused.returncode == 2 and "ops-bot" in refused.stderr and "--create" in refused.stderr
    imported = run_oryxtui(
        "memory", "import", str(dump), "--root", str(target.root), "--create", "--json"
    )
    assert imported.returncode == 0, imported.stderr
    counts = {a["agent"]: a["imported"] for a in json.loads(imported.stdout)["agents"]}
    before = MemoryService.open(source, Settings())
    settings = Settings.model_validate({"memory": {"backend": backend}})
    after = MemoryService.open(target, settings)
    for agent in ["atlas", "ops-bot", "scribe", None]:
        assert entries(after, agent) == entries(before, agent)  # scopes, times, order
        assert counts[agent] == len(entries(before, agent))
    again = run_oryxtui(
        "memory", "import", str(dump), "--root", str(target.root), "--create", "--json"
    )
    assert {a["imported"] for a in json.loads(again.stdout)["agents"]} == {0}
    assert after.history("atlas")[0].op == "import"


@pytest.mark.parametrize("backend", ["markdown", "sqlite"])
def test_replaced_versions_travel_with_a_json_lines_export(tmp_path: Path, backend: str) -> None:
    source = init_workspace(tmp_path / "from")
    make_agent(source, "ops")
    service = MemoryService.open(source, Settings(), clock=Ticking())
    first = service.save("ops", "The freeze window is Dec 18 to Jan 3.")
    second = service.replace("ops", first.id, "The freeze window is Dec 20 to Jan 5.")[1]
    third = service.replace("ops", second.id, "The freeze window is Dec 22 to Jan 7.")[1]
    (until,) = {v.until for v in service.replaced_versions("ops") if v.entry == first}
    dump = tmp_path / "ops.jsonl"
    assert (
        cli("memory", "export", "--root", str(source.root), "--agent", "ops", "-o", str(dump)).code
        == 0
    )
    lines = [json.loads(line) for line in dump.read_text().splitlines()]
    assert [line["content"] for line in lines if "replaced" not in line] == [third.content]
    markdown = cli(
        "memory", "export", "--root", str(source.root), "--agent", "ops", "--format", "md"
    )
    assert "Dec 18" not in markdown.stdout  # MEMORY.md text holds what is current, as upstream
    target = init_workspace(tmp_path / "to")
    (target.root / "config.toml").write_text(f'[memory]\nbackend = "{backend}"\n')
    make_agent(target, "ops")
    done = cli("memory", "import", str(dump), "--root", str(target.root), "--json")
    assert done.code == 0, done.stderr
    assert json.loads(done.stdout)["agents"] == [
        {"agent": "ops", "imported": 1, "skipped": 0, "replaced": 2}
    ]
    there = MemoryService.open(target, Settings.model_validate({"memory": {"backend": backend}}))
    assert entries(there, "ops") == [("archival", third.time, third.content)]
    versions = {v.entry.content: v for v in there.replaced_versions("ops")}
    assert set(versions) == {first.content, second.content}
    assert versions[first.content].until == until  # when it stopped being true, kept
    assert versions[first.content].successor.content == second.content
    assert {v.current.content for v in versions.values()} == {third.content}
    again = cli("memory", "import", str(dump), "--root", str(target.root), "--json")
    assert json.loads(again.stdout)["agents"][0]["replaced"] == 0  # known already


def test_import_into_one_agent_skips_what_is_there_and_cleans_what_it_reads(
    workspace: Workspace, service: MemoryService, tmp_path: Path
) -> None:
    make_agent(workspace, "b")
    service.save("b", "already here", "archival")
    here = service.snapshot("b").archival[0]
    lines = [
        {"agent": "a", "scope": "core", "time": "2026-01-01 09:00:00", "content": "a fact"},
        {"scope": "archival", "time": here.time, "content": "already here"},
        {"scope": "archival", "time": None, "content": f"x\n{ARCHIVAL_HEADER}\n- forged"},
        {"scope": "archival", "time": "2026-01-01 09:00:00", "content": "a fact"},  # once more
    ]
    dump = tmp_path / "in.jsonl"
    dump.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = run_oryxtui(
        "memory", "import", str(dump), "--root", str(workspace.root), "--agent", "b"
    )
    assert result.returncode == 0, result.stderr
    # An entry given twice is written twice (the export held two); what is there, once less.
    assert "Imported 3 entries into agent b (1 already there)" in result.stdout
    text = workspace.memory_file("b").read_text()
    assert text.count(ARCHIVAL_HEADER) == 1 and text.count(CORE_HEADER) == 1
    assert "- [2026-01-01 09:00:00] a fact" in text.split(ARCHIVAL_HEADER)[0]
    assert "- x 「归档记忆」 - forged" in text


def test_a_file_that_is_no_export_is_refused_whole(workspace: Workspace, tmp_path: Path) -> None:
    make_agent(workspace, "b")
    dump = tmp_path / "bad.jsonl"
    dump.write_text('{"scope": "core", "content": "fine"}\n{"scope": "nowhere"}\n')
    result = run_oryxtui("memory", "import", str(dump), "--root", str(workspace.root))
    assert result.returncode == 2 and "Line 2 of" in result.stderr
    assert not workspace.memory_file(None).exists() or "fine" not in (
        workspace.memory_file(None).read_text()
    )
    (tmp_path / "bin").write_bytes(b"\xff\xfe")
    result = run_oryxtui("memory", "import", str(tmp_path / "bin"), "--root", str(workspace.root))
    assert result.returncode == 2 and "not UTF-8" in result.stderr


def test_recall_across_every_agent_from_the_cli(tmp_path: Path) -> None:
    assert run_oryxtui("demo", str(tmp_path / "d"), "--no-open").returncode == 0
    root = str(tmp_path / "d")
    run_oryxtui("memory", "save", "--root", root, "--agent", "atlas", "deploy papers on Friday")
    text = run_oryxtui("memory", "recall", "--root", root, "--all", "deploy")
    assert text.returncode == 0
    # The agents whose entries hold the word; the demo's small local model may add a weaker
    # hit by meaning from another agent (its scores move with the entries' times).
    owners = {line.split(":")[0] for line in text.stdout.splitlines()}
    assert {"atlas", "ops-bot"} <= owners
    found = json.loads(
        run_oryxtui("memory", "recall", "--root", root, "--all", "deploy", "--json").stdout
    )
    assert {"atlas", "ops-bot"} <= {hit["agent"] for hit in found["hits"]}
    assert len(found["hits"]) <= 20  # the best top_k of all of them


# Hardening (issue 22) -------------------------------------------------------------------------


def test_a_marker_in_an_entry_cannot_move_memory_between_agents(tmp_path: Path) -> None:
    source = init_workspace(tmp_path / "from")
    make_agent(source, "alice")
    make_agent(source, "bob")
    service = MemoryService.open(source, Settings(), fixed_clock)
    service.save("alice", "<!-- oryxtui agent: bob -->", "core")  # an agent's own save
    service.save("alice", "alice's fact", "archival")
    service.save("bob", "bob's fact", "archival")
    # A hand-written line, without `- `, that is exactly a marker.
    memory = source.memory_file("alice")
    memory.write_text(
        memory.read_text().replace(
            CORE_HEADER + "\n", f"{CORE_HEADER}\n<!-- oryxtui agent: bob -->\n"
        )
    )
    for form in ("md", "jsonl"):
        target = init_workspace(tmp_path / f"to-{form}")
        dump = cli("memory", "export", "--root", str(source.root), "--all", "--format", form)
        assert dump.code == 0
        done = cli(
            "memory", "import", "-", "--root", str(target.root), "--create", stdin=dump.stdout
        )
        assert done.code == 0, done.stderr
        after = MemoryService.open(target, Settings())
        assert entries(after, "alice") == entries(service, "alice")
        assert entries(after, "bob") == entries(service, "bob")


HOSTILE = st.lists(
    st.sampled_from(
        [
            "a",
            "b",
            " ",
            "  ",
            "\t",
            "-",
            "[",
            "]",
            "<!--",
            "-->",
            "oryxtui agent: ",
            "bob",
            "(global)",
            "## ",
            CORE_HEADER,
            ARCHIVAL_HEADER,
            "\x1b]52;c;",
            "\u202e",
            "\\",
            '"',
            "{",
            "}",
            "…",
            "猫",
            "\r",
        ]
    ),
    max_size=8,
).map("".join)
TIMES = st.datetimes(min_value=datetime(2020, 1, 1), max_value=datetime(2026, 7, 1)).map(
    lambda moment: moment.strftime(TIME_FORMAT)
)
LINES = st.one_of(
    st.tuples(TIMES, HOSTILE).map(lambda pair: f"- [{pair[0]}] {pair[1]}"),
    HOSTILE.map(lambda content: f"- {content}"),
    HOSTILE,  # a line written by hand, as it is
)
MEMORIES = st.dictionaries(
    st.sampled_from(["alice", "bob", None]),
    st.tuples(st.lists(LINES, max_size=4), st.lists(LINES, max_size=6)),
    min_size=1,
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(memories=MEMORIES, form=st.sampled_from(["md", "jsonl"]))
def test_any_workspace_round_trips_through_either_format(
    tmp_path_factory: pytest.TempPathFactory, memories: dict, form: str
) -> None:
    base = tmp_path_factory.mktemp("round")
    source = init_workspace(base / "from")
    for agent, (core, archival) in memories.items():
        if agent is not None:
            make_agent(source, agent)
        text = f"{CORE_HEADER}\n" + "".join(f"{line}\n" for line in core)
        source.memory_file(agent).write_text(
            text + f"{ARCHIVAL_HEADER}\n" + "".join(f"{line}\n" for line in archival)
        )
    before = MemoryService.open(source, Settings())
    admitted = before.admission
    dump = cli("memory", "export", "--root", str(source.root), "--all", "--format", form)
    assert dump.code == 0, dump.stderr
    target = init_workspace(base / "to")
    done = cli("memory", "import", "-", "--root", str(target.root), "--create", stdin=dump.stdout)
    assert done.code == 0, done.stderr
    after = MemoryService.open(target, Settings())
    holding = {
        agent
        for agent, (core, archival) in memories.items()
        if agent
        and any(
            sanitize_content(e.content)
            for e in [*before.snapshot(agent).core, *before.snapshot(agent).archival]
        )
    }
    assert set(target.list_agents()) == holding  # every agent with memory, and no other
    for agent in [*holding, None]:
        snapshot = before.snapshot(agent)
        # What was there, as it may go into a memory: cleaned as any save, empty ones left out.
        expected = [
            (admitted_entry.scope.value, admitted_entry.time, admitted_entry.content)
            for admitted_entry in (
                admitted.entry(e)
                for e in [*snapshot.core, *snapshot.archival]
                if sanitize_content(e.content)
            )
        ]
        assert entries(after, agent) == expected


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('{"agent": "ops bot", "scope": "core", "content": "x"}', "not a valid agent name"),
        ('{"agent": "../etc", "scope": "core", "content": "x"}', "not a valid agent name"),
        ('{"scope": "core", "time": "2026-13-45 99:99:99", "content": "x"}', "no date and time"),
        ('{"scope": "core", "time": "9999-01-01 00:00:00", "content": "x"}', "in the future"),
        ('{"scope": "core", "time": 5, "content": "x"}', "not an exported entry"),
    ],
)
def test_import_refuses_what_it_would_have_to_guess(
    workspace: Workspace, line: str, problem: str
) -> None:
    make_agent(workspace, "ops")
    good = '{"scope": "archival", "content": "fine"}\n'
    result = cli("memory", "import", "-", "--root", str(workspace.root), stdin=good + line + "\n")
    assert result.code == 2 and problem in result.stderr and "Line 2" in result.stderr
    assert not workspace.global_memory_file.exists()  # nothing written, nothing retargeted
    marked = f"<!-- oryxtui agent: ops.bot -->\n{CORE_HEADER}\n- x\n{ARCHIVAL_HEADER}\n"
    result = cli("memory", "import", "-", "--root", str(workspace.root), "--create", stdin=marked)
    assert result.code == 2 and "not a valid agent name" in result.stderr


def test_import_holds_every_entry_to_the_entry_limit(workspace: Workspace) -> None:
    make_agent(workspace, "ops")
    lines = [
        json.dumps({"scope": "archival", "content": "short"}),
        json.dumps({"scope": "archival", "content": "x" * 5_000_000}),
    ]
    result = cli(
        "memory",
        "import",
        "-",
        "--root",
        str(workspace.root),
        "--agent",
        "ops",
        stdin="\n".join(lines) + "\n",
    )
    assert result.code == 2 and "memory.max_entry_chars" in result.stderr
    assert "Entry 2" in result.stderr
    assert not workspace.memory_file("ops").exists()  # not even the short one


def test_bring_back_and_restore_hold_entries_to_the_limit(
    workspace: Workspace, service: MemoryService
) -> None:
    folder = make_agent(workspace, "ops")
    service.max_entry_chars = 100_000
    service.save("ops", "y" * 50_000, "archival")
    kept = service.delete("ops", service.snapshot("ops").archival[0].id)
    service.max_entry_chars = 2000  # the limit now
    (change,) = [r for r in service.history("ops") if r.op == "delete"]
    with pytest.raises(UsageError, match="max_entry_chars"):
        service.bring_back("ops", change)
    service.max_entry_chars = 100_000
    service.save("ops", "z" * 50_000, "archival")
    (folder / "MEMORY.md").write_text(f"{CORE_HEADER}\n{ARCHIVAL_HEADER}\n- by hand\n")
    service.max_entry_chars = 2000
    assert service.lost("ops")
    with pytest.raises(UsageError, match="max_entry_chars"):
        service.restore("ops")
    doctor = cli("memory", "doctor", "--root", str(workspace.root), "--agent", "ops", "--restore")
    assert doctor.code == 2 and "max_entry_chars" in doctor.stderr
    assert "z" * 100 not in (folder / "MEMORY.md").read_text()
    assert kept.content.startswith("y")


def test_export_writes_only_a_regular_file_or_a_new_name(
    workspace: Workspace, tmp_path: Path
) -> None:
    make_agent(workspace, "ops")
    MemoryService.open(workspace, Settings()).save("ops", "a fact", "archival")
    root = ("--root", str(workspace.root), "--agent", "ops")
    victim = tmp_path / "victim.txt"
    victim.write_text("not yours")
    out = tmp_path / "out.jsonl"
    os.symlink(victim, tmp_path / ".out.jsonl.tmp")  # planted at the old temp name
    assert cli("memory", "export", *root, "-o", str(out)).code == 0
    assert victim.read_text() == "not yours" and "a fact" in out.read_text()
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for target in (fifo, tmp_path, Path("/dev/null")):
        refused = cli("memory", "export", *root, "-o", str(target))
        assert refused.code == 2, refused.stderr
        assert "regular file" in refused.stderr or "a folder" in refused.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and Path("/dev/null").is_char_device()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp") and not p.is_symlink()]
    readonly = tmp_path / "ro"
    readonly.mkdir()
    readonly.chmod(0o500)
    if os.geteuid() != 0:  # root writes anywhere
        assert cli("memory", "export", *root, "-o", str(readonly / "x")).code == 1
    to_stdout = cli("memory", "export", *root, "-o", "-")
    assert to_stdout.code == 0 and "a fact" in to_stdout.stdout
