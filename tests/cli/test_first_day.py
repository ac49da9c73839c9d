"""A new user's first day (issue 58): the hints oryxtui prints work pasted in the folder where
they were printed — with oryxtui on PATH, and run by its path (`.venv/bin/oryxtui`) when it
is not."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.support import oryxtui_executable

SUGGESTED = re.compile(r"`((?:\S*/)?oryxtui [^`]*)`")


def run(command: list[str] | str, cwd: Path, path: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ORYXTUI_")} | {"PATH": path}
    env.pop("ORYXOS_ROOT", None)
    return subprocess.run(
        command,
        cwd=cwd,
        env=env,
        shell=isinstance(command, str),
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize("on_path", [True, False], ids=["on-path", "by-its-path"])
def test_every_hint_works_pasted_where_it_was_printed(tmp_path: Path, on_path: bool) -> None:
    executable = Path(oryxtui_executable())
    system = "/usr/bin:/bin"
    path = f"{executable.parent}:{system}" if on_path else system
    started = "oryxtui" if on_path else os.path.relpath(executable, tmp_path)
    made = run([started, "demo", "my demo", "--no-open"], tmp_path, path)
    assert made.returncode == 0, made.stderr
    wrong = run(
        [started, "memory", "show", "--agent", "atlass", "--root", "my demo"], tmp_path, path
    )
    assert wrong.returncode == 2
    hints = SUGGESTED.findall(made.stdout) + SUGGESTED.findall(wrong.stderr)
    assert len(hints) >= 4, (made.stdout, wrong.stderr)
    for hint in hints:
        if hint.endswith(("new NAME --root 'my demo'",)):
            hint = hint.replace("NAME", "scout")
        if " memory " not in hint and " agents " not in hint:
            continue  # the dashboard itself needs a terminal (tested on its own)
        pasted = run(hint, tmp_path, path)
        assert pasted.returncode == 0, (hint, pasted.stderr)
