"""Chat messages in upstream's session shape, and the turn window of the history."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments_json: str

    def to_json(self) -> dict[str, str]:
        return {"id": self.id, "name": self.name, "argumentsJson": self.arguments_json}


@dataclass(frozen=True)
class Message:
    """One message: role is user, assistant, tool (or system, never stored)."""

    role: str
    content: str = ""
    tool_name: str | None = None
    tool_call_id: str | None = None
    tool_calls: tuple[ToolCall, ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, Any]:
        """Upstream's `messages_json` element."""
        return {
            "role": self.role,
            "content": self.content,
            "toolName": self.tool_name,
            "toolCallId": self.tool_call_id,
            "toolCalls": [call.to_json() for call in self.tool_calls],
        }

    @classmethod
    def from_json(cls, data: object) -> Message:
        """One element of `messages_json` (upstream's shape); ValueError when it is none. A
        session row is written by other programs too: every field is checked."""
        if not isinstance(data, dict):
            raise ValueError("a message is a JSON object")
        role, content = data.get("role", "user"), data.get("content")
        calls = data.get("toolCalls") or []
        if not isinstance(role, str) or not isinstance(content, str | None):
            raise ValueError("a message's role and content are text")
        if not isinstance(calls, list) or not all(isinstance(c, dict) for c in calls):
            raise ValueError("a message's toolCalls are a list of objects")
        return cls(
            role=role,
            content=content or "",
            tool_name=_text(data.get("toolName")),
            tool_call_id=_text(data.get("toolCallId")),
            tool_calls=tuple(
                ToolCall(
                    _text(c.get("id")) or "",
                    _text(c.get("name")) or "",
                    _text(c.get("argumentsJson")) or "",
                )
                for c in calls
            ),
        )

    def to_openai(self) -> dict[str, Any]:
        """The chat-completions shape of this message."""
        if self.role == "tool":
            return {
                "role": "tool",
                "tool_call_id": self.tool_call_id or "",
                "content": self.content,
            }
        message: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments_json},
                }
                for call in self.tool_calls
            ]
        return message


def _text(value: object) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ValueError("expected text")
    return value


def parse_messages(messages_json: object) -> tuple[list[Message], int]:
    """A session's `messages_json` as messages, and how many elements were not messages (or 1
    when the whole text is not a JSON list): those are skipped, never a failure."""
    try:
        raw = json.loads(messages_json or "[]") if isinstance(messages_json, str | None) else None
    except (ValueError, RecursionError):
        raw = None
    if not isinstance(raw, list):
        return [], 1
    messages: list[Message] = []
    skipped = 0
    for item in raw:
        try:
            messages.append(Message.from_json(item))
        except ValueError:
            skipped += 1
    return messages, skipped


def last_turns(messages: Sequence[Message], max_turns: int) -> list[Message]:
    """The last `max_turns` whole turns; a turn starts at a user message (the current counts)."""
    starts = [index for index, message in enumerate(messages) if message.role == "user"]
    if len(starts) <= max_turns:
        return list(messages[starts[0] :]) if starts else list(messages)
    return list(messages[starts[-max_turns] :])
