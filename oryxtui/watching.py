"""Watching the workspace, for the dashboard's live reload and the server's event stream:
folders, never files, each non-recursively, re-armed as agents change.

Editors and atomic saves replace MEMORY.md, so a watch on the file goes blind after the first
replace; a recursive watch follows symlinks into whatever they point at. So: the workspace root,
`agents/`, `memory/` and each agent folder, one level each.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from oryxtui.memory.events import (
    AgentsChange,
    DatabaseWritten,
    Event,
    Hello,
    HistoryWritten,
    MemoryChange,
)
from oryxtui.memory.history import history_path
from oryxtui.workspace import AGENT_FILE, MEMORY_FILE, AgentName, Workspace, is_valid_agent_name

if TYPE_CHECKING:
    from watchfiles import Change

DATABASE_FILES = ("oryxos.db", "oryxos.db-wal")
GLOBAL: AgentName = None  # the global memory


@dataclass
class WorkspaceChanges:
    """What one batch of file events means for the dashboard."""

    memory: set[AgentName] = field(default_factory=set)  # agents whose MEMORY.md changed
    histories: set[AgentName] = field(default_factory=set)  # … whose history file changed
    database: bool = False  # oryxos.db changed: any agent's sqlite-backed memory may have
    agents_changed: bool = False  # an agent came or went, or an AGENT.md changed
    rearm: bool = False  # the set of folders to watch is different now
    armed: bool = False  # the watch has (re)started: changes before it were not seen

    def events(self) -> list[Event]:
        """The batch as events: `Hello` when the watch (re)started, a `MemoryChange` per
        agent (the global memory first), `HistoryWritten` per agent whose history alone
        changed, `AgentsChange`, `DatabaseWritten`."""
        told: list[Event] = [Hello()] if self.armed else []
        told += [MemoryChange(agent) for agent in sorted(self.memory, key=lambda a: a or "")]
        only = self.histories - self.memory  # the file changed too: its change says it all
        told += [HistoryWritten(agent) for agent in sorted(only, key=lambda a: a or "")]
        if self.agents_changed:
            told.append(AgentsChange())
        if self.database:
            told.append(DatabaseWritten())
        return told


def watched_folders(workspace: Workspace) -> list[Path]:
    folders = [workspace.root, workspace.global_memory_file.parent, workspace.agents_dir]
    folders += [workspace.agents_dir / name for name in workspace.list_agents()]
    return [folder for folder in folders if folder.is_dir()]


# A memory's history beside its file: a save held for review, or its approval, changes only it.
HISTORY_FILE = history_path(Path(MEMORY_FILE)).name


def classify(workspace: Workspace, events: Iterable[tuple[Change, str]]) -> WorkspaceChanges:
    """Every change type is a reload: an atomic replace arrives as `added`."""
    changes = WorkspaceChanges()
    root, agents_dir = workspace.root, workspace.agents_dir
    for _change, raw_path in events:
        path = Path(raw_path)
        parent = path.parent
        if parent == root and path.name in DATABASE_FILES:
            changes.database = True
        elif parent == root and path.name in ("agents", "memory"):
            changes.agents_changed = changes.rearm = True
            changes.memory.add(GLOBAL)
        elif parent == agents_dir:
            changes.agents_changed = changes.rearm = True
            if is_valid_agent_name(path.name):
                changes.memory.add(path.name)
        elif path.name == MEMORY_FILE and parent == workspace.global_memory_file.parent:
            changes.memory.add(GLOBAL)
        elif path.name == HISTORY_FILE and parent == workspace.global_memory_file.parent:
            changes.histories.add(GLOBAL)
        elif parent.parent == agents_dir and is_valid_agent_name(parent.name):
            if path.name == MEMORY_FILE:
                changes.memory.add(parent.name)
            elif path.name == HISTORY_FILE:
                changes.histories.add(parent.name)
            elif path.name == AGENT_FILE:
                changes.agents_changed = changes.rearm = True
                changes.memory.add(parent.name)
    return changes


def _relevant(workspace: Workspace, database: bool) -> Callable[[Change, str], bool]:
    root, agents_dir = str(workspace.root), str(workspace.agents_dir)
    root_names = ("agents", "memory", *(DATABASE_FILES if database else ()))

    def keep(_change: Change, raw_path: str) -> bool:
        path = Path(raw_path)
        if path.name in (MEMORY_FILE, HISTORY_FILE, AGENT_FILE):
            return True
        parent = str(path.parent)
        return parent == agents_dir or (parent == root and path.name in root_names)

    return keep


async def watch_workspace(
    workspace: Workspace, step_ms: int = 10, debounce_ms: int = 60, database: bool = False
) -> AsyncIterator[WorkspaceChanges]:
    """Yield what changed, batch by batch, forever; re-arms itself when folders come and go.

    `database`: also report writes to oryxos.db (the sqlite memory backend has no files to watch).
    """
    from watchfiles import awatch  # here: the dashboard's first frame does not wait for it

    while True:
        folders = watched_folders(workspace)
        if not folders:  # the workspace itself is gone: wait for it to come back
            await asyncio.sleep(0.5)
            yield WorkspaceChanges(agents_changed=True, memory={GLOBAL})
            continue
        batches = awatch(
            *folders,
            watch_filter=_relevant(workspace, database),
            step=step_ms,
            debounce=debounce_ms,
            recursive=False,
            ignore_permission_denied=True,
        )
        batch = asyncio.ensure_future(anext(batches))
        try:
            await asyncio.sleep(0)  # the batch's first step sets the watches up, then waits
            if not batch.done():
                # Watched from now on; what was written before is read again by the owner.
                yield WorkspaceChanges(armed=True)
            while True:
                changes = classify(workspace, await batch)
                if (
                    changes.memory
                    or changes.histories
                    or changes.agents_changed
                    or changes.database
                ):
                    yield changes
                if changes.rearm:
                    break
                batch = asyncio.ensure_future(anext(batches))
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            # A folder vanished between listing and watching: list again shortly.
            await asyncio.sleep(0.05)
            yield WorkspaceChanges(agents_changed=True, memory={GLOBAL})
        finally:
            batch.cancel()
            await batches.aclose()
