"""Where every entry came from: the change that wrote it, an agent's session and turn, an
upstream `save_memory` call's session, or "unknown" for lines from before the history."""

from __future__ import annotations

import contextlib
import json

from oryxtui.database import connect
from oryxtui.memory.format import ARCHIVAL_HEADER, CORE_HEADER
from oryxtui.workspace import Workspace
from tests.support import cli, make_agent


def origins(workspace: Workspace, agent: str) -> dict[str, dict]:
    shown = cli("memory", "show", "--agent", agent, "--json", "--root", str(workspace.root))
    assert shown.code == 0, shown.stderr
    data = json.loads(shown.stdout)
    return {e["content"]: e["origin"] for section in ("core", "archival") for e in data[section]}


def test_each_entry_says_who_wrote_it_and_an_agents_turn(workspace: Workspace) -> None:
    (make_agent(workspace, "ops") / "MEMORY.md").write_text(
        f"{CORE_HEADER}\n{ARCHIVAL_HEADER}\n- typed by hand before any history\n"
    )
    root = ("--root", str(workspace.root))
    for message in (
        "hello there",
        "remember that the pager code is 4711",
        "remember in core the deploy day is Tuesday",
    ):
        assert cli("chat", "--agent", "ops", message, *root).code == 0
    assert cli("memory", "save", "from the cli", "--agent", "ops", *root).code == 0
    found = origins(workspace, "ops")
    assert found["typed by hand before any history"] == {"by": "unknown"}
    pager = found["the pager code is 4711"]
    assert pager["by"] == "agent" and pager["turn"] == 1 and pager["session"].endswith(":ops")
    assert found["the deploy day is Tuesday"]["turn"] == 2
    assert found["from the cli"]["by"] == "cli" and "turn" not in found["from the cli"]
    log = cli("memory", "log", "--agent", "ops", *root).stdout
    assert ", turn 1)" in log and ", turn 2)" in log
    # A move keeps the line's writer; an edit is its editor's.
    shown = json.loads(cli("memory", "show", "--agent", "ops", "--json", *root).stdout)
    pager_id = next(e["id"] for e in shown["archival"] if e["content"].startswith("the pager"))
    moved = cli("memory", "move", pager_id, "core", "--agent", "ops", "--json", *root)
    assert origins(workspace, "ops")["the pager code is 4711"]["turn"] == 1
    moved_id = json.loads(moved.stdout)["moved"]["id"]
    cli("memory", "edit", moved_id, "the pager code is 4712", "--agent", "ops", *root)
    assert origins(workspace, "ops")["the pager code is 4712"]["by"] == "cli"


def test_a_line_upstream_wrote_is_linked_to_its_save_memory_call(workspace: Workspace) -> None:
    memory = make_agent(workspace, "ops") / "MEMORY.md"
    memory.write_text(f"{CORE_HEADER}\n{ARCHIVAL_HEADER}\n- [2026-07-21 09:00:00] known\n")
    root = ("--root", str(workspace.root))
    assert cli("memory", "log", "--agent", "ops", *root).code == 0  # the history knows it now
    with memory.open("a") as handle:  # upstream's server appends, as its tool call records
        handle.write("- [2026-07-21 10:00:00] rotate the keys monthly\n")
    with contextlib.closing(connect(workspace.db_path)) as db:  # oryxos.db, its schema made
        db.executemany(
            "INSERT INTO tool_invocations (session_id, tool_name, input_json, success, "
            "created_at) VALUES (?, 'save_memory', ?, ?, '2026-07-21 10:00:00')",
            [
                ("web:mei:ops", json.dumps({"content": "rotate the keys\nmonthly"}), 1),
                ("web:mei:ops", "not json", 1),  # untrusted: skipped and counted
                ("web:eve:ops", json.dumps({"content": "known"}), 0),  # failed: not a save
            ],
        )
    shown = cli("memory", "show", "--agent", "ops", "--json", *root)
    found = {e["content"]: e["origin"] for e in json.loads(shown.stdout)["archival"]}
    upstream = found["rotate the keys monthly"]
    assert upstream["via"] == "upstream" and upstream["session"] == "web:mei:ops"
    assert upstream["op"] == "outside"
    assert found["known"] == {"by": "unknown"}
    assert "1 tool call record" in shown.stderr
