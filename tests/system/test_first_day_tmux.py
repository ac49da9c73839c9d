"""The dashboard a person meets (issue 58), the installed `oryxtui` in tmux: enter opens an
entry (its id, whole text, who wrote it, what it replaced); help explains the `⧗N` mark; the
digest dialog speaks the interface's language, not the file format's heading."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support import oryxtui_executable, run_oryxtui
from tests.tmux import Terminal

pytestmark = [pytest.mark.system, pytest.mark.xdist_group("system")]
LONG = "The staging database moved to db-stg-7 " + "after the migration, " * 20 + "END-OF-TEXT"


def test_enter_opens_an_entry_help_explains_the_hold_mark_digests_in_english(
    terminal: Terminal, tmp_path: Path
) -> None:
    root = str(tmp_path / "demo")
    assert run_oryxtui("demo", root, "--no-open").returncode == 0
    old = run_oryxtui("memory", "save", "staging database is db-stg-3", "--agent", "atlas",
                      "--root", root, "--json")  # fmt: skip
    old_id = json.loads(old.stdout)["entry"]["id"]
    replaced = run_oryxtui("memory", "replace", old_id, LONG, "--agent", "atlas", "--root", root)
    assert replaced.returncode == 0, replaced.stderr
    terminal.start(f"env COLUMNS=120 LINES=40 {oryxtui_executable()} --root {root}; sleep 30")
    terminal.wait(lambda: "Archival · 6" in terminal.screen(), "the dashboard on atlas")

    terminal.keys("Tab")  # the core pane
    terminal.keys("Tab")  # the archival pane: its cursor on the newest entry, the replacement
    terminal.keys("Enter")
    terminal.wait(lambda: "Archival entry" in terminal.screen(), "the entry opened")
    terminal.wait(lambda: "It replaced:" in terminal.screen(), "its history read")
    screen = terminal.screen()
    assert "staging database is db-stg-3" in screen and "by cli" in screen
    assert "END-OF-TEXT" in screen  # the whole text, however long
    terminal.keys("Escape")
    terminal.wait(lambda: "Archival entry" not in terminal.screen(), "the entry closed")

    terminal.keys("?")
    terminal.wait(lambda: "Keys (as bound now)" in terminal.screen(), "help")
    terminal.keys("End")  # the marks come last
    terminal.wait(lambda: "wait for review" in terminal.screen(), "help on the ⧗N mark")
    assert "⧗N" in terminal.screen()
    terminal.keys("Escape")
    terminal.wait(lambda: "wait for review" not in terminal.screen(), "help closed")

    terminal.keys("BTab", "BTab", "Down")  # the agent list, then ops-bot
    terminal.wait(lambda: "Archival · 70" in terminal.screen(), "ops-bot")
    terminal.keys("g")
    terminal.wait(lambda: "Write a digest of" in terminal.screen(), "the digest dialog")
    screen = terminal.screen()
    assert "Digest of" in screen and "摘要" not in screen
    terminal.keys("Escape")
