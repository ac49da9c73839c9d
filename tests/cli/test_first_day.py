"""A new user's first day (issue 58): the hints oryxtui prints work pasted in the folder where
they were printed — with oryxtui on PATH, and run by its path (`.venv/bin/oryxtui`) when it
is not."""

from __future__ import annotations

import json
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


def test_the_as_of_examples_of_the_facts_page_work_on_the_demo(tmp_path: Path) -> None:
    """docs/facts.md's examples, run as written (the shell works out the moments) on a demo
    made now: its history starts a day back, so each answers, and 12 hours ago the memory
    held fewer entries than now."""
    executable = oryxtui_executable()
    page = (Path(__file__).parents[2] / "docs" / "facts.md").read_text()
    section = page.split("## What the agent knew at any moment", 1)[1].split("```sh\n", 1)[1]
    commands = section.split("```", 1)[0].strip().splitlines()
    assert any("--as-of" in command for command in commands)
    made = run([executable, "demo", "demo", "--no-open"], tmp_path, os.environ["PATH"])
    assert made.returncode == 0, made.stderr
    root = " --root demo"
    for command in commands:
        done = run(command.replace("oryxtui", executable, 1) + root, tmp_path, os.environ["PATH"])
        assert done.returncode == 0, (command, done.stderr)
    now = run([executable, "memory", "show", "--agent", "ops-bot", "--json", "--root", "demo"],
              tmp_path, os.environ["PATH"])  # fmt: skip
    then = run(
        f"{executable} memory show --agent ops-bot --json --root demo "
        "--as-of \"$(date -d '12 hours ago' '+%F %T')\"",
        tmp_path,
        os.environ["PATH"],
    )
    assert then.returncode == 0, then.stderr
    count = len(json.loads(now.stdout)["archival"])
    assert len(json.loads(then.stdout)["archival"]) < count


def test_the_related_examples_of_the_facts_page_work_on_the_demo(tmp_path: Path) -> None:
    """docs/facts.md's flow for an agent (save → related → replace) and for a person (the
    inbox, the log), run as written on a demo made now."""
    executable = oryxtui_executable()
    page = (Path(__file__).parents[2] / "docs" / "facts.md").read_text()
    section = page.split("## Related entries", 1)[1].split("## What the agent knew", 1)[0]
    blocks = [block.split("```", 1)[0] for block in section.split("```sh\n")[1:]]
    commands = [line for block in blocks for line in block.strip().splitlines()]
    assert len(commands) == 3
    made = run([executable, "demo", "demo", "--no-open"], tmp_path, os.environ["PATH"])
    assert made.returncode == 0, made.stderr
    answers = []
    for command in commands:
        done = run(command.replace("oryxtui", executable, 1) + " --root demo", tmp_path,
                   os.environ["PATH"])  # fmt: skip
        assert done.returncode == 0, (command, done.stderr)
        answers.append(done.stdout)
    saved = json.loads(answers[0])
    related = saved["related"]
    assert 1 <= len(related) <= 5
    assert related[0]["content"].startswith("settlement is owned by Team Falcon")
    # The agent's replace, with the id related gave: the older leaves, the log says so.
    replaced = run([executable, "memory", "replace", "--agent", "ops-bot", related[0]["id"],
                    "--by", saved["entry"]["id"], "--root", "demo"], tmp_path,
                   os.environ["PATH"])  # fmt: skip
    assert replaced.returncode == 0, replaced.stderr
    log = run([executable, "memory", "log", "--agent", "ops-bot", "--root", "demo"], tmp_path,
              os.environ["PATH"])  # fmt: skip
    assert "replaced" in log.stdout and "Team Falcon" in log.stdout
