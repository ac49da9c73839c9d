"""Moving memory between agents and workspaces (issue 14, part 3): `memory export` and
`memory import` through the real executable, both formats, both file backends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oryxtui.config import Settings
from oryxtui.memory import MemoryService
from oryxtui.memory.format import ARCHIVAL_HEADER, CORE_HEADER
from oryxtui.workspace import Workspace, init_workspace
from tests.support import make_agent, run_oryxtui


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
    assert "Imported 2 entries into agent b (2 already there)" in result.stdout
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
    owners = {line.split(":")[0] for line in text.stdout.splitlines()}
    assert owners == {"atlas", "ops-bot"}
    found = json.loads(
        run_oryxtui("memory", "recall", "--root", root, "--all", "deploy", "--json").stdout
    )
    assert {hit["agent"] for hit in found["hits"]} == {"atlas", "ops-bot"}
    assert len(found["hits"]) <= 20  # the best top_k of all of them
