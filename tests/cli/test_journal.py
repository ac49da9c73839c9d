"""Nothing lost to a writer that ignores the lock: the journal, doctor and restore."""

from __future__ import annotations

import json
import os
import threading
import time

from oryxtui.memory import MemoryService
from oryxtui.memory.format import ARCHIVAL_HEADER, CORE_HEADER
from oryxtui.tui.app import OryxApp
from oryxtui.workspace import Workspace
from tests.dashboard_support import archival_pane, build_workspace, make_app, memory_shown, wait_for
from tests.support import make_agent, run_oryxtui


def clobber(path, text: str) -> None:
    """An editor with a stale buffer saves by rename, without the lock."""
    temp = path.with_name("MEMORY.md.editor-tmp")
    temp.write_text(text, encoding="utf-8")
    os.replace(temp, path)


def test_an_overwritten_entry_is_reported_and_restored(
    workspace: Workspace, service: MemoryService
) -> None:
    memory_file = make_agent(workspace, "a") / "MEMORY.md"
    service.save("a", "kept", "archival")
    stale = memory_file.read_text()
    service.save("a", "will be lost", "core")
    service.save("a", "also lost", "archival")
    clobber(memory_file, stale + "- typed in the editor\n")
    lost = service.lost("a")
    assert [(e.scope.value, e.content) for e in lost] == [
        ("core", "will be lost"),
        ("archival", "also lost"),
    ]
    restored = service.restore("a")
    assert restored == lost
    text = memory_file.read_text()
    assert "- typed in the editor\n" in text  # the editor's work stays
    assert text.index("will be lost") < text.index(ARCHIVAL_HEADER)
    assert "] also lost" in text and service.lost("a") == []
    assert text.count("also lost") == 1  # a second restore adds nothing
    assert service.restore("a") == [] and memory_file.read_text() == text


def test_restore_waits_for_a_file_that_is_mid_save(
    workspace: Workspace, service: MemoryService
) -> None:
    memory_file = make_agent(workspace, "a") / "MEMORY.md"
    service.save("a", "precious", "archival")
    memory_file.write_text("")  # a truncate-then-write editor, half way

    def finish_the_save() -> None:
        time.sleep(0.5)
        memory_file.write_text(f"{CORE_HEADER}\n{ARCHIVAL_HEADER}\n- from the editor\n")

    writer = threading.Thread(target=finish_the_save)
    writer.start()
    restored = service.restore("a")
    writer.join()
    assert [e.content for e in restored] == ["precious"]
    text = memory_file.read_text()
    assert "- from the editor\n" in text and "] precious" in text


def test_a_torn_journal_line_is_skipped(workspace: Workspace, service: MemoryService) -> None:
    folder = make_agent(workspace, "a")
    service.save("a", "one", "archival")
    with open(folder / "MEMORY.md.journal", "a") as journal:
        journal.write('{"scope": "archival", "li')  # a writer killed mid-line
    assert service.lost("a") == []
    records = (folder / "MEMORY.md.journal").read_text().splitlines()
    saved = json.loads(records[1])  # after the baseline: the memory as the history found it
    assert saved["op"] == "save" and saved["after"][0]["line"].endswith("] one")
    # The next save starts a line of its own, so it is not glued to the torn one and lost.
    stale = (folder / "MEMORY.md").read_text()
    service.save("a", "two", "archival")
    clobber(folder / "MEMORY.md", stale)
    assert [e.content for e in service.lost("a")] == ["two"]


def test_the_journal_is_read_on_from_where_it_was(
    workspace: Workspace, service: MemoryService
) -> None:
    folder = make_agent(workspace, "a")
    for index in range(3):
        service.save("a", f"first {index}", "archival")
    stale = (folder / "MEMORY.md").read_text()
    assert service.lost("a") == []
    for index in range(3):
        service.save("a", f"then {index}", "core")
    clobber(folder / "MEMORY.md", stale)
    assert [e.content for e in service.lost("a")] == ["then 0", "then 1", "then 2"]
    (folder / "MEMORY.md.journal").unlink()  # a journal removed by hand: nothing to report
    assert service.lost("a") == []


def test_doctor_from_the_cli(tmp_path) -> None:
    assert run_oryxtui("demo", str(tmp_path / "d"), "--no-open").returncode == 0
    root = str(tmp_path / "d")
    memory_file = tmp_path / "d" / ".oryxos" / "agents" / "scribe" / "MEMORY.md"
    before = memory_file.read_text()
    run_oryxtui("memory", "save", "--root", root, "--agent", "scribe", "release on Friday")
    clobber(memory_file, before)
    report = run_oryxtui("memory", "doctor", "--root", root, "--agent", "scribe")
    assert (
        report.returncode == 0
        and "1 entry" in report.stdout
        and "release on Friday" in report.stdout
    )
    assert "release on Friday" not in memory_file.read_text()
    fixed = run_oryxtui(
        "memory", "doctor", "--root", root, "--agent", "scribe", "--restore", "--json"
    )
    assert json.loads(fixed.stdout)["entries"][0]["content"] == "release on Friday"
    assert "release on Friday" in memory_file.read_text()
    clean = run_oryxtui("memory", "doctor", "--root", root, "--agent", "scribe")
    assert "Nothing lost" in clean.stdout


async def test_the_dashboard_offers_to_restore(workspace: Workspace) -> None:
    build_workspace(workspace)
    memory_file = workspace.memory_file("alpha")
    app = make_app(workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: memory_shown(app))
        stale = memory_file.read_text()
        app.service.save("alpha", "the dashboard saved this", "archival")
        await wait_for(pilot, lambda: archival_pane(app).view.row_count == 61)
        clobber(memory_file, stale)
        banner = app.query_one("#agent-banner")
        await wait_for(pilot, lambda: "R restores them" in str(banner.render()))
        await pilot.press("R")
        await wait_for(pilot, lambda: archival_pane(app).view.row_count == 61)
        await wait_for(pilot, lambda: "press R" not in str(banner.render()))
    assert "the dashboard saved this" in memory_file.read_text()


def footer_keys(app: OryxApp) -> set[str]:
    """The keys the footer shows now (an action its screen refuses is left out)."""
    return {key for key, active in app.screen.active_bindings.items() if active.binding.show}


async def test_the_dashboard_accepts_an_outside_removal_and_says_so_in_the_footer(
    workspace: Workspace,
) -> None:
    build_workspace(workspace)
    memory_file = workspace.memory_file("alpha")
    app = make_app(workspace)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_for(pilot, lambda: memory_shown(app))
        assert "R" not in footer_keys(app) and "A" not in footer_keys(app)
        stale = memory_file.read_text()
        app.service.save("alpha", "removed on purpose", "archival")
        await wait_for(pilot, lambda: archival_pane(app).view.row_count == 61)
        clobber(memory_file, stale)
        banner = app.query_one("#agent-banner")
        await wait_for(pilot, lambda: "A accepts the removal" in str(banner.render()))
        assert {"R", "A"} <= footer_keys(app)
        await pilot.press("A")
        await wait_for(pilot, lambda: "A accepts" not in str(banner.render()))
        assert "R" not in footer_keys(app)
    assert "removed on purpose" not in memory_file.read_text()
    assert app.service.lost("alpha") == []


def test_doctor_accepts_an_outside_removal(workspace: Workspace) -> None:
    make_agent(workspace, "scribe")
    root = str(workspace.root)
    assert (
        run_oryxtui("memory", "save", "--root", root, "--agent", "scribe", "meant").returncode == 0
    )
    memory_file = workspace.memory_file("scribe")
    memory_file.write_text(memory_file.read_text().replace("meant", "edited by hand"))
    found = run_oryxtui("memory", "doctor", "--root", root, "--agent", "scribe")
    assert "--accept" in found.stdout
    accepted = run_oryxtui("memory", "doctor", "--root", root, "--agent", "scribe", "--accept")
    assert accepted.returncode == 0 and "Accepted the removal of 1 entry" in accepted.stdout
    assert (
        "Nothing lost"
        in run_oryxtui("memory", "doctor", "--root", root, "--agent", "scribe").stdout
    )
    assert "edited by hand" in memory_file.read_text()
    both = run_oryxtui("memory", "doctor", "--root", root, "--restore", "--accept")
    assert both.returncode == 2
