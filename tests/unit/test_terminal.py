"""Escape sequences from memory, files and models never reach a terminal live."""

from __future__ import annotations

import json
import os
import pty
import subprocess

import pytest
from textual.widgets import Markdown

from oryxtui.memory.format import ARCHIVAL_HEADER, CORE_HEADER
from oryxtui.terminal import neutralize
from oryxtui.workspace import Workspace
from tests.dashboard_support import (
    app_with_llm,
    build_workspace,
    chat_pane,
    prompts,
    shown_memory,
    wait_for,
)
from tests.llm_server import ScriptedLLM
from tests.support import make_agent, oryxtui_executable, run_oryxtui

CLIPBOARD = "\x1b]52;c;ZWNobyBwd25lZA==\x07"  # OSC 52: writes the user's clipboard
TITLE = "\x1b]0;owned\x07"  # OSC 0: sets the window title
LINK = "\x1b]8;;file:///etc/passwd\x1b\\click me\x1b]8;;\x1b\\"  # OSC 8: a hyperlink
HOSTILE = f"deploy {CLIPBOARD}{TITLE}{LINK} \x9b31m done"


@pytest.fixture
def hostile(workspace: Workspace) -> Workspace:
    folder = make_agent(workspace, "ops")
    # Written by hand (or by upstream): oryxtui's own saves would have flattened it.
    (folder / "MEMORY.md").write_text(
        f"{CORE_HEADER}\n- [2026-07-22 09:30:00] core {HOSTILE}\n{ARCHIVAL_HEADER}\n"
        f"- [2026-07-22 09:31:00] {HOSTILE}\n",
        encoding="utf-8",
    )
    return workspace


def on_terminal(*args: str) -> tuple[str, str]:
    """Run the real executable with standard output on a pseudo-terminal."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [oryxtui_executable(), *args],
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=subprocess.PIPE,
    )
    os.close(follower)
    output = b""
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        output += data
    os.close(leader)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    return output.decode("utf-8"), stderr.decode("utf-8")


def assert_neutral(text: str) -> None:
    assert "\x1b" not in text and "\x9b" not in text and "\x07" not in text
    assert "␛]52;c;ZWNobyBwd25lZA==␇" in text and "␛]0;owned␇" in text
    assert "␛]8;;file:///etc/passwd␛\\" in text


def test_the_neutralised_form_shows_every_control() -> None:
    assert neutralize("a\x1b[31mb\tc\nd\x7f\x9b\u202e") == "a␛[31mb\tc\nd␡␛[<U+202E>"
    assert neutralize("a\tb\nc", keep_lines=False) == "a␉b␊c"


@pytest.mark.parametrize(
    "command",
    [
        ("memory", "show", "--agent", "ops"),
        ("memory", "recall", "--agent", "ops", "deploy"),
        ("prompt", "--agent", "ops"),
        ("chat", "--agent", "ops", "what do you remember about deploy"),
    ],
)
def test_cli_output_on_a_terminal_is_neutralised(hostile: Workspace, command: tuple) -> None:
    output, _ = on_terminal(*command, "--root", str(hostile.root))
    assert_neutral(output)


def test_piped_memory_show_stays_byte_exact(hostile: Workspace) -> None:
    shown = run_oryxtui("memory", "show", "--agent", "ops", "--root", str(hostile.root))
    assert shown.returncode == 0
    assert (
        f"core {HOSTILE}" in shown.stdout and f"- [2026-07-22 09:31:00] {HOSTILE}" in shown.stdout
    )


def test_json_output_stays_exact(hostile: Workspace) -> None:
    prompt = run_oryxtui("prompt", "--agent", "ops", "--json", "--root", str(hostile.root))
    assert "\x1b" not in prompt.stdout  # JSON escapes it …
    blocks = {block["name"]: block["text"] for block in json.loads(prompt.stdout)["blocks"]}
    memory = blocks["memory"]
    assert HOSTILE in memory  # … and it decodes to exactly what the model receives


def test_errors_on_a_terminal_are_neutralised(hostile: Workspace) -> None:
    (hostile.agents_dir / "ops" / "AGENT.md").write_text(f"---\nname: [{TITLE}\n---\n")
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [oryxtui_executable(), "prompt", "--agent", "ops", "--root", str(hostile.root)],
        stdout=subprocess.DEVNULL,
        stderr=follower,
    )
    os.close(follower)
    process.wait(timeout=60)
    error = os.read(leader, 65536).decode()
    os.close(leader)
    assert "not valid YAML" in error and "\x1b" not in error


async def test_chat_replies_in_the_dashboard_are_neutralised(workspace: Workspace) -> None:
    build_workspace(workspace)
    script = [{"text": f"Here: {HOSTILE}\n\nand **bold**"}]
    with ScriptedLLM(script) as llm:
        app = app_with_llm(workspace, llm.base_url)
        async with app.run_test(size=(160, 45)) as pilot:
            await wait_for(pilot, lambda: shown_memory(app) is not None and "alpha" in prompts(app))
            await pilot.press("c", *"hi", "enter")
            await wait_for(pilot, lambda: chat_pane(app).turns_ended == 1)
            sources = [m.source for m in chat_pane(app).query(Markdown) if m.source]
            assert sources, "no reply shown"
            for source in sources:
                assert "\x1b" not in source and "\x07" not in source
            assert any("␛]52;" in source for source in sources)
