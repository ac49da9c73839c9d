"""Helpers shared by the tests: a fixed clock, agent folders, and the real `oryxtui` executable."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TypeVar
from unittest import mock

from oryxtui.workspace import Workspace

FIXED_NOW = datetime(2026, 7, 22, 9, 30, 0)


# Facts an agent keeps, for the embedders' meaning checks (each adds its own).
FACTS = [
    "Deploy window is Tuesdays and Thursdays 14:00-16:00.",
    "Ravi leads Team Falcon.",
    "My grandmother bakes apple pie every Sunday.",
]
# An agent's everyday notes, among which a fact stands out (or not) to a model: from ten
# entries on, an entry must stand out of the agent's others to be found by meaning.
ROUTINE_NOTES = [
    "Nightly backup finished in 14 minutes.",
    "Disk usage on db-2 is at 61 %.",
    "Certificate for api.example.com renews in 30 days.",
    "Weekly dependency update merged.",
    "Log rotation ran on all hosts.",
    "Cache hit rate this week: 92 %.",
    "On-call handover notes sent to the team.",
    "Monitoring dashboard moved to the new folder.",
]


def fixed_clock() -> datetime:
    return FIXED_NOW


class Ticking:
    """A clock a minute later at every reading, from 2026-07-01 09:00."""

    def __init__(self) -> None:
        self.now = datetime(2026, 7, 1, 9, 0, 0)

    def __call__(self) -> datetime:
        self.now += timedelta(minutes=1)
        return self.now


def make_agent(workspace: Workspace, name: str, front_matter: str = "") -> Path:
    folder = workspace.agents_dir / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "AGENT.md").write_text(f"---\nname: {name}\n{front_matter}---\nBody of {name}.\n")
    return folder


def agents_with_notes(workspace: Workspace, *names: str) -> Workspace:
    """`names` as agents, each with one core and one archival entry naming it."""
    from oryxtui.memory.format import ARCHIVAL_HEADER, CORE_HEADER

    for name in names:
        (make_agent(workspace, name) / "MEMORY.md").write_text(
            f"{CORE_HEADER}\n- [2026-07-20 08:00:00] core of {name}\n"
            f"{ARCHIVAL_HEADER}\n- [2026-07-21 09:00:00] note of {name}\n"
        )
    return workspace


def make_key(workspace: Workspace, name: str, scope: str, agents: str | None = None) -> str:
    """A new API key (`oryxtui keys create`), as its holder gets it."""
    args = ["keys", "create", name, "--scope", scope, "--root", str(workspace.root)]
    result = cli(*args, *(["--agents", agents] if agents is not None else []))
    assert result.code == 0, result.stderr
    return result.stdout.strip()


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def oryxtui_executable() -> str:
    beside = Path(sys.executable).parent / "oryxtui"
    found = str(beside) if beside.exists() else shutil.which("oryxtui")
    assert found, "the oryxtui executable is not installed; run `pip install -e .[test]`"
    return found


def oryxtui_process(
    *args: str, cwd: Path | None = None, stdin: str | None = None, env: dict | None = None
) -> subprocess.CompletedProcess[str]:
    """The real `oryxtui` executable, in a process of its own: for what only a process shows
    (the entry point, exit statuses, signals, pipes, what a fresh interpreter imports)."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [oryxtui_executable(), *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        env=full_env,
        timeout=60,
    )


def embed_offline(
    home: Path, module: str, embedder: str, packages: set[str]
) -> subprocess.CompletedProcess[str]:
    """A fresh process that embeds one text with `module.embedder()` and prints the vector's
    size, with no network to reach (proxies pointing nowhere, the hub told to stay offline) and
    an empty home and cache under `home` — and fails if any of `packages` (the model's own,
    whose code must never run) was imported."""
    script = (
        "import sys\n"
        f"from {module} import {embedder}\n"
        f"(v,) = {embedder}().embed(['offline'])\n"
        f"assert not set({sorted(packages)!r}) & set(sys.modules), sorted(sys.modules)\n"
        "print(len(v))\n"
    )
    environ = os.environ | {
        "HF_HUB_OFFLINE": "1",
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / "cache"),
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "HTTP_PROXY": "http://127.0.0.1:9",
    }
    return subprocess.run(
        [sys.executable, "-c", script], env=environ, capture_output=True, text=True, timeout=120
    )


def run_oryxtui(
    *args: str, cwd: Path | None = None, stdin: str | None = None, env: dict | None = None
) -> subprocess.CompletedProcess[str]:
    """`oryxtui ARGS` run in this process (`main(argv)`), in `cwd`, with `env` added to the
    environment, its streams captured: what the executable does, without a process start."""
    with contextlib.ExitStack() as stack:
        if env:
            stack.enter_context(mock.patch.dict(os.environ, {k: str(v) for k, v in env.items()}))
        if cwd is not None:
            stack.enter_context(contextlib.chdir(cwd))
        result = cli(*args, stdin=stdin or b"")
    argv = ["oryxtui", *args]
    return subprocess.CompletedProcess(argv, result.code, result.stdout, result.stderr)


@dataclass(frozen=True)
class CliResult:
    code: int
    stdout: str
    stderr: str


def cli(*args: str, stdin: str | bytes = b"") -> CliResult:
    """`oryxtui ARGS` run in this process (as `main(argv)`), its streams captured."""
    from oryxtui.cli import main

    data = stdin.encode() if isinstance(stdin, str) else stdin
    out, err = io.StringIO(), io.StringIO()
    source = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
    with (
        mock.patch.object(sys, "stdin", source),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse: bad usage
            code = exc.code if isinstance(exc.code, int) else 2
    return CliResult(code, out.getvalue(), err.getvalue())


T = TypeVar("T")


def until(condition: Callable[[], T | None], timeout: float = 30) -> T:
    """What `condition` gives once it gives something (not None, not false), polled with a
    deadline — never a fixed sleep."""
    deadline = time.monotonic() + timeout
    while not (found := condition()):
        assert time.monotonic() < deadline, "the condition did not hold in time"
        time.sleep(0.05)
    return found
