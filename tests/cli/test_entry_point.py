"""The real `oryxtui` executable, in processes of its own: what the in-process runner cannot
show — the installed entry point, exit statuses as a shell sees them, pipes, signals, and what
a fresh interpreter imports. (The other CLI tests call `main(argv)` in the test's process.)"""

from __future__ import annotations

import os
import platform
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support import cli, oryxtui_executable, oryxtui_process


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("entry") / "demo"
    result = oryxtui_process("demo", str(folder), "--no-open")
    assert result.returncode == 0, result.stderr
    return folder


def test_the_installed_executable_and_python_m_are_the_same_program() -> None:
    from oryxtui import __version__

    installed = oryxtui_process("--version")
    module = subprocess.run(
        [sys.executable, "-m", "oryxtui", "--version"], capture_output=True, text=True, timeout=60
    )
    assert installed.returncode == module.returncode == 0
    assert installed.stdout == module.stdout == f"oryxtui {__version__}\n"


def test_exit_statuses_as_a_shell_sees_them(demo: Path) -> None:
    root = ("--root", str(demo))
    assert oryxtui_process("memory", "show", *root, "--agent", "atlas").returncode == 0
    unknown = oryxtui_process("memory", "show", *root, "--agent", "atlsa")
    assert unknown.returncode == 2
    assert unknown.stderr.count("\n") == 1 and "did you mean atlas" in unknown.stderr
    assert oryxtui_process("memory", "frobnicate", *root).returncode == 2  # argparse
    stale = oryxtui_process("memory", "delete", *root, "--agent", "atlas", "000000000000")
    assert stale.returncode == 1 and stale.stderr.startswith("oryxtui: error: ")
    assert "Traceback" not in unknown.stderr + stale.stderr


def test_a_reader_that_goes_away_is_not_an_error(demo: Path) -> None:
    """`oryxtui memory export | head -1`: the pipe closes early; no traceback, status 0."""
    for _ in range(30):  # enough entries that the export outlives the reader
        assert cli("memory", "save", "--root", str(demo), "x" * 2000).code == 0
    exporter = subprocess.Popen(
        [oryxtui_executable(), "memory", "export", "--root", str(demo)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert exporter.stdout is not None and exporter.stderr is not None
    exporter.stdout.readline()
    exporter.stdout.close()  # the reader is gone
    assert exporter.wait(timeout=60) == 0
    assert exporter.stderr.read() == b""


def reading_its_input(pid: int, timeout: float = 30.0) -> None:
    """Wait until the process is blocked in read(0, …) — /proc/PID/syscall names the call and
    its first argument; where that file cannot be read, go on (the greeting came just before)."""
    read = {"x86_64": "0", "aarch64": "63"}.get(platform.machine())
    deadline = time.monotonic() + timeout
    while read is not None and time.monotonic() < deadline:
        try:
            call = Path(f"/proc/{pid}/syscall").read_text().split()
        except OSError:
            return
        if call[:2] == [read, "0x0"]:
            return
        time.sleep(0.01)
    if read is not None:
        raise AssertionError(f"the chat never waited on its standard input within {timeout} s")


def test_ctrl_c_in_a_chat_ends_it_quietly(demo: Path) -> None:
    chat = subprocess.Popen(
        [oryxtui_executable(), "chat", "--root", str(demo), "--agent", "atlas"],
        env={**os.environ, "PYTHONFAULTHANDLER": "1"},
        # A shell's background jobs inherit SIGINT ignored (and Python keeps it so): start the
        # chat as a terminal would, whatever ran the tests.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert chat.stderr is not None
    try:
        greeting = chat.stderr.readline()  # said just before it waits for the first line
        assert greeting.startswith("Chatting with atlas"), greeting
        reading_its_input(chat.pid)  # ctrl-C while it waits for the person, as a person would
        chat.send_signal(signal.SIGINT)
        try:
            status = chat.wait(timeout=60)
        except subprocess.TimeoutExpired:
            chat.send_signal(signal.SIGABRT)  # faulthandler: where it was stuck, for the report
            chat.wait(timeout=30)
            raise AssertionError(f"ctrl-C did not end the chat:\n{chat.stderr.read()}") from None
        assert status == 130
        assert "Traceback" not in chat.stderr.read()
    finally:
        if chat.poll() is None:
            chat.kill()
            chat.wait()


HEAVY = ("textual", "numpy", "fastapi", "starlette", "uvicorn", "openai", "psycopg")


@pytest.mark.parametrize(
    "argv",
    [
        ["memory", "save", "a fact"],
        ["memory", "show", "--agent", "atlas"],
        ["memory", "log"],
        ["memory", "export"],
        ["agents", "list"],
        ["sessions", "list"],
    ],
    ids=lambda argv: " ".join(argv[:2]),
)
def test_scriptable_commands_import_nothing_heavy(demo: Path, argv: list[str]) -> None:
    """A fresh interpreter running the command: no Textual, NumPy, server or model SDK."""
    probe = (
        "import contextlib, io, sys\n"
        "from oryxtui.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    code = main({argv!r})\n"
        f"loaded = sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))\n"
        "print(code, ' '.join(loaded))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=demo, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    code, *loaded = result.stdout.split()
    assert code == "0" and loaded == [], (argv, loaded)


# What a save never needs: the other commands, AGENT.md's models, digests, exports, what was
# replaced (the history's versions), the agent.
NOT_FOR_A_SAVE = (
    "oryxtui.cli.serve",
    "oryxtui.cli.chat",
    "oryxtui.cli.database",
    "oryxtui.cli.sessions",
    "oryxtui.cli.agents",
    "oryxtui.cli.keys",
    "oryxtui.cli.mcp_stdio",
    "oryxtui.cli.workspace",
    "oryxtui.agent_md",
    "oryxtui.memory.digest",
    "oryxtui.memory.transfer",
    "oryxtui.memory.history.validity",
    "oryxtui.agent",
)


def test_a_save_imports_only_what_a_save_needs(demo: Path) -> None:
    """`oryxtui memory save` in a fresh interpreter (a hook, a script): the modules of the
    commands it is not, and of what a save does not do, are never imported (issue 56: a save
    costs ≤ 1.25× a one-model pydantic script, `tests/benchmarks/bench_cli.py`)."""
    probe = (
        "import contextlib, io, sys\n"
        "from oryxtui.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    code = main(['memory', 'save', '--agent', 'ops-bot', 'a fact'])\n"
        f"print(code, ' '.join(sorted(set({NOT_FOR_A_SAVE!r}) & set(sys.modules))))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=demo, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    code, *loaded = result.stdout.split()
    assert code == "0" and loaded == []


def test_the_executable_holds_the_collector_back_for_a_second_only(tmp_path: Path) -> None:
    """A command done within the grace never runs the cyclic collector; one that lasts (the
    dashboard, `serve`, a chat) has it back, with what was built until then set aside."""
    probe = (
        "import gc, time, sys, oryxtui.cli as cli, oryxtui.launch as launch\n"
        "launch.GRACE = 0.2\n"
        "def lasting():\n"
        "    at_start = gc.isenabled()\n"
        "    deadline = time.monotonic() + 30\n"
        "    while not gc.isenabled() and time.monotonic() < deadline:\n"
        "        time.sleep(0.01)\n"
        "    print(at_start, gc.isenabled(), gc.get_freeze_count() > 1000)\n"
        "    return 0\n"
        "cli.main = lasting\n"
        "raise SystemExit(launch.main())\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "True", "True"]
    quick = oryxtui_process("--version")  # the real executable, through the same door
    assert quick.returncode == 0 and quick.stdout.startswith("oryxtui ")
