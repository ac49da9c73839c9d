"""The markdown backend: atomic, lossless, refuses unsafe targets, never overwrites an edit."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from oryxtui.errors import MemoryWriteError
from oryxtui.memory import MemoryService, files
from oryxtui.memory.backends.markdown import writer
from oryxtui.memory.format import ARCHIVAL_HEADER, CORE_HEADER
from oryxtui.workspace import Workspace
from tests.support import make_agent

HAND_WRITTEN = (
    "\ufeff# My agent's memory\r\n"
    "Kept by hand. Do not delete.\r\n"
    "<!-- a comment -->\r\n"
    "\r\n"
    f"{CORE_HEADER}\r\n"
    "- [2026-01-01 10:00] Likes green tea\r\n"
    "\r\n"
    f"{ARCHIVAL_HEADER}\r\n"
    "- met at the conference\r\n"
    "## Appendix\r\n"
    "free text"
)


def test_text_the_parser_does_not_understand_is_kept_byte_for_byte(
    workspace: Workspace, service: MemoryService
) -> None:
    memory_file = make_agent(workspace, "a") / "MEMORY.md"
    memory_file.write_bytes(HAND_WRITTEN.encode())
    service.save("a", "new core", "core")
    service.save("a", "new archival", "archival")
    # '## Appendix' is a line of the archival section, as upstream reads it: the new entry goes
    # after the section's last line, which here ends the file without a line break.
    expected = HAND_WRITTEN.replace(
        "Likes green tea\r\n", "Likes green tea\r\n- [2026-07-22 09:30:00] new core\r\n"
    ).replace("free text", "free text\r\n- [2026-07-22 09:30:00] new archival")
    assert memory_file.read_bytes() == expected.encode()


def test_a_new_memory_file_gets_both_sections(workspace: Workspace, service: MemoryService) -> None:
    service.save(None, "first", "archival")
    text = workspace.global_memory_file.read_text()
    assert text == f"{CORE_HEADER}\n{ARCHIVAL_HEADER}\n- [2026-07-22 09:30:00] first\n"


def test_the_file_is_never_trimmed(workspace: Workspace, service: MemoryService) -> None:
    for index in range(200):
        service.save(None, f"entry {index} " + "p" * 50, "archival")
    text = workspace.global_memory_file.read_text()
    assert text.count("\n- [") == 200
    assert "entry 0 " in text


def test_an_edit_made_between_two_saves_is_preserved(
    workspace: Workspace, service: MemoryService
) -> None:
    memory_file = make_agent(workspace, "a") / "MEMORY.md"
    service.save("a", "first", "archival")
    # A person edits in an editor that saves by rename, without any lock.
    edited = memory_file.read_text().replace("first", "first (corrected by hand)")
    edited += "- a line typed by hand\n"
    temp = memory_file.with_name("MEMORY.md.swp")
    temp.write_text(edited)
    os.replace(temp, memory_file)
    service.save("a", "second", "archival")
    text = memory_file.read_text()
    assert "first (corrected by hand)" in text
    assert "- a line typed by hand\n- [2026-07-22 09:30:00] second\n" in text


def editor_save(memory_file: Path, text: str, style: str) -> None:
    """An editor saves without any lock: by temp file and rename, or by truncating in place."""
    if style == "rename":
        temp = memory_file.with_name("MEMORY.md.swp")
        temp.write_text(text)
        os.replace(temp, memory_file)
    else:
        with open(memory_file, "w") as handle:
            handle.write(text)


@pytest.mark.parametrize("style", ["rename", "truncate"])
def test_an_outside_save_in_the_last_instant_before_our_rename_is_kept(
    workspace: Workspace, service: MemoryService, monkeypatch: pytest.MonkeyPatch, style: str
) -> None:
    memory_file = make_agent(workspace, "a") / "MEMORY.md"
    service.save("a", "first", "archival")
    calls = []

    def editor_saves_first(first: Path, second: Path) -> bool:
        # After every check oryxtui makes, just before the file is switched.
        if not calls:
            editor_save(memory_file, memory_file.read_text() + "- typed by hand\n", style)
        calls.append(second)
        return files.exchange(first, second)

    monkeypatch.setattr(writer, "exchange", editor_saves_first)
    service.save("a", "second", "archival")
    text = memory_file.read_text()
    assert "- typed by hand\n" in text and "] second" in text and "] first" in text
    assert len(calls) == 3  # switched, saw the editor's file, gave it back; then saved again
    assert service.lost("a") == []
    assert sorted(p.name for p in memory_file.parent.iterdir()) == [
        "AGENT.md",
        "MEMORY.md",
        "MEMORY.md.journal",
        "MEMORY.md.lock",
    ]


def test_a_save_waits_while_an_editor_has_emptied_the_file(
    workspace: Workspace, service: MemoryService
) -> None:
    memory_file = make_agent(workspace, "a") / "MEMORY.md"
    service.save("a", "first", "archival")
    full = memory_file.read_text() + "- typed by hand\n"
    memory_file.write_text("")  # a truncate-then-write editor, half way through its save
    service.store.writer.settle_seconds = 0.3
    timer = threading.Timer(0.1, lambda: memory_file.write_text(full))
    timer.start()
    service.save("a", "second", "archival")
    timer.join()
    text = memory_file.read_text()
    assert text.startswith(full) and text.endswith("] second\n")


def test_a_file_emptied_on_purpose_is_saved_into(
    workspace: Workspace, service: MemoryService
) -> None:
    memory_file = make_agent(workspace, "a") / "MEMORY.md"
    memory_file.write_text("")
    service.store.writer.settle_seconds = 0.05
    service.save("a", "only", "archival")
    assert memory_file.read_text().endswith("] only\n")


def test_a_same_size_in_place_edit_is_seen(workspace: Workspace, service: MemoryService) -> None:
    memory_file = make_agent(workspace, "a") / "MEMORY.md"
    service.save("a", "aaaa", "archival")
    service.snapshot("a")  # warm the parse cache
    memory_file.write_text(memory_file.read_text().replace("aaaa", "bbbb"))
    assert [e.content for e in service.recall("a", "bbbb").entries] == ["bbbb"]
    service.save("a", "cccc", "archival")
    assert "bbbb" in memory_file.read_text()


def test_a_symlinked_memory_file_is_refused(
    workspace: Workspace, service: MemoryService, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("precious\n")
    folder = make_agent(workspace, "a")
    (folder / "MEMORY.md").symlink_to(outside)
    with pytest.raises(MemoryWriteError, match="symbolic link"):
        service.save("a", "x", "archival")
    assert outside.read_text() == "precious\n"


def test_an_agent_folder_that_resolves_outside_the_workspace_is_refused(
    workspace: Workspace, service: MemoryService, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "AGENT.md").write_text("---\nname: far\n---\n")
    (workspace.agents_dir / "far").symlink_to(outside, target_is_directory=True)
    with pytest.raises(MemoryWriteError, match="outside the workspace"):
        service.save("far", "x", "archival")
    assert sorted(p.name for p in outside.iterdir()) == ["AGENT.md"]


def test_a_symlinked_lock_file_is_refused(
    workspace: Workspace, service: MemoryService, tmp_path: Path
) -> None:
    target = tmp_path / "victim.txt"
    target.write_text("keep me")
    folder = make_agent(workspace, "a")
    (folder / "MEMORY.md.lock").symlink_to(target)
    with pytest.raises(MemoryWriteError, match="lock"):
        service.save("a", "x", "archival")
    assert target.read_text() == "keep me"


def test_an_undecodable_file_is_shown_but_never_written(
    workspace: Workspace, service: MemoryService
) -> None:
    memory_file = make_agent(workspace, "a") / "MEMORY.md"
    raw = f"{CORE_HEADER}\n- caf\xe9 latin-1\n{ARCHIVAL_HEADER}\n- ok\n".encode(
        "latin-1", "replace"
    )
    raw = (
        f"{CORE_HEADER}\n".encode() + b"- caf\xe9 latin-1\n" + f"{ARCHIVAL_HEADER}\n- ok\n".encode()
    )
    memory_file.write_bytes(raw)
    snapshot = service.snapshot("a")
    assert snapshot.warning and "not valid UTF-8" in snapshot.warning
    assert snapshot.core[0].content == "caf\ufffd latin-1"
    with pytest.raises(MemoryWriteError, match="not valid UTF-8"):
        service.save("a", "x", "archival")
    assert memory_file.read_bytes() == raw


def test_file_mode_is_kept_and_no_temp_files_are_left(
    workspace: Workspace, service: MemoryService
) -> None:
    folder = make_agent(workspace, "a")
    memory_file = folder / "MEMORY.md"
    memory_file.write_text(f"{CORE_HEADER}\n{ARCHIVAL_HEADER}\n")
    memory_file.chmod(0o640)
    (folder / ".MEMORY.md.stale.tmp").write_text("left by a killed writer")
    service.save("a", "x", "archival")
    assert stat.S_IMODE(memory_file.stat().st_mode) == 0o640
    assert sorted(p.name for p in folder.iterdir()) == [
        "AGENT.md",
        "MEMORY.md",
        "MEMORY.md.journal",
        "MEMORY.md.lock",
    ]


def test_a_huge_single_line_and_huge_file_are_handled(
    workspace: Workspace, service: MemoryService
) -> None:
    service.max_entry_chars = 2_000_000  # as a hand edit or upstream may write it
    service.save(None, "w" * 1_000_000, "archival")
    context = service.build_context(None)
    assert context.endswith("…" + "w" * 4000)
    assert len(service.snapshot(None).archival) == 1


@pytest.mark.parametrize("failing", ["exchange", "fsync_folder"])
def test_a_save_that_fails_at_the_switch_leaves_no_copy_and_no_journal_record(
    workspace: Workspace, service: MemoryService, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    memory_file = make_agent(workspace, "a") / "MEMORY.md"
    service.save("a", "first", "archival")

    def disk_full(*_: object) -> bool:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(writer, failing, disk_full)
    with pytest.raises(MemoryWriteError, match="No space left"):
        service.save("a", "never acknowledged", "archival")
    monkeypatch.undo()
    names = sorted(p.name for p in memory_file.parent.iterdir())
    assert names == ["AGENT.md", "MEMORY.md", "MEMORY.md.journal", "MEMORY.md.lock"]
    assert "never acknowledged" not in memory_file.with_name("MEMORY.md.journal").read_text()
    assert service.lost("a") == []
