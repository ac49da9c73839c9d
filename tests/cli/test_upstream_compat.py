"""oryxtui and upstream OryxOS (a27474c) on one workspace: the same memory read from the same
files and rows, through the real `oryxtui` executable where a user would use it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from oryxtui import database
from oryxtui.config import MemorySettings, RecallSettings, Settings
from oryxtui.memory import MemoryService
from oryxtui.memory.format import ARCHIVAL_HEADER, CORE_HEADER
from oryxtui.places import Here
from oryxtui.tui.overview import load_agent
from oryxtui.workspace import Workspace
from tests import upstream_reference as upstream
from tests.support import fixed_clock, make_agent, run_oryxtui

# A file a person and upstream have both written to: a heading of the user's own after the
# archival section (upstream appended below it), a sub-heading and a header-like line inside
# sections, ragged edges, blank lines and an entry with no content.
HAND_EDITED = (
    "# ops-bot's memory\n"
    "Notes above the sections are no one's memory.\n"
    f"{CORE_HEADER}  \n"
    "\n"
    "   - [2026-07-01 09:00:00] Speaks German and English.\n"
    "### Preferences\n"
    "- prefers short answers\n"
    f"{CORE_HEADER} (old)\n"
    "- used to like long answers  \n"
    f"{ARCHIVAL_HEADER}\n"
    "- [2026-07-02 10:00:00] Deploy window is Tuesday 14:00.\n"
    "\n"
    "- [2026-07-03 11:00] rolled back release 1.4\n"
    "## Notes\n"
    "checklist: ask before a deploy\n"
    "- [2026-07-04 12:00:00] deploy moved to Wednesday\n"
    "- [2026-07-05 13:00:00] \n"
)


@pytest.fixture
def hand_edited(workspace: Workspace) -> tuple[Path, Path]:
    folder = make_agent(workspace, "ops-bot")
    (folder / "MEMORY.md").write_text(HAND_EDITED, encoding="utf-8")
    return workspace.root.parent, folder / "MEMORY.md"


def test_memory_show_is_upstreams_load(hand_edited: tuple[Path, Path]) -> None:
    root, _ = hand_edited
    shown = run_oryxtui("memory", "show", "--root", str(root), "--agent", "ops-bot")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == upstream.load(HAND_EDITED) + "\n"
    # Entries upstream appended after '## Notes' are memory, in the prompt and in the panes.
    assert "deploy moved to Wednesday" in shown.stdout
    listed = json.loads(
        run_oryxtui("memory", "show", "--root", str(root), "--agent", "ops-bot", "--json").stdout
    )
    assert [entry["content"] for entry in listed["archival"]] == [
        "Deploy window is Tuesday 14:00.",
        "rolled back release 1.4",
        "## Notes",
        "checklist: ask before a deploy",
        "deploy moved to Wednesday",
        "",
    ]
    # Hand-written lines stay hand-written: no time.
    assert [entry["time"] for entry in listed["archival"]][2:4] == [None, None]
    assert listed["core"][0] == {
        "id": listed["core"][0]["id"],
        "time": "2026-07-01 09:00:00",
        "content": "Speaks German and English.",
        "origin": {"by": "unknown"},  # written by hand, before any history
    }


@pytest.mark.parametrize("keyword", ["deploy", "DEPLOY", "notes", "###", "answers", "- [2026-07-0"])
def test_memory_recall_is_upstreams_recall_by_keyword(
    hand_edited: tuple[Path, Path], keyword: str
) -> None:
    root, _ = hand_edited
    found = run_oryxtui(
        "memory",
        "recall",
        keyword,
        "--root",
        str(root),
        "--agent",
        "ops-bot",
        env={"ORYXTUI_MEMORY__RECALL__PROFILE": "upstream"},  # upstream's rule, byte for byte
    )
    assert found.returncode == 0, found.stderr
    assert found.stdout.splitlines() == upstream.recall_by_keyword(HAND_EDITED, keyword)


def test_a_save_lands_where_upstream_appends_and_keeps_everything_else(
    hand_edited: tuple[Path, Path],
) -> None:
    root, memory_file = hand_edited
    saved = run_oryxtui(
        "memory", "save", "release 1.5 shipped", "--root", str(root), "--agent", "ops-bot"
    )
    assert saved.returncode == 0, saved.stderr
    text = memory_file.read_text(encoding="utf-8")
    assert text.startswith(HAND_EDITED)  # nothing before it changed, byte for byte
    new_line = text[len(HAND_EDITED) :]
    assert new_line.startswith("- [") and new_line.endswith("] release 1.5 shipped\n")
    assert upstream.archival_entries(text)[-1] == new_line.rstrip("\n")


def test_a_repeated_header_is_pointed_out(workspace: Workspace) -> None:
    folder = make_agent(workspace, "ops-bot")
    (folder / "MEMORY.md").write_text(
        f"{CORE_HEADER}\n- a\n{ARCHIVAL_HEADER}\n- b\n{ARCHIVAL_HEADER}\n- lost to both\n"
    )
    root = str(workspace.root.parent)
    shown = run_oryxtui("memory", "show", "--root", root, "--agent", "ops-bot")
    assert "lost to both" not in shown.stdout
    assert "repeats a section header (line 5)" in shown.stderr
    assert "merge them into the first section" in shown.stderr
    # The dashboard marks the agent and says the same in its banner.
    service = MemoryService.open(workspace, Settings(), clock=fixed_clock)
    summary = load_agent(Here(workspace, Settings(), service), "ops-bot").summary
    assert summary.error and "repeats a section header (line 5)" in summary.error


def test_a_bom_does_not_hide_the_core_section(workspace: Workspace) -> None:
    """Upstream misses a header on a first line that starts with a BOM (an editor's), and so
    drops the whole core section from its prompt; oryxtui reads it (a listed deviation)."""
    folder = make_agent(workspace, "ops-bot")
    text = f"\ufeff{CORE_HEADER}\n- core fact\n{ARCHIVAL_HEADER}\n- b\n"
    (folder / "MEMORY.md").write_text(text, encoding="utf-8")
    shown = run_oryxtui(
        "memory", "show", "--root", str(workspace.root.parent), "--agent", "ops-bot"
    )
    assert shown.stdout == f"{CORE_HEADER}\n- core fact\n{ARCHIVAL_HEADER}\n- b\n"
    assert "core fact" not in upstream.load(text)


def test_the_window_holds_about_as_many_emoji_lines_as_upstreams(service: MemoryService) -> None:
    for index in range(200):
        service.save(
            None, f"🎉🎉🎉🎉🎉🎉🎉🎉🎉🎉 party {index:03d} 🎈🎈🎈🎈🎈🎈🎈🎈🎈🎈", "archival"
        )
    ours = service.build_context(None).split(f"{ARCHIVAL_HEADER}\n", 1)[1].split("\n")
    text = service.store.workspace.global_memory_file.read_text(encoding="utf-8")
    theirs = upstream.load(text).split(f"{ARCHIVAL_HEADER}\n", 1)[1].split("\n")
    # Upstream's window starts mid-line; oryxtui's drops that part-line.
    assert ours == theirs[1:]
    assert upstream.java_length("\n".join(ours)) <= 4000


def rows_block(rows: list[tuple[str, str]]) -> str:
    """Upstream's SqliteMemoryStore.load() for `(scope, content)` rows in id order."""
    core = [f"- {content}" for scope, content in rows if scope == "CORE"]
    archival = [f"- {content}" for scope, content in rows if scope == "ARCHIVAL"][-100:]
    return f"{CORE_HEADER}\n" + "\n".join(core) + f"\n{ARCHIVAL_HEADER}\n" + "\n".join(archival)


def test_the_sqlite_block_is_upstreams_for_the_same_rows(workspace: Workspace) -> None:
    make_agent(workspace, "ops-bot")
    upstream_recall = RecallSettings(profile="upstream")
    memory = MemoryService.open(
        workspace,
        Settings(memory=MemorySettings(backend="sqlite", recall=upstream_recall)),
        clock=fixed_clock,
    )
    assert memory.build_context("ops-bot") == rows_block([])
    rows = [("CORE", "speaks German"), ("CORE", "on call Mondays")]
    rows += [("ARCHIVAL", f"archival entry {index:03d} " + "x" * 60) for index in range(130)]
    for scope, content in rows:
        memory.save("ops-bot", content, scope)
    assert memory.build_context("ops-bot") == rows_block(rows)  # 130 rows: the newest 100
    shown = run_oryxtui(
        "memory",
        "show",
        "--root",
        str(workspace.root.parent),
        "--agent",
        "ops-bot",
        env={"ORYXTUI_MEMORY__BACKEND": "sqlite"},
    )
    assert shown.stdout == rows_block(rows) + "\n"
    # The dashboard's list still shows each row's time, and marks what is injected.
    snapshot = memory.snapshot("ops-bot")
    assert snapshot.archival[0].time == "2026-07-22 09:30:00"
    assert snapshot.window_start == 30
    # Recall matches the content column, as upstream's LOWER(content) LIKE does.
    assert memory.recall("ops-bot", "2026-07-22").entries == []
    assert len(memory.recall("ops-bot", "ARCHIVAL ENTRY 12").entries) == 10


LEGACY_TABLE = """
CREATE TABLE memory_entries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    scope VARCHAR(16) NOT NULL,
    content TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL
)
"""


def test_an_older_upstream_database_is_migrated_in_place(workspace: Workspace) -> None:
    """Upstream's MemorySchemaUpgradeTest, against oryxtui: a table from before per-agent
    memory gets `agent_name` (old rows are global memory) and upstream's index."""
    with sqlite3.connect(workspace.db_path) as legacy:
        legacy.execute(LEGACY_TABLE)
        legacy.execute(
            "INSERT INTO memory_entries (scope, content, created_at)"
            " VALUES ('ARCHIVAL', '存量记忆一条', '2026-08-01T00:00:00Z')"
        )
    legacy.close()
    root = str(workspace.root.parent)
    env = {"ORYXTUI_MEMORY__BACKEND": "sqlite"}
    shown = run_oryxtui("memory", "show", "--root", root, "--json", env=env)
    assert shown.returncode == 0, shown.stderr
    listed = json.loads(shown.stdout)["archival"]
    assert [(e["time"], e["content"]) for e in listed] == [("2026-08-01 00:00:00", "存量记忆一条")]
    with sqlite3.connect(workspace.db_path) as upgraded:
        columns = [row[1] for row in upgraded.execute("PRAGMA table_info(memory_entries)")]
        indexes = {row[1] for row in upgraded.execute("PRAGMA index_list(memory_entries)")}
        agents = upgraded.execute("SELECT agent_name FROM memory_entries").fetchall()
    upgraded.close()
    assert columns == ["id", "scope", "content", "created_at", "agent_name"]
    assert "idx_memory_agent" in indexes
    assert agents == [("__global__",)]
    # Idempotent: opening it again changes nothing and saving works.
    connection = database.connect(workspace.db_path)
    assert database.upgrade_memory_entries(connection) is False
    connection.close()
    saved = run_oryxtui("memory", "save", "new fact", "--root", root, env=env)
    assert saved.returncode == 0, saved.stderr
