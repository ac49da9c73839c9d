"""History compaction (`[prompt] compact_history = true`): the turns that fall out of the
history window are replaced by one short summary message at its start, made the way digests
are (the agent's LLM, or the extractive summary), instead of silently vanishing.

The summary is redone only every few turns: the window keeps the last `max_history_turns`
turns and up to a quarter as many more, and the turns before it are summarised when a quarter
has gathered. Each summary is kept (per conversation, by what it covers), so building the next
prompt, or the preview of it, does not ask for it again."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Sequence

from oryxtui.agent.messages import Message
from oryxtui.memory.digest import EXTRACTIVE, Summariser, extractive_summary
from oryxtui.memory.format import MemoryEntry, Scope, sanitize_content

SUMMARY_CHARS = 800
SUMMARY_LABEL = "Summary of the earlier conversation"
TURN_CHARS = 400  # of each earlier turn, what the summariser is shown
KEPT_SUMMARIES = 256
# Turns share their replies' boilerplate: only near-copies count as saying the same.
TURNS_ALIKE = 0.85


def turn_starts(history: Sequence[Message]) -> list[int]:
    return [index for index, message in enumerate(history) if message.role == "user"]


def split(history: Sequence[Message], max_turns: int) -> tuple[list[Message], list[Message]]:
    """(the earlier turns to summarise, the window): the window holds the last `max_turns`
    turns and fewer than a quarter as many more, so the cut moves every quarter."""
    starts = turn_starts(history)
    if len(starts) <= max_turns:
        return [], list(history[starts[0] :]) if starts else list(history)
    step = max(1, max_turns // 4)
    cut = ((len(starts) - max_turns) // step) * step
    if cut == 0:
        return [], list(history[starts[0] :])
    return list(history[: starts[cut]]), list(history[starts[cut] :])


def turns_as_entries(earlier: Sequence[Message]) -> list[MemoryEntry]:
    """Each earlier turn as one line, `user: … → reply …`, for the summariser."""
    entries: list[MemoryEntry] = []
    starts = turn_starts(earlier) or [0]
    for number, start in enumerate(starts):
        stop = starts[number + 1] if number + 1 < len(starts) else len(earlier)
        turn = earlier[start:stop]
        asked = next((m.content for m in turn if m.role == "user"), "")
        replies = [m.content for m in turn if m.role == "assistant" and m.content.strip()]
        tools = [c.name for m in turn for c in m.tool_calls]
        text = f"user: {asked} → {replies[-1] if replies else '(no reply)'}"
        if tools:
            text += f" [tools: {', '.join(dict.fromkeys(tools))}]"
        text = sanitize_content(text)[:TURN_CHARS]
        entries.append(MemoryEntry(Scope.ARCHIVAL, None, text, f"- {text}"))
    return entries


class HistoryCompactor:
    """Summaries of earlier turns, made once per conversation and cut."""

    def __init__(self, summariser: Callable[[str | None], Summariser | None]) -> None:
        self.summariser = summariser  # an agent's LLM (made when first needed), or none
        self._kept: dict[str, str] = {}
        self._lock = threading.Lock()

    def summary(self, agent: str | None, earlier: Sequence[Message], ask: bool = True) -> str:
        """The summary message's text for `earlier` (the same text for the same turns).
        Without `ask`, the model is not asked: a summary not made yet is said to be coming."""
        key = hashlib.sha256(
            json.dumps([agent, *(m.to_json() for m in earlier)], ensure_ascii=False).encode()
        ).hexdigest()
        with self._lock:
            if key in self._kept:
                return self._kept[key]
        entries = turns_as_entries(earlier)
        summarise = self.summariser(agent)
        if summarise is not None and not ask:
            many = f"{len(entries)} turn{'s' if len(entries) != 1 else ''}"
            return f"{SUMMARY_LABEL} ({many}): made by the agent's model at its next turn."
        head = f"{SUMMARY_LABEL} ({len(entries)} turn{'s' if len(entries) != 1 else ''}"
        head += f", {EXTRACTIVE}): " if summarise is None else "): "
        room = SUMMARY_CHARS - len(head)
        body = sanitize_content(summarise(entries, room)) if summarise else ""
        if not body:
            head = head.replace("): ", f", {EXTRACTIVE}): ") if summarise else head
            body = extractive_summary(entries, room, alike=TURNS_ALIKE)
        text = head + body[:room]
        with self._lock:
            if len(self._kept) >= KEPT_SUMMARIES:
                self._kept.pop(next(iter(self._kept)))
            self._kept[key] = text
        return text
