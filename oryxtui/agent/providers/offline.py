"""A deterministic local model so the whole system works with no LLM: it really calls the tools."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

from oryxtui.agent.messages import ToolCall
from oryxtui.agent.providers import ModelTurn, TextDelta
from oryxtui.memory.format import CORE_HEADER
from oryxtui.phrases import counted

LABEL = "offline model"
_CORE = re.compile(
    r"^\s*remember\s+(?:in|to)\s+core(?:\s+memory)?(?:\s+that)?[\s:,]+(.+)$", re.I | re.S
)
_ARCHIVAL = re.compile(r"^\s*remember(?:\s+that)?[\s:,]+(.+)$", re.I | re.S)
_RECALL = re.compile(
    r"^\s*(?:what\s+do\s+you\s+(?:remember|know)\s+about|recall)\s+(.+?)[\s?.!]*$", re.I | re.S
)
_CONVERSATIONS = re.compile(
    r"^\s*(?:what\s+did\s+(?:we|i)\s+(?:say|talk|discuss)\s+about|search\s+conversations\s+for)"
    r"\s+(.+?)[\s?.!]*$",
    re.I | re.S,
)
_WORD = re.compile(r"\w{4,}")


def _say(text: str) -> Iterator[TextDelta | ModelTurn]:
    reply = f"({LABEL}) {text}"
    for piece in re.findall(r"\S+\s*", reply):
        yield TextDelta(piece)
    yield ModelTurn(reply)


def _call(name: str, arguments: dict[str, str], turn: int) -> Iterator[TextDelta | ModelTurn]:
    payload = json.dumps(arguments, ensure_ascii=False)
    yield ModelTurn("", (ToolCall(f"offline_{turn}_{name}", name, payload),))


def _memory_lines(messages: Sequence[dict[str, Any]]) -> list[str]:
    system = next((m["content"] for m in messages if m.get("role") == "system"), "")
    block = system[system.find(CORE_HEADER) :] if CORE_HEADER in system else ""
    return [line for line in block.split("\n") if line.startswith("- ")]


class OfflineModel:
    """Understands "remember that …", "remember in core …", "what do you remember about …",
    "what did we say about …" (earlier conversations)."""

    label = LABEL
    provider_name = "oryxtui.offline"  # as traces name it (gen_ai.provider.name)

    def stream(
        self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]
    ) -> Iterator[TextDelta | ModelTurn]:
        last = messages[-1] if messages else {}
        if last.get("role") == "tool":
            yield from _say(self._after_tool(messages))
            return
        text = str(last.get("content") or "")
        turn = sum(1 for m in messages if m.get("role") == "user")
        if match := _CORE.match(text):
            yield from _call("save_memory", {"content": match[1].strip(), "scope": "core"}, turn)
        elif (match := _CONVERSATIONS.match(text)) and any(
            tool.get("function", {}).get("name") == "search_conversations" for tool in tools
        ):
            yield from _call("search_conversations", {"query": match[1].strip()}, turn)
        elif match := _RECALL.match(text):
            yield from _call("recall_memory", {"keyword": match[1].strip()}, turn)
        elif match := _ARCHIVAL.match(text):
            yield from _call("save_memory", {"content": match[1].strip()}, turn)
        else:
            yield from _say(self._from_memory(text, messages))

    @staticmethod
    def _after_tool(messages: Sequence[dict[str, Any]]) -> str:
        result = json.loads(messages[-1].get("content") or "{}")
        if "error" in result:
            return f"That did not work: {result['error']}"
        if result.get("saved"):
            return f"Noted in {result.get('scope', 'archival')} memory."
        if result.get("held"):
            return "Noted; it awaits review before it goes into memory."
        if "turns" in result:  # search_conversations
            turns = result["turns"]
            if not turns:
                return f"We have not talked about {result.get('query', 'that')} before."
            said = "\n".join(f"- [{t['time']}] you: {t['user']}" for t in turns[:3])
            return f"We talked about {result.get('query')} {counted(len(turns), 'time')}:\n{said}"
        entries = result.get("entries", [])
        if not entries:
            return f"I don't remember anything about {result.get('keyword', 'that')}."
        # The five best: the first of a ranked answer, the newest of one oldest first.
        best = entries[:5] if result.get("order") == "best first" else entries[-5:]
        shown = "\n".join(best)
        return (
            f"I remember {counted(len(entries), 'thing')} about {result.get('keyword')}:\n{shown}"
        )

    @staticmethod
    def _from_memory(text: str, messages: Sequence[dict[str, Any]]) -> str:
        words = {word.lower() for word in _WORD.findall(text)}
        lines = _memory_lines(messages)
        hits = [line for line in lines if any(word in line.lower() for word in words)]
        if hits:
            return "From memory:\n" + "\n".join(hits[-3:])
        return 'I have nothing in memory about that. Tell me "remember that …" and I will keep it.'
