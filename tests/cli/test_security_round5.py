"""Security round 5 (issue 57) at the command line: a hold names the real agent, whatever
linked folder the agent was opened through."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from oryxtui.workspace import Workspace
from tests.support import agents_with_notes, cli, oryxtui_executable


def test_a_hold_on_an_agent_holds_it_opened_through_a_link(workspace: Workspace) -> None:
    agents_with_notes(workspace, "ops-bot")
    (workspace.agents_dir / "ops-alias").symlink_to("ops-bot", target_is_directory=True)
    workspace.config_path.write_text('[memory.review]\nhold_agents = ["ops-bot"]\n')
    root = ("--root", str(workspace.root))
    memory = workspace.agents_dir / "ops-bot" / "MEMORY.md"
    before = memory.read_bytes()
    said = cli("chat", "--agent", "ops-alias", "remember that the vault code is 1234", *root)
    assert said.code == 0, said.stderr
    assert memory.read_bytes() == before  # nothing reached the memory: it waits
    listed = cli("memory", "review", "--agent", "ops-bot", "--json", *root)
    (held,) = json.loads(listed.stdout)["awaiting"]
    assert held["held"] and held["content"] == "the vault code is 1234"


EXTREMES = [
    "0001-01-01T00:00:00+14:00",
    "9999-12-31T23:59:59-14:00",
    "0001-01-01T00:00:00+00:01",
    "9999-12-31T23:59:59-00:01",
]


@pytest.mark.parametrize("moment", EXTREMES)
def test_a_moment_out_of_range_is_one_sentence(workspace: Workspace, moment: str) -> None:
    agents_with_notes(workspace, "ops")
    root = ("--root", str(workspace.root))
    for command in (("memory", "show"), ("memory", "recall", "note")):
        said = cli(*command, "--agent", "ops", "--as-of", moment, *root)
        assert said.code == 2 and "Traceback" not in said.stderr
        assert said.stderr.count("\n") == 1 and "out of the range of times" in said.stderr
    log = cli("memory", "log", "--agent", "ops", "--since", moment, *root)
    assert log.code == 2 and "--since: " in log.stderr and "out of the range" in log.stderr


def _umask_022() -> None:
    os.umask(0o022)


def test_everything_oryxtui_makes_in_a_workspace_is_private(tmp_path: Path) -> None:
    """Under the usual umask (022), whatever command makes it: `demo --no-open`, `init`,
    `agents new`, `memory save --create` — every folder 0700, every file 0600."""

    def run(*args: str) -> None:
        done = subprocess.run(
            [oryxtui_executable(), *args],
            capture_output=True,
            text=True,
            timeout=120,
            preexec_fn=_umask_022,
            env={k: v for k, v in os.environ.items() if not k.startswith("ORYXTUI_")},
        )
        assert done.returncode == 0, done.stderr

    run("demo", str(tmp_path / "demo"), "--no-open")
    run("init", str(tmp_path / "project"))
    root = str(tmp_path / "project" / ".oryxos")
    run("agents", "new", "scout", "--root", root)
    run("memory", "save", "a note", "--agent", "rover", "--create", "--root", root)
    run("memory", "save", "a core note", "--scope", "core", "--agent", "scout", "--root", root)
    for workspace in (tmp_path / "demo" / ".oryxos", tmp_path / "project" / ".oryxos"):
        exposed = [
            (str(path.relative_to(workspace)), oct(stat.S_IMODE(path.stat().st_mode)))
            for path in [workspace, *workspace.rglob("*")]
            if not path.is_symlink()
            and stat.S_IMODE(path.stat().st_mode) != (0o700 if path.is_dir() else 0o600)
        ]
        assert not exposed, exposed
