"""The real `oryxtui` dashboard in tmux over a workspace whose every stored field is laced with
escape sequences (memory, AGENT.md, sessions and their tool calls, the history file, a model's
replies, tool names and errors): every view is opened, and the raw bytes the dashboard wrote to
the terminal must hold none of them live — only their visible stand-ins."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oryxtui import database
from oryxtui.memory.format import ARCHIVAL_HEADER, CORE_HEADER
from oryxtui.workspace import Workspace, init_workspace
from tests.llm_server import ScriptedLLM
from tests.support import oryxtui_executable
from tests.tmux import Terminal

# Real processes, terminals, browsers, installs or scale: one at a time (`--dist loadgroup`),
# so no two of them compete for the machine at the same moment.
pytestmark = [pytest.mark.system, pytest.mark.xdist_group("system")]

CLIPBOARD = "\x1b]52;c;ZWNobyBwd25lZA==\x07"  # OSC 52: writes the user's clipboard
TITLE = "\x1b]0;owned\x07"  # OSC 0: the window title
LINK = "\x1b]8;;file:///etc/passwd\x1b\\click\x1b]8;;\x1b\\"  # OSC 8: a hyperlink
C1 = "\x9b31m"  # the one-byte CSI
BIDI = "\u202e"
HIDDEN = "\u200b\u2060\ufeff"  # take no room: hide what sits between two words
HOSTILE = f"{CLIPBOARD}{TITLE}{LINK}{C1}{BIDI}{HIDDEN}"
# Never in the bytes written: what a terminal would obey.
# (Textual's own sequences are there too: OSC 22, the mouse pointer's shape, ends in BEL.)
LIVE = [
    b"\x1b]52",  # any clipboard write at all
    b"\x1b]0;",  # any window title
    b"\x1b]8;;file:///etc/passwd",
    b"\x1b[31mred",
    "\x9b".encode(),
    BIDI.encode(),
    *(char.encode() for char in HIDDEN),
]
TOOL_NAME = "\x1b]52;c;aGVsbG8=\x1b\\"


def hostile_workspace(root: Path, llm_url: str) -> Workspace:
    workspace = init_workspace(root)
    folder = workspace.agents_dir / "ops"
    folder.mkdir(parents=True)
    (folder / "AGENT.md").write_text(
        '---\nname: ops\ndescription: "desc \\e]0;owned\\a \\e[31mred"\n---\nBody.\n'
    )
    lines = [f"- [2026-07-22 09:{30 + i:02d}:00] deploy note {i} {HOSTILE}" for i in range(5)]
    (folder / "MEMORY.md").write_text(
        f"{CORE_HEADER}\n- [2026-07-22 09:00:00] core {HOSTILE}\n{ARCHIVAL_HEADER}\n"
        + "".join(line + "\n" for line in lines)
    )
    records = [
        {"n": 1, "op": "baseline", "actor": "outside", "after": []},
        {
            "n": 2,
            "time": f"2026-07-22T09:31:00{CLIPBOARD}",
            "op": "outside",
            "actor": f"outside{TITLE}",
            "session": f"s{C1}{BIDI}",
            "after": [{"scope": "archival", "line": line, "at": i} for i, line in enumerate(lines)],
        },
        {"n": 2, "op": "save", "actor": "cli", "after": [{"scope": "core", "line": "- twice"}]},
    ]
    (folder / "MEMORY.md.journal").write_text("".join(json.dumps(r) + "\n" for r in records))
    turn = [
        {"role": "user", "content": f"deploy question {HOSTILE}"},
        {
            "role": "assistant",
            "content": "",
            "toolCalls": [{"id": "c1", "name": TOOL_NAME, "argumentsJson": f'{{"k": "{C1}"}}'}],
        },
        {"role": "tool", "content": f"result {HOSTILE}", "toolName": TOOL_NAME, "toolCallId": "c1"},
        {"role": "assistant", "content": f"deploy answer {HOSTILE}"},
    ]
    connection = database.connect(workspace.db_path)
    connection.execute(
        "INSERT INTO sessions (session_id, profile_name, channel, user_id, messages_json,"
        " status, created_at, last_active_at) VALUES (?, 'ops', 'web', 'u', ?, 'ACTIVE',"
        " '2026-07-22 09:00:00', ?)",
        (f"web:u{TITLE}:ops", json.dumps(turn), f"2026-07-22 09:59:00{CLIPBOARD}"),
    )
    connection.close()
    (workspace.root / "config.toml").write_text(
        f'[llm]\nbase_url = "{llm_url}"\nmodel = "m"\n'
        "[memory]\narchival_max_chars = 200\n"  # entries outside the window: a digest is due
    )
    return workspace


def test_no_stored_text_reaches_the_terminal_live(terminal: Terminal, tmp_path: Path) -> None:
    script = [
        {"tool_calls": [(TOOL_NAME, {"k": HOSTILE})]},
        {"text": f"reply {HOSTILE} first-turn-over"},
        {"status": 500, "text": f"boom {HOSTILE}"},
        {"text": f"summary {HOSTILE}"},
    ]
    raw = tmp_path / "raw.bin"
    ready = tmp_path / "ready"
    with ScriptedLLM(script, repeat_last=True) as llm:
        workspace = hostile_workspace(tmp_path / "ws", llm.base_url)
        # The dashboard starts once the pane's output is piped to a file: every byte is seen.
        command = (
            f"while [ ! -e {ready} ]; do sleep 0.02; done; env COLUMNS=160 LINES=45 "
            f"{oryxtui_executable()} --root {workspace.root}; sleep 30"
        )
        terminal.start(command, 160, 45)
        assert terminal.tmux("pipe-pane", "-t", "e2e", f"cat >> {raw}").returncode == 0
        ready.touch()
        screen = terminal.screen
        terminal.wait(lambda: "Archival · 5" in screen(), "the dashboard")
        terminal.wait(lambda: "desc" in screen(), "the agent's banner")
        terminal.keys("c")
        terminal.wait(lambda: "Save" not in screen().splitlines()[-1], "the chat input")
        terminal.keys("hello", literal=True)
        terminal.keys("Enter")
        terminal.wait(lambda: "first-turn-over" in screen(), "the hostile reply")
        # The reply shows before its turn ends (stored, indexed): until then the input is off,
        # and keys typed would reach the panes ("g" of "again" opened a digest once, in CI).
        terminal.wait(lambda: "Save" not in screen().splitlines()[-1], "the chat input back")
        terminal.keys("again", literal=True)
        terminal.keys("Enter")
        terminal.wait(lambda: "boom" in screen(), "the model's error")
        terminal.wait(lambda: "the last turn failed" in screen(), "the end of the turn")
        # The input has the focus back (the footer drops the single keys): escape leaves it.
        terminal.wait(lambda: "Save" not in screen().splitlines()[-1], "the chat input")
        terminal.keys("Escape")
        terminal.wait(lambda: "Save" in screen().splitlines()[-1], "the panes")
        terminal.keys("p")
        terminal.wait(lambda: "memory · " in screen(), "the prompt preview")
        terminal.keys("S")
        terminal.wait(lambda: "Sessions, newest first · 2" in screen(), "the sessions view")
        terminal.keys("Down")  # the stored session (the dashboard's own is the newest)
        terminal.wait(lambda: "deploy answer" in screen(), "a stored turn")
        terminal.keys("deploy", literal=True)  # typing in the view searches
        terminal.wait(lambda: "Turns matching" in screen(), "the search hits")
        terminal.keys("Escape")
        terminal.keys("Escape")
        terminal.wait(lambda: "Save" in screen().splitlines()[-1], "the panes")
        terminal.keys("h")
        terminal.wait(lambda: "History of agent ops" in screen(), "the history view")
        # Two records with one number do not blank it: the readable one is listed.
        terminal.wait(lambda: "changed outside oryxtui" in screen(), "a change in the list")
        terminal.keys("Down")
        terminal.keys("Escape")
        terminal.wait(lambda: "Save" in screen().splitlines()[-1], "the panes")
        terminal.keys("r")
        terminal.wait(lambda: "Recall from" in screen(), "the recall dialog")
        terminal.keys("deploy", literal=True)
        terminal.wait(lambda: "matches" in screen(), "the recall hits")
        terminal.keys("Escape")
        terminal.wait(lambda: "Recall from" not in screen(), "the panes")
        terminal.keys("g")
        terminal.wait(lambda: "Write a digest" in screen(), "the digest preview")
        terminal.keys("Escape")
        terminal.keys("q")
        terminal.wait(lambda: "Archival" not in screen(), "the dashboard to quit")
        terminal.tmux("pipe-pane", "-t", "e2e")  # closes the pipe: every byte is in the file
    written = raw.read_bytes()
    assert len(written) > 10_000, "the dashboard's output was not captured"
    for live in LIVE:
        assert live not in written, f"{live!r} reached the terminal"
    shown = written.decode("utf-8", errors="replace")
    assert "ZWNobyBwd25lZA" in shown and "␛]52;c;" in shown  # drawn, as stand-ins
    assert "aGVsbG8" in shown  # the tool's name too
