"""A server's facts that change, with the methods of `MemoryService` (`currency`): save with
the check, replace, the suggestions, the versions replaced, the memory as of a moment and
recall of the past — answering the same objects. What the server answers is untrusted: an
item that is not what the API documents is skipped and counted."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from oryxtui import notices
from oryxtui.memory.events import told_entry
from oryxtui.memory.format import MemoryEntry, Scope
from oryxtui.memory.recall.results import Recall
from oryxtui.memory.service.currency import Saved, Version
from oryxtui.memory.service.relating import Related
from oryxtui.memory.snapshot import MemorySnapshot
from oryxtui.memory.updates import Update
from oryxtui.remote.answers import int_of, recall_of, text_of
from oryxtui.remote.client import agent_path

if TYPE_CHECKING:
    from oryxtui.remote.client import Server

ANSWER = "the server's answer"


def _score(value: object) -> float:
    return float(value) if isinstance(value, int | float) and 0 <= value <= 1 else 0.0


def _items(data: object, key: str | None = None) -> list[Any]:
    found = data.get(key) if key is not None and isinstance(data, dict) else data
    return found if isinstance(found, list) else []


class RemoteFacts:
    """The part of `RemoteMemory` for facts that change."""

    server: Server

    # RemoteMemory's own
    _written: Callable[[object, str | Scope, str], MemoryEntry]
    _snapshot: Callable[[str | None, object], MemorySnapshot]
    _forget: Callable[[str | None], None]

    def save_checked(
        self,
        agent: str | None,
        content: str,
        scope: str | Scope | None = "archival",
        related: bool = False,
    ) -> Saved:
        """The server's save; it always answers what is related (read when asked)."""
        scope_name = scope.value if isinstance(scope, Scope) else scope
        body = {"content": content} | ({"scope": scope_name} if scope_name else {})
        try:
            data = self.server.post(f"{agent_path(agent)}/memory", body)
        finally:
            self._forget(agent)
        updates = []
        for item in _items(data, "may_update"):
            entry = told_entry(item)
            if entry is None:
                notices.skipped(1, "suggestion", ANSWER)
                continue
            updates.append(Update(entry, _score(item.get("score"))))
        near = []
        for item in _items(data, "related") if related else []:
            entry = told_entry(item)
            if entry is None:
                notices.skipped(1, "related entry", ANSWER)
                continue
            near.append(Related(entry, held=item.get("held") is True))
        written = self._written(data, scope_name or "archival", content)
        return Saved(written, tuple(updates), tuple(near))

    def replace(
        self, agent: str | None, entry_id: str, content: str
    ) -> tuple[MemoryEntry, MemoryEntry]:
        path = f"{agent_path(agent)}/memory/entries/{entry_id}/replace"
        try:
            data = self.server.post(path, {"content": content})
        finally:
            self._forget(agent)
        data = data if isinstance(data, dict) else {}
        old = told_entry(data.get("replaced"))
        new = self._written(data.get("entry"), "archival", content)
        if old is None:
            notices.skipped(1, "entry", ANSWER)
            old = new
        return old, new

    def supersede(self, agent: str | None, old_id: str, new_id: str) -> MemoryEntry:
        body = {"old": old_id, "new": new_id, "action": "replace"}
        try:
            data = self.server.post(f"{agent_path(agent)}/memory/suggestions", body)
        finally:
            self._forget(agent)
        return self._written(
            data.get("replaced") if isinstance(data, dict) else None, "archival", ""
        )

    def dismiss(self, agent: str | None, old_id: str, new_id: str) -> None:
        body = {"old": old_id, "new": new_id, "action": "dismiss"}
        self.server.post(f"{agent_path(agent)}/memory/suggestions", body)

    def suggestions(self, agent: str | None = None) -> list[tuple[MemoryEntry, MemoryEntry, int]]:
        found = []
        for item in _items(self.server.get(f"{agent_path(agent)}/memory/suggestions")):
            old = told_entry(item.get("old")) if isinstance(item, dict) else None
            new = told_entry(item.get("new")) if isinstance(item, dict) else None
            if old is None or new is None:
                notices.skipped(1, "suggestion", ANSWER)
                continue
            found.append((old, new, int_of(item.get("change"))))
        return found

    def replaced_versions(self, agent: str | None = None) -> list[Version]:
        found = []
        for item in _items(self.server.get(f"{agent_path(agent)}/memory/replaced")):
            entry = told_entry(item)
            if not isinstance(item, dict) or entry is None:
                notices.skipped(1, "replaced version", ANSWER)
                continue
            successor = told_entry(item.get("replaced_by"), entry.scope) or entry
            current = told_entry(item.get("current"), entry.scope) or successor
            until, by = text_of(item.get("until")), text_of(item.get("by")) or "unknown"
            change = int_of(item.get("change"))
            found.append(Version(entry, until, successor, current, change, by))
        return found

    def as_of_time(self, agent: str | None, moment: datetime) -> tuple[MemorySnapshot, str, int]:
        when = moment.isoformat(timespec="seconds")
        data = self.server.get_memory(f"{agent_path(agent)}/memory/as-of/{when}")
        data = data if isinstance(data, dict) else {}
        snapshot = self._snapshot(agent, data.get("memory"))
        return snapshot, str(data.get("block") or ""), int_of(data.get("change"))

    def recall_past(
        self,
        agent: str | None,
        keyword: str,
        as_of: datetime | None = None,
        include_replaced: bool = False,
    ) -> Recall:
        asked: dict[str, str] = {"keyword": keyword, "explain": "true"}
        if as_of is not None:
            asked["as_of"] = as_of.isoformat(timespec="seconds")
        if include_replaced:
            asked["include_replaced"] = "true"
        data = self.server.get(f"{agent_path(agent)}/memory/recall", **asked)
        return recall_of(data, keyword)
