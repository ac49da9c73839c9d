"""A stateful property test: saves of any text, outside edits, clobbers, deletes and restores,
checked against a model of what memory must hold."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from oryxtui.config import Settings
from oryxtui.memory import MemoryService
from oryxtui.memory.document import parse
from oryxtui.memory.format import sanitize_content
from oryxtui.workspace import init_workspace

texts = st.one_of(
    st.text(min_size=1, max_size=60),
    st.sampled_from(
        ["## 核心记忆", "## 归档记忆", "[/bold]", "line\nbreak", "\x1b[31mred", "x" * 5000]
    ),
)


class MemoryMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.folder = tempfile.TemporaryDirectory()
        workspace = init_workspace(Path(self.folder.name))
        (workspace.agents_dir / "a").mkdir()
        (workspace.agents_dir / "a" / "AGENT.md").write_text("---\nname: a\n---\n")
        self.path = workspace.memory_file("a")
        self.memory = MemoryService.open(workspace, Settings())
        self.memory.max_entry_chars = 1_000_000  # the limit has its own tests
        self.memory.store.writer.settle_seconds = 0.005  # nothing else writes here: no need to wait
        self.saved: list[tuple[str, str]] = []  # (scope, sanitised content), in order
        self.snapshots: list[str] = []
        self.counter = 0

    def teardown(self) -> None:
        self.folder.cleanup()

    def _replace(self, text: str) -> None:
        temp = self.path.with_name("MEMORY.md.outside")
        temp.write_text(text, encoding="utf-8")
        os.replace(temp, self.path)

    @rule(raw=texts, scope=st.sampled_from(["core", "archival"]))
    def save(self, raw: str, scope: str) -> None:
        if not sanitize_content(raw):
            return
        # A counter keeps contents unique, so "is it there" has one answer.
        self.counter += 1
        content = f"{self.counter}:{raw}"
        entry = self.memory.save("a", content, scope)
        self.saved.append((scope, entry.content))
        if self.path.exists():
            self.snapshots.append(self.path.read_text(encoding="utf-8"))

    @rule(note=st.text(max_size=40))
    def outside_edit_keeps_entries(self, note: str) -> None:
        if self.path.exists():
            text = self.path.read_text(encoding="utf-8")
            self._replace(note.replace("\n", " ") + "\n" + text if note.strip() else text)

    @precondition(lambda self: self.snapshots)
    @rule(data=st.data())
    def outside_edit_from_a_stale_buffer(self, data: st.DataObject) -> None:
        self._replace(data.draw(st.sampled_from(self.snapshots)))

    @rule()
    def delete(self) -> None:
        if self.path.exists():
            self.path.unlink()

    @rule()
    def restore(self) -> None:
        self.memory.restore("a")
        assert self.memory.lost("a") == []
        snapshot = self.memory.snapshot("a")
        present = {(e.scope.value, e.content) for e in [*snapshot.core, *snapshot.archival]}
        assert set(self.saved) <= present

    @invariant()
    def every_saved_entry_is_in_the_file_or_reported_lost(self) -> None:
        text = self.path.read_text(encoding="utf-8") if self.path.exists() else ""
        document = parse(text)
        assert document.render() == text
        present = {("core", e.content) for e in document.core_entries()}
        present |= {("archival", e.content) for e in document.archival_entries()}
        lost = {(e.scope.value, e.content) for e in self.memory.lost("a")}
        assert set(self.saved) <= present | lost


MemoryMachine.TestCase.settings = settings(
    max_examples=25,
    stateful_step_count=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_memory_state_machine = MemoryMachine.TestCase
