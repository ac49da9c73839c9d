"""The real `oryxtui` executable, in a subprocess, on real workspaces."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from oryxtui.memory.format import ARCHIVAL_HEADER, CORE_HEADER
from tests.support import run_oryxtui


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    result = run_oryxtui("demo", str(tmp_path / "demo"), "--no-open")
    assert result.returncode == 0, result.stderr
    return tmp_path / "demo"


def test_demo_generates_agents_with_an_overflowing_window(demo: Path) -> None:
    agents = sorted(p.name for p in (demo / ".oryxos" / "agents").iterdir())
    assert agents == ["atlas", "ops-bot", "scribe"]
    result = run_oryxtui("memory", "show", "--root", str(demo), "--agent", "ops-bot", "--json")
    shown = json.loads(result.stdout)
    assert shown["agent"] == "ops-bot" and shown["backend"] == "markdown"
    assert len(shown["core"]) == 3
    assert 0 < shown["window_start"] < len(shown["archival"])
    assert set(shown["archival"][0]) == {"id", "time", "content", "origin"}


def test_demo_agents_have_valid_agent_files(demo: Path) -> None:
    from oryxtui.workspace import Workspace

    workspace = Workspace(demo / ".oryxos")
    for name in workspace.list_agents():
        agent = workspace.read_agent(name)
        assert agent.description and agent.identity.prompt
        assert agent.tools == ["save_memory", "recall_memory"]


def test_demo_reuses_an_existing_workspace(demo: Path) -> None:
    memory_file = demo / ".oryxos" / "agents" / "atlas" / "MEMORY.md"
    memory_file.write_text(memory_file.read_text() + "- my own line\n")
    result = run_oryxtui("demo", str(demo), "--no-open")
    assert result.returncode == 0 and "existing" in result.stdout
    assert "- my own line" in memory_file.read_text()


def test_show_prints_exactly_the_injected_block(demo: Path) -> None:
    text = run_oryxtui("memory", "show", "--agent", "ops-bot", cwd=demo).stdout
    assert text.startswith(CORE_HEADER + "\n")
    archival = text.split(ARCHIVAL_HEADER + "\n")[1].rstrip("\n")
    assert len(archival) <= 4000
    full = (demo / ".oryxos" / "agents" / "ops-bot" / "MEMORY.md").read_text()
    assert archival.splitlines()[-1] == full.rstrip("\n").splitlines()[-1]


def test_save_then_show_and_recall(demo: Path) -> None:
    root = str(demo / ".oryxos")
    saved = run_oryxtui("memory", "save", "--root", root, "--agent", "atlas", "Deploy window\nTUE")
    assert saved.returncode == 0, saved.stderr
    core = run_oryxtui(
        "memory", "save", "--root", root, "--agent", "atlas", "--scope", "core", "--json", "vip"
    )
    assert json.loads(core.stdout)["entry"]["content"] == "vip"
    shown = run_oryxtui("memory", "show", "--root", root, "--agent", "atlas", "--json").stdout
    assert json.loads(shown)["archival"][-1]["content"] == "Deploy window TUE"
    assert json.loads(shown)["core"][-1]["content"] == "vip"
    recall = run_oryxtui("memory", "recall", "--root", root, "--agent", "atlas", "deploy WINDOW")
    assert recall.returncode == 0
    # First: the words match it (the demo's small local model may add a weaker hit by meaning).
    first = recall.stdout.splitlines()[0]
    assert first.endswith("] Deploy window TUE") and first.startswith("- [")
    hits = run_oryxtui("memory", "recall", "--agent", "atlas", "--json", "vip", cwd=demo).stdout
    assert json.loads(hits)["hits"] == []  # core is never recalled


def test_save_reads_standard_input(demo: Path) -> None:
    result = run_oryxtui("memory", "save", "--agent", "scribe", "-", cwd=demo, stdin="from\nstdin")
    assert result.returncode == 0
    assert "- [" in result.stdout and "from stdin" in result.stdout


def test_empty_content_is_refused_with_exit_2(demo: Path) -> None:
    before = (demo / ".oryxos" / "memory" / "MEMORY.md").read_bytes()
    for text in ["", "   ", "\n\u2028"]:
        result = run_oryxtui("memory", "save", text, cwd=demo)
        assert result.returncode == 2
        assert "empty" in result.stderr and "Traceback" not in result.stderr
    assert (demo / ".oryxos" / "memory" / "MEMORY.md").read_bytes() == before


def test_an_unsafe_agent_name_typed_by_a_person_is_refused(demo: Path) -> None:
    before = (demo / ".oryxos" / "memory" / "MEMORY.md").read_text()
    result = run_oryxtui("memory", "save", "--agent", "../../etc", "escape attempt", cwd=demo)
    assert result.returncode == 2
    assert "not a valid agent name" in result.stderr
    assert (demo / ".oryxos" / "memory" / "MEMORY.md").read_text() == before  # nothing written
    assert not (demo.parent / "etc").exists()


def test_missing_workspace_is_exit_2_and_says_how_to_create_one(tmp_path: Path) -> None:
    result = run_oryxtui("memory", "show", cwd=tmp_path)
    assert result.returncode == 2
    assert "oryxtui init" in result.stderr and "oryxtui demo" in result.stderr
    result = run_oryxtui("memory", "show", "--root", str(tmp_path / "nowhere"))
    assert result.returncode == 2 and "Traceback" not in result.stderr


def test_bad_config_is_exit_2_naming_file_and_key(demo: Path) -> None:
    (demo / ".oryxos" / "config.toml").write_text('[memory]\nbackend = "redis"\n')
    result = run_oryxtui("memory", "show", cwd=demo)
    assert result.returncode == 2
    assert "memory.backend" in result.stderr and "config.toml" in result.stderr
    result = run_oryxtui("memory", "show", cwd=demo, env={"ORYXTUI_MEMORY__BACKEND": "sqlite"})
    assert result.returncode == 0  # the environment wins over the file


def test_undecodable_file_show_warns_and_save_refuses(demo: Path) -> None:
    memory_file = demo / ".oryxos" / "agents" / "scribe" / "MEMORY.md"
    raw = memory_file.read_bytes() + b"- bad byte \xff here\n"
    memory_file.write_bytes(raw)
    shown = run_oryxtui("memory", "show", "--agent", "scribe", cwd=demo)
    assert shown.returncode == 0
    assert "bad byte \ufffd here" in shown.stdout and "not valid UTF-8" in shown.stderr
    saved = run_oryxtui("memory", "save", "--agent", "scribe", "x", cwd=demo)
    assert saved.returncode == 1 and "not valid UTF-8" in saved.stderr
    assert memory_file.read_bytes() == raw


def test_symlinked_memory_file_is_refused_with_exit_1(demo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("keep\n")
    memory_file = demo / ".oryxos" / "agents" / "atlas" / "MEMORY.md"
    memory_file.unlink()
    memory_file.symlink_to(outside)
    result = run_oryxtui("memory", "save", "--agent", "atlas", "x", cwd=demo)
    assert result.returncode == 1 and "symbolic link" in result.stderr
    assert outside.read_text() == "keep\n"


def test_bad_usage_is_exit_2(demo: Path) -> None:
    assert run_oryxtui("memory", "save", "--scope", "episodic", "x", cwd=demo).returncode == 2
    assert run_oryxtui("memory", cwd=demo).returncode == 2
    assert run_oryxtui("nonsense").returncode == 2


def test_init_creates_the_layout(tmp_path: Path) -> None:
    result = run_oryxtui("init", str(tmp_path / "new"))
    assert result.returncode == 0
    root = tmp_path / "new" / ".oryxos"
    assert {p.name for p in root.iterdir()} >= {"agents", "memory", "skills", "USER.md", "SOUL.md"}


def test_help_lists_the_commands() -> None:
    result = run_oryxtui("--help")
    assert result.returncode == 0
    for command in ("init", "demo", "memory"):
        assert command in result.stdout


def test_every_command_is_declared_where_the_registry_says() -> None:
    """A command imports only the modules `DECLARED_IN` names for it: each command must be
    declared by one of them (a command missing there would be missing from the CLI)."""
    from oryxtui.cli import DECLARED_IN, declare
    from oryxtui.cli.common import AGENTS, DB, KEYS, MEMORY, SESSIONS, TOP

    declare(None)  # every module: every command joins its group
    groups = [(command.name, [command]) for command in TOP.commands]
    groups += [(group.name, group.commands) for group in (MEMORY, AGENTS, SESSIONS, DB, KEYS)]
    for name, commands in groups:
        assert name in DECLARED_IN and commands, name
        for command in commands:
            module = command.handler.__module__.removeprefix("oryxtui.cli.")
            assert module in DECLARED_IN[name], (name, command.name, module)


def test_parsers_are_built_for_the_command_named_and_help_still_lists_them_all() -> None:
    """Only the named command's parser is built (a command starts faster); help, a misspelt
    command and each command's own help are what they were."""
    from oryxtui.cli import LISTED, build_parser
    from oryxtui.cli.common import MEMORY

    def names(text: str) -> list[str]:  # the commands listed: a name indented four spaces
        return [line.split()[0] for line in text.splitlines() if re.match(r"    \S", line)]

    assert names(run_oryxtui("--help").stdout) == list(LISTED)
    actions = names(run_oryxtui("memory", "--help").stdout)
    assert actions == [command.name for command in MEMORY.commands]
    save = run_oryxtui("--root", "memory", "memory", "save", "--help").stdout
    assert "--scope SCOPE" in save and "--agent NAME" in save and "TEXT" in save
    wrong = run_oryxtui("memroy")
    assert wrong.returncode == 2 and "choose from 'init', 'demo', 'memory'" in wrong.stderr
    only = build_parser(["--root", "memory", "sessions", "list"])
    (commands,) = [a for a in only._actions if a.dest == "==SUPPRESS==" and a.choices]
    assert list(commands.choices) == ["sessions"]  # not --root's value, not the others
