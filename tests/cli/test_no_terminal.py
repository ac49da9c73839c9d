"""A dashboard started without a terminal (stdin from /dev/null, output to a pipe: a script,
CI, an agent's shell tool, nohup) is bad input (issue 58): the real executable exits non-zero
within seconds with one sentence that says what to use instead, having used almost no CPU —
it never spins. Real processes, every command that opens the dashboard."""

from __future__ import annotations

import os
import resource
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from oryxtui.workspace import Workspace, init_workspace
from tests.serve_process import ServeProcess
from tests.support import agents_with_notes, oryxtui_executable

# CPU the whole process may use (importing and refusing take well under a second; a dashboard
# spinning without a terminal burns a core until the deadline).
CPU_SECONDS = 5.0
DEADLINE = 60


def without_terminal(*args: str, cwd: Path) -> tuple[int, str, float]:
    """`oryxtui ARGS` with no terminal: its exit status, standard error and CPU seconds."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ORYXTUI_", "TEXTUAL"))}
    env.pop("ORYXOS_ROOT", None)
    process = subprocess.Popen(
        [oryxtui_executable(), *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        _, stderr = process.communicate(timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise AssertionError(f"oryxtui {args} was still running after {DEADLINE} s") from None
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return process.returncode, stderr.decode(), used.ru_utime + used.ru_stime


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server to attach to (only the attach case asks for it)."""
    workspace = init_workspace(tmp_path_factory.mktemp("served") / "project")
    agents_with_notes(workspace, "ops")
    with ServeProcess(workspace.root) as server:
        yield server.url


@pytest.mark.parametrize(
    "args",
    [
        ("demo", "fresh"),
        ("demo", "fresh", "--live"),
        (),
        ("--root", "{root}"),
        ("attach", "{url}"),
    ],
    ids=["demo", "demo-live", "bare", "root", "attach"],
)
def test_the_dashboard_without_a_terminal_is_one_sentence(
    workspace: Workspace, request: pytest.FixtureRequest, args: tuple[str, ...]
) -> None:
    agents_with_notes(workspace, "ops")
    url = request.getfixturevalue("served") if "attach" in args else ""
    filled = [a.format(root=workspace.root, url=url) for a in args]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    code, stderr, cpu = without_terminal(*filled, cwd=workspace.root.parent)
    spent = cpu - (before.ru_utime + before.ru_stime)
    assert code == 2, stderr
    assert stderr.count("\n") == 1 and "The dashboard needs a terminal" in stderr, stderr
    assert "oryxtui web" in stderr and "Traceback" not in stderr
    assert spent < CPU_SECONDS, f"{spent:.1f} s of CPU"
    if args[:1] == ("demo",):
        assert "--no-open" in stderr
        assert not (workspace.root.parent / "fresh").exists()  # nothing made half-way
