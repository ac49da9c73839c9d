"""Security round 4 (issue 43) at the command line: one sentence when the shared database is
out of reach (item 6), new workspaces private to their owner (item 11), and escape sequences
taken out whole at the one entry door (item 12)."""

from __future__ import annotations

import socket

import pytest

from oryxtui.workspace import Workspace
from tests.support import oryxtui_process


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
