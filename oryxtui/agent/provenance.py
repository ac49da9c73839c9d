"""Where every entry came from: the change that wrote it (who: the dashboard, the CLI, an API
key, an agent's turn, an outside writer), and, for lines upstream OryxOS wrote, the session of
the `save_memory` call that holds them (its `tool_invocations` row). Entries written before
the history knew the memory, or by hand, say "unknown"."""

from __future__ import annotations

import json
from typing import Any

from oryxtui import notices
from oryxtui.agent.sessions import Conversations
from oryxtui.errors import OryxError
from oryxtui.memory import MemoryService
from oryxtui.memory.format import MemoryEntry, sanitize_content
from oryxtui.memory.history import Record

UNKNOWN: dict[str, Any] = {"by": "unknown"}


def origin_json(record: Record | None, upstream: str | None = None) -> dict[str, Any]:
    """An entry's origin as `memory show --json` and the API give it."""
    if record is None and upstream is None:
        return dict(UNKNOWN)
    found: dict[str, Any] = {}
    if record is not None:
        found = {"by": record.actor, "op": record.op, "change": record.n, "time": record.time}
        if record.session:
            found.update(session=record.session, turn=record.turn)
    if upstream is not None and found.get("by") in (None, "outside"):
        # An outside line a `save_memory` call of upstream's wrote: that agent's session.
        found.update(by="agent", via="upstream", session=upstream, turn=None)
    return found


class Provenance:
    """Origins of one workspace's (or shared database's) entries."""

    def __init__(self, memory: MemoryService, db: Conversations) -> None:
        self.memory = memory
        self.database = db

    def origins(self, agent: str | None, entries: list[MemoryEntry]) -> dict[str, dict[str, Any]]:
        """Each entry's origin, by its id."""
        writers = self.memory.origins(agent)
        unknown = [e for e in entries if e.id not in writers or writers[e.id].actor == "outside"]
        upstream = self.upstream_saves() if unknown else {}
        return {
            entry.id: origin_json(writers.get(entry.id), upstream.get(entry.content))
            for entry in entries
        }

    def upstream_saves(self) -> dict[str, str]:
        """The content of every successful `save_memory` call → its session (untrusted rows:
        one that is not such a call is skipped and counted)."""
        try:
            rows = self.database.query(
                "SELECT session_id, input_json FROM tool_invocations "
                "WHERE tool_name = 'save_memory' AND success"
            )
        except OryxError:
            return {}  # the entries still show who wrote them, as far as the history knows
        found: dict[str, str] = {}
        bad = 0
        for session, raw in rows:
            try:
                content = json.loads(str(raw)).get("content")
            except (ValueError, AttributeError):
                content = None
            if not isinstance(content, str) or not isinstance(session, str):
                bad += 1
                continue
            found.setdefault(sanitize_content(content), session)
        notices.skipped(bad, "tool call", "tool_invocations")
        return found


def awaiting_json(memory: MemoryService, episodes: Any, agent: str | None) -> list[dict[str, Any]]:
    """What awaits review in the agent's memory (newest first), each with the user's message
    and the reply of the turn that wrote it, where that turn is known (`turn_text`); a line
    upstream wrote is linked to its `save_memory` call's session."""
    sessions: dict[str, list[Any]] = {}
    found = []
    waiting = memory.awaiting_review(agent)
    outside = any(item.record.actor == "outside" for item in waiting)
    upstream = Provenance(memory, episodes.database).upstream_saves() if outside else {}
    for item in waiting:
        if item.record.actor == "outside" and item.entry.content in upstream:
            found.append(
                {
                    **item.to_json(agent),
                    "via": "upstream",
                    "session": upstream[item.entry.content],
                    "turn_text": None,
                }
            )
            continue
        record, turn_text = item.record, None
        if record.session and record.turn is not None:
            if record.session not in sessions:
                try:
                    sessions[record.session] = episodes.session(record.session)
                except OryxError:
                    sessions[record.session] = []
            turn_text = next(
                (
                    {"user": _clip(e.user), "reply": _clip(e.reply)}
                    for e in sessions[record.session]
                    if e.turn == record.turn
                ),
                None,
            )
        found.append({**item.to_json(agent), "turn_text": turn_text})
    return found


TURN_CHARS = 200


def _clip(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= TURN_CHARS else flat[:TURN_CHARS] + "…"
