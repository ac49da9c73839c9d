"""A server's memory, with the methods of `MemoryService` that the CLI and the dashboard call,
answering the same objects: so a command or a screen works on a server as it does on a
workspace. Everything the server answers is untrusted: an entry, a change or a hit that is
not what the API documents is skipped and counted, never a traceback."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, TypeVar

from oryxtui import notices
from oryxtui.errors import NotFound, UsageError
from oryxtui.memory.digest import Digest
from oryxtui.memory.events import Event, ToldEntry, told_entry
from oryxtui.memory.format import MemoryEntry, Scope, parse_scope
from oryxtui.memory.history.records import PROPOSALS, Record
from oryxtui.memory.recall.results import (
    IndexStatus,
    Recall,
    core_holding,
    recall_across,
)
from oryxtui.memory.service.reviewing import Approved
from oryxtui.memory.snapshot import MemorySnapshot
from oryxtui.memory.store import Watch
from oryxtui.memory.window import InjectedWindow
from oryxtui.remote.answers import (
    entries_of,
    int_of,
    recall_of,
    record_of,
    status_of,
    text_of,
)
from oryxtui.remote.client import ANSWER_SECONDS, Server, agent_path
from oryxtui.remote.copies import Copies
from oryxtui.remote.facts import RemoteFacts

F = TypeVar("F", bound=Callable[..., Any])


def writes(method: F) -> F:
    """A change made through this client: the agent's copy is read again next time (the
    server's event brings the change too, but a view reloading right after its own change
    must not wait for it)."""

    @functools.wraps(method)
    def written(self: RemoteMemory, agent: str | None, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, agent, *args, **kwargs)
        finally:
            self._forget(agent)

    return written  # type: ignore[return-value]


class RemoteStore:
    """What the dashboard asks of a store: whether its changes are announced. A server's are,
    on its event stream (`remote.follow` listens)."""

    ranked = False

    def __init__(self, listen: Callable[..., None] | None = None) -> None:
        self._listen = listen

    def listen(
        self,
        stop: threading.Event,
        heard: Callable[[Event], None],
        lost: Callable[[str], None],
    ) -> None:
        if self._listen is not None:
            self._listen(stop, heard, lost)


class RemoteMemory(RemoteFacts):
    """A server's memory, agent by agent (None: its global memory)."""

    watch = Watch.NOTIFY
    engine = None  # the server keeps its own index
    recall_setup = None

    def __init__(self, server: Server) -> None:
        self.server = server
        self.store = RemoteStore()
        self._info: dict[str, Any] | None = None
        # Copies of the memories read, kept current by the server's event stream: only while
        # someone follows it (the attached dashboard's fleet sets them).
        self.copies: Copies | None = None

    def _forget(self, agent: str | None) -> None:
        """The agent's copy is read again next time (see `writes`)."""
        if self.copies is not None:
            self.copies.forget(agent)

    # What the server is ---------------------------------------------------------------------

    def info(self) -> dict[str, Any]:
        if self._info is None:
            data = self.server.get("/info")
            self._info = data if isinstance(data, dict) else {}
        return self._info

    @property
    def store_id(self) -> str | None:
        """The opaque id of the shared database the server's memory is in (from its /info as
        read last; None: its own, or not known yet)."""
        store = (self._info or {}).get("store")
        return store if isinstance(store, str) and store else None

    @property
    def backend(self) -> str:
        return str(self.info().get("backend") or "remote")

    @property
    def ranked(self) -> bool:
        return bool(self.info().get("ranked"))

    @property
    def embeds(self) -> bool:
        return False  # the server indexes; nothing to keep here

    def refusal(self, agent: str | None, doing: str) -> str | None:
        """Why this key cannot do it, known from the server's /info (read when its agents are
        listed; never fetched here: the dashboard asks on every redraw)."""
        if (self._info or {}).get("scope") == "read":
            return (
                f"The key for {self.server.name} is read-only: {doing} needs a key with the "
                "write scope (`oryxtui keys create NAME --scope write` on the server)."
            )
        return None

    def stored_agents(self) -> list[str]:
        return []

    # Reading ---------------------------------------------------------------------------------

    def snapshot(self, agent: str | None = None, newest_bytes: int | None = None) -> MemorySnapshot:
        copies = self.copies
        kept = copies.snapshot(agent) if copies is not None else None
        if kept is not None:
            return kept
        data = self.server.get_memory(f"{agent_path(agent)}/memory/entries")
        snapshot = self._snapshot(agent, data)
        if copies is not None and isinstance(data, dict):
            copies.take(agent, data, snapshot)
        return snapshot

    def _snapshot(self, agent: str | None, data: object) -> MemorySnapshot:
        data = data if isinstance(data, dict) else {}
        where = f"the memory of {agent or 'the global memory'} on {self.server.name}"
        core = entries_of(data.get("core"), Scope.CORE, where)
        archival = entries_of(data.get("archival"), Scope.ARCHIVAL, where)
        start = min(max(int_of(data.get("window_start"), len(archival)), 0), len(archival))
        rows = data.get("digests")
        digest_lines = frozenset(
            archival[row].line
            for row in (rows if isinstance(rows, list) else [])
            if isinstance(row, int) and 0 <= row < len(archival)
        )
        window = InjectedWindow(start, tuple(entry.line for entry in archival[start:]))
        return MemorySnapshot(
            agent,
            str(data.get("backend") or self.backend),
            core,
            archival,
            window,
            warning=text_of(data.get("warning")),
            digest_lines=digest_lines,
        )

    def build_context(self, agent: str | None = None) -> str:
        return str(self.server.get_memory(f"{agent_path(agent)}/memory") or "")

    def count_archival(self, agent: str | None = None) -> int:
        return len(self.snapshot(agent).archival)

    def lost(self, agent: str | None = None) -> list[MemoryEntry]:
        return []  # the server's own `memory doctor` finds them

    def reconcile(self, agent: str | None = None) -> list[Record]:
        return []  # the server records outside changes itself

    def accept(self, agent: str | None = None) -> list[MemoryEntry]:
        raise self._on_server("memory doctor --accept")

    def restore(self, agent: str | None = None) -> list[MemoryEntry]:
        raise self._on_server("memory doctor --restore")

    def _on_server(self, command: str) -> UsageError:
        return UsageError(f"`oryxtui {command}` runs on the server itself ({self.server.name}).")

    def uncovered(self, agent: str | None = None) -> int:
        snapshot = self.snapshot(agent)
        return len(snapshot.archival) - len(snapshot.covered) - len(snapshot.digests)

    # Changing ---------------------------------------------------------------------------------

    @writes
    def save(
        self,
        agent: str | None,
        content: str,
        scope: str | Scope | None = "archival",
        op: str = "save",
    ) -> MemoryEntry:
        scope_name = scope.value if isinstance(scope, Scope) else scope
        if op == "digest":
            data = self.server.post(f"{agent_path(agent)}/memory/digest", {"content": content})
        else:
            body = {"content": content} | ({"scope": scope_name} if scope_name else {})
            data = self.server.post(f"{agent_path(agent)}/memory", body)
        return self._written(data, scope_name or "archival", content)

    def _written(self, data: object, scope: str | Scope, content: str) -> MemoryEntry:
        """The entry the server answered with. The change is made once the server said so:
        an answer that cannot be read is a warning beside it, never a failure."""
        entry = told_entry(data)
        if entry is not None:
            return entry
        notices.notice(
            f"The server {self.server.name} made the change but its answer could not be read; "
            "show the memory again for the entry as it is."
        )
        section = parse_scope(scope)
        return ToldEntry(section, None, content, f"- {content}", "")

    @writes
    def change(
        self,
        agent: str | None,
        entry_id: str,
        content: str | None = None,
        scope: str | Scope | None = None,
    ) -> MemoryEntry:
        body: dict[str, Any] = {}
        if content is not None:
            body["content"] = content
        if scope is not None:
            body["scope"] = scope.value if isinstance(scope, Scope) else scope
        path = f"{agent_path(agent)}/memory/entries/{entry_id}"
        return self._written(self.server.patch(path, body), scope or "archival", content or "")

    def edit(self, agent: str | None, entry_id: str, content: str) -> MemoryEntry:
        return self.change(agent, entry_id, content, None)

    def move(self, agent: str | None, entry_id: str, scope: str | Scope) -> MemoryEntry:
        return self.change(agent, entry_id, None, scope)

    @writes
    def delete(self, agent: str | None, entry_id: str) -> MemoryEntry:
        data = self.server.delete(f"{agent_path(agent)}/memory/entries/{entry_id}")
        return self._written(data, "archival", "")

    @writes
    def remove_duplicates(self, agent: str | None) -> list[MemoryEntry]:
        data = self.server.post(f"{agent_path(agent)}/memory/duplicates/remove")
        return entries_of(data, None, "the server's answer")

    @writes
    def consolidate(
        self,
        agent: str | None,
        dry_run: bool = False,
        summarise: object = None,
        method: str = "",
        min_entries: int = 1,
    ) -> Digest | None:
        """The server's digest (it summarises with the agent's model there)."""
        # A digest may be summarised by the agent's model there: a call that may take long.
        body = {"dry_run": dry_run}
        data = self.server.post(f"{agent_path(agent)}/memory/digest", body, ANSWER_SECONDS)
        if not isinstance(data, dict) or not isinstance(data.get("content"), str):
            return None
        return Digest(
            data["content"],
            entries_of(data.get("covers"), Scope.ARCHIVAL, "the server's digest"),
            text_of(data.get("method")) or "server",
            int_of(data.get("count")),
            int_of(data.get("uncovered_before")),
        )

    # History -----------------------------------------------------------------------------------

    def history(self, agent: str | None = None, since: datetime | None = None) -> list[Record]:
        params = {"since": since.isoformat()} if since is not None else {}
        data = self.server.get_memory(f"{agent_path(agent)}/memory/history", **params)
        items = data if isinstance(data, list) else []
        records = [record_of(item) for item in items]
        good = [record for record in records if record is not None]
        notices.skipped(len(records) - len(good), "history", f"the server {self.server.name}")
        return good

    def history_problems(self, agent: str | None = None) -> str | None:
        return None  # the server says them in its answers' warnings

    def change_record(self, agent: str | None, n: int) -> Record:
        for record in self.history(agent):
            if record.n == n:
                return record
        raise UsageError(f"The history holds no change {n}; `oryxtui memory log` lists them.")

    def entry_origins(self, agent: str | None) -> dict[str, dict[str, Any]]:
        try:
            data = self.server.get(f"{agent_path(agent)}/memory/origins")
        except NotFound:
            return {}  # a server from before origins: every entry's is unknown
        if not isinstance(data, dict):
            return {}
        return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, dict)}

    # Review ----------------------------------------------------------------------------------

    def awaiting_json(self, agent: str | None, held: bool = False) -> list[dict[str, Any]]:
        data = self.server.get(f"{agent_path(agent)}/memory/review", held="true" if held else None)
        items = data if isinstance(data, list) else []
        found = [self._awaiting(agent, item) for item in items]
        good = [(awaiting, item) for awaiting, item in found if awaiting is not None]
        notices.skipped(len(items) - len(good), "review", f"the server {self.server.name}")
        return [{**awaiting.to_json(agent), "turn_text": turn} for awaiting, turn in good]

    @staticmethod
    def _awaiting(agent: str | None, item: object) -> tuple[Any, dict[str, str] | None]:
        """An item of the server's review list, every field checked (None: not one), and
        the user's message and reply of its turn where the server gave both as text."""
        from oryxtui.memory.service.reviewing import Awaiting

        entry = told_entry(item)
        if entry is None or not isinstance(item, dict) or not isinstance(item.get("held"), bool):
            return None, None
        proposes = item.get("proposes")
        was = told_entry(item.get("was")) if proposes in PROPOSALS else None
        if proposes in PROPOSALS and (was is None or not item["held"]):
            return None, None
        record = Record(
            int_of(item.get("change")),
            text_of(item.get("op")) or "save",
            text_of(item.get("by")) or "outside",
            time=text_of(item.get("at")),
            session=text_of(item.get("session")),
            turn=int_of(item.get("turn"), -1) if int_of(item.get("turn"), -1) >= 0 else None,
            proposes=str(proposes) if was is not None else None,
            before=((was.scope, was.line),) if was is not None else (),
            after=((entry.scope, entry.line),) if was and proposes != "delete" else (),
        )
        text = item.get("turn_text")
        turn = None
        if isinstance(text, dict) and all(isinstance(text.get(k), str) for k in ("user", "reply")):
            turn = {"user": str(text["user"]), "reply": str(text["reply"])}
        return Awaiting(entry, record, item["held"], entry.id), turn

    def awaiting_review(self, agent: str | None = None, held: bool = False) -> list[Any]:
        data = self.server.get(f"{agent_path(agent)}/memory/review", held="true" if held else None)
        items = data if isinstance(data, list) else []
        found = [self._awaiting(agent, item)[0] for item in items]
        good = [awaiting for awaiting in found if awaiting is not None]
        notices.skipped(len(items) - len(good), "review", f"the server {self.server.name}")
        return good

    def held(self, agent: str | None = None) -> list[Any]:
        copies = self.copies
        kept = copies.held(agent) if copies is not None else None
        if kept is not None:
            return kept
        held = self.awaiting_review(agent, held=True)
        if copies is not None:
            copies.keep_held(agent, held)
        return held

    @writes
    def approve(self, agent: str | None, ids: Sequence[str] | None = None) -> Approved:
        body = {"approve": list(ids) if ids is not None else "all"}
        data = self.server.post(f"{agent_path(agent)}/memory/review", body)
        data = data if isinstance(data, dict) else {}
        made = entries_of(data.get("approved"), None, "the server's answer")
        told = data.get("not_approved")
        not_made = [
            (item["id"], item["reason"])
            for item in (told if isinstance(told, list) else [])
            if isinstance(item, dict)
            and isinstance(item.get("id"), str)
            and isinstance(item.get("reason"), str)
        ]  # anything else in a server's answer is left out
        return Approved(made, not_made)

    @writes
    def reject(self, agent: str | None, ids: Sequence[str]) -> list[MemoryEntry]:
        data = self.server.post(f"{agent_path(agent)}/memory/review", {"reject": list(ids)})
        done = data.get("rejected") if isinstance(data, dict) else None
        return entries_of(done, None, "the server's answer")

    def as_of(self, agent: str | None, n: int) -> tuple[MemorySnapshot, str] | None:
        try:
            data = self.server.get_memory(f"{agent_path(agent)}/memory/history/{n}")
        except NotFound:
            return None
        data = data if isinstance(data, dict) else {}
        return self._snapshot(agent, data.get("memory")), str(data.get("block") or "")

    @writes
    def bring_back(self, agent: str | None, record: Record | int) -> list[MemoryEntry]:
        n = record if isinstance(record, int) else record.n
        data = self.server.post(f"{agent_path(agent)}/memory/history/{n}/bring-back")
        return entries_of(data, None, "the server's answer")

    # Recall --------------------------------------------------------------------------------------

    def recall(self, agent: str | None, keyword: str, semantic: bool = True) -> Recall:
        if not keyword.strip():
            raise UsageError("Nothing to recall: the keyword is empty.")
        data = self.server.get(
            f"{agent_path(agent)}/memory/recall", keyword=keyword, explain="true"
        )
        return recall_of(data, keyword)

    def recall_across(
        self, agents: Sequence[str | None], keyword: str, semantic: bool = True
    ) -> Recall:
        return recall_across(self.recall, agents, keyword, semantic, None)

    def find_core(self, agent: str | None, query: str) -> list[MemoryEntry]:
        return core_holding(self.snapshot(agent).core, query)

    def index_status(self, agent: str | None = None) -> IndexStatus | None:
        return status_of(self.server.get(f"{agent_path(agent)}/memory/index"))

    def sync_index(self, agent: str | None = None, rebuild: bool = False, progress: Any = None):
        raise self._on_server("memory index")
