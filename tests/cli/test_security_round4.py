"""Security round 4 (issue 43) at the command line: one sentence when the shared database is
out of reach (item 6), new workspaces private to their owner (item 11), and escape sequences
taken out whole at the one entry door (item 12)."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
from pathlib import Path

import pytest

from oryxtui.workspace import Workspace
from tests.support import oryxtui_process, run_oryxtui


def closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("postgresql://oryx@127.0.0.1:{port}/oryx", "connection refused"),
        ("postgresql://oryx@/oryx?host=/nonexistent-folder", "no server listens on its socket"),
        ("postgresql://oryx@no-such-host.invalid/oryx", "its host name is unknown"),
    ],
)
def test_the_dashboard_on_a_database_out_of_reach_says_one_short_sentence(
    workspace: Workspace, url: str, reason: str
) -> None:
    env = {
        "ORYXTUI_DATABASE_URL": url.format(port=closed_port()),
        "ORYXTUI_MEMORY__BACKEND": "database",
    }
    for args in ((), ("memory", "show")):  # the dashboard, and a command
        done = oryxtui_process(*args, "--root", str(workspace.root), env=env)
        assert done.returncode == 1 and done.stdout == ""
        assert done.stderr.count("\n") == 1, done.stderr
        assert f"cannot be reached ({reason}); check that it is running" in done.stderr
        assert len(done.stderr) < 240  # libpq's own paragraph is not repeated
        assert "Is the server running" not in done.stderr


# Item 11: a new workspace is its owner's alone; doctor names what another user could read ---


def as_nobody(*command: str) -> subprocess.CompletedProcess[str]:
    """`command` run as the unprivileged user `nobody` (the tests run as root in CI)."""
    return subprocess.run(
        ["runuser", "-u", "nobody", "--", *command], capture_output=True, text=True, timeout=30
    )


@pytest.mark.skipif(os.geteuid() != 0, reason="another user is played by root's runuser")
def test_a_new_workspace_is_private_and_doctor_names_what_is_not(open_folder: Path) -> None:
    tmp_path = open_folder
    old = os.umask(0o022)
    try:
        root = ("--root", str(tmp_path / "w"))
        assert run_oryxtui("init", str(tmp_path / "w")).returncode == 0
        assert run_oryxtui("memory", "save", "--create", "--agent", "ops", "pager 4711", *root)
        assert run_oryxtui("keys", "create", "alice", "--scope", "read", *root).returncode == 0
    finally:
        os.umask(old)
    workspace = Workspace(tmp_path / "w" / ".oryxos")
    memory, db = workspace.memory_file("ops"), workspace.db_path
    assert stat.S_IMODE(workspace.root.stat().st_mode) == 0o700
    for path in (memory, memory.with_name("MEMORY.md.journal"), db, workspace.root / "USER.md"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    assert as_nobody("cat", str(memory)).returncode != 0  # another user reads nothing
    assert as_nobody("cat", str(db)).returncode != 0
    clean = run_oryxtui("doctor", *root)
    assert clean.returncode == 0 and "can be read by another user" in clean.stdout

    # A workspace opened up by hand (or made before): doctor names each secret, exit 1.
    for folder in (workspace.root, workspace.agents_dir, memory.parent):
        folder.chmod(0o755)
    memory.chmod(0o644)
    db.chmod(0o640)
    assert "pager 4711" in as_nobody("cat", str(memory)).stdout  # really exposed
    found = run_oryxtui("doctor", *root)
    assert found.returncode == 1
    assert f"{memory} can be read by every user of this machine (mode 0644" in found.stderr
    assert f"{db} can be read by the users of its group (mode 0640" in found.stderr
    assert f"`chmod 700 {workspace.root}`" in found.stderr
    listed = json.loads(run_oryxtui("doctor", "--json", *root).stdout)
    assert {(e["path"], e["mode"]) for e in listed["exposed"]} == {
        (str(memory), "0644"),
        (str(db), "0640"),
    }
    # A save keeps the mode a file has: the person's choice is respected.
    assert run_oryxtui("memory", "save", "--agent", "ops", "again", *root).returncode == 0
    assert stat.S_IMODE(memory.stat().st_mode) == 0o644


# Item 12: escape sequences leave whole at the one entry door -------------------------------


SEQUENCES = {
    "ctl \x1b[31mred\x1b[0m end": "ctl red end",
    "title \x1b]0;owned\x07 kept": "title kept",
    "clip \x1b]52;c;aGk=\x1b\\ kept": "clip kept",
    "link \x1b]8;;file:///etc/passwd\x1b\\click\x1b]8;;\x1b\\ kept": "link click kept",
    "c1 \x9b31mred\x9b0m kept": "c1 red kept",
    "dcs \x1bPq#0;2;0;0;0\x1b\\ kept": "dcs kept",
    "reset \x1bc kept": "reset kept",
    "bidi \u202eevil\u202c and\u200bhidden": "bidi \u202eevil\u202c and\u200bhidden",
}


@pytest.mark.parametrize(("typed", "stored"), SEQUENCES.items())
def test_an_escape_sequence_is_taken_out_whole_at_the_entry_door(
    workspace: Workspace, typed: str, stored: str
) -> None:
    root = ("--root", str(workspace.root))
    saved = run_oryxtui("memory", "save", "--json", typed, *root)
    assert saved.returncode == 0, saved.stderr
    text = workspace.memory_file(None).read_text(encoding="utf-8")
    assert text.rstrip("\n").endswith("] " + stored)  # bidi and zero-width kept in the text
    assert "[31m" not in text and "\x1b" not in text and "]52;" not in text
