"""Chat messages in upstream's session shape, and the turn window of the history."""

from __future__ import annotations

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
    def from_json(cls, data: dict[str, Any]) -> Message:
        calls = tuple(
            ToolCall(str(c.get("id", "")), str(c.get("name", "")), str(c.get("argumentsJson", "")))
            for c in data.get("toolCalls") or ()
        )
        return cls(
            role=str(data.get("role", "user")),
            content=str(data.get("content") or ""),
            tool_name=data.get("toolName"),
            tool_call_id=data.get("toolCallId"),
            tool_calls=calls,
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


def last_turns(messages: Sequence[Message], max_turns: int) -> list[Message]:
    """The last `max_turns` whole turns; a turn starts at a user message (the current counts)."""
    starts = [index for index, message in enumerate(messages) if message.role == "user"]
    if len(starts) <= max_turns:
        return list(messages[starts[0] :]) if starts else list(messages)
    return list(messages[starts[-max_turns] :])
