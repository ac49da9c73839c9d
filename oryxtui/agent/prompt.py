"""The prompt builder: identity, memory, history and tools, re-read from disk on every build."""

from __future__ import annotations

import contextlib
import json
import math
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from oryxtui.agent.compaction import HistoryCompactor, split
from oryxtui.agent.messages import Message, last_turns
from oryxtui.agent.tools import Tool, tools_for_agent
from oryxtui.agent_md import AgentDefinition
from oryxtui.config import Settings
from oryxtui.errors import OryxError, OutsideWorkspace
from oryxtui.memory import MemoryService
from oryxtui.memory.format import ARCHIVAL_HEADER, CORE_HEADER
from oryxtui.workspace import BOOTSTRAP_FILES, Workspace

BLOCK_NAMES = ("identity", "time", "memory", "summary", "history", "tools")
DEFAULT_IDENTITY = "You are a helpful assistant with long-term memory."
CURRENT_TIME_LABEL = "当前日期时间："
CURRENT_TIME_FORMAT = "%Y-%m-%d %H:%M"


def current_time_line(now: datetime) -> str:
    """Upstream PromptBuilder's line: the model does not know today's date on its own."""
    return CURRENT_TIME_LABEL + now.strftime(CURRENT_TIME_FORMAT)


def estimate_tokens(text: str) -> int:
    """A rough count: ~4 ASCII characters a token, one token per other character (CJK, emoji)."""
    ascii_chars = len(text.encode("ascii", "ignore"))  # in C: a character at a time was 1 s a run
    return math.ceil(ascii_chars / 4) + (len(text) - ascii_chars)


def held_notes(proposed: list[str]) -> list[str]:
    """What the prompt preview says of the changes held for review (`proposed`: each one's
    kind): saves are not injected; an edit, move or delete leaves its entry as it is."""
    saves = proposed.count("save")
    changes = len(proposed) - saves
    notes = []
    if saves:
        notes.append(
            f"{saves} saved {'entry awaits' if saves == 1 else 'entries await'} review: "
            "pending, not injected until approved (`oryxtui memory review`)."
        )
    if changes:
        notes.append(
            f"{changes} {'change' if changes == 1 else 'changes'} (edit, move or delete) "
            f"{'awaits' if changes == 1 else 'await'} review: the entries are injected as they "
            "are until approved (`oryxtui memory review`)."
        )
    return notes


@dataclass(frozen=True)
class PromptBlock:
    name: str
    text: str

    @property
    def chars(self) -> int:
        return len(self.text)

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "text": self.text, "chars": self.chars, "tokens": self.tokens}


@dataclass(frozen=True)
class RecallUse:
    """One `recall_memory` call of the last turn and what it gave the model."""

    keyword: str
    entries: tuple[str, ...]
    notice: str | None = None


def recalls_of_last_turn(history: Sequence[Message]) -> tuple[RecallUse, ...]:
    """The recall_memory calls since the last user message, with their results."""
    start = max((i for i, m in enumerate(history) if m.role == "user"), default=0)
    turn = history[start:]
    results = {m.tool_call_id: m.content for m in turn if m.role == "tool"}
    uses = []
    for message in turn:
        for call in message.tool_calls:
            if call.name != "recall_memory" or call.id not in results:
                continue
            try:
                result = json.loads(results[call.id] or "")
            except ValueError:
                result = None
            if not isinstance(result, dict):  # a failed call: its error text
                uses.append(RecallUse(_keyword_of(call.arguments_json), (), results[call.id]))
                continue
            entries = tuple(str(e) for e in result.get("entries") or ())
            notice = result.get("notice")
            uses.append(RecallUse(str(result.get("keyword", "")), entries, notice))
    return tuple(uses)


def _keyword_of(arguments_json: str) -> str:
    try:
        arguments = json.loads(arguments_json)
    except ValueError:
        return arguments_json
    return str(arguments.get("keyword", "")) if isinstance(arguments, dict) else arguments_json


@dataclass(frozen=True)
class Prompt:
    """Exactly what the model receives, and the same content as labelled blocks for people."""

    agent: str | None
    blocks: tuple[PromptBlock, ...]
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    warnings: tuple[str, ...] = field(default_factory=tuple)
    recalls: tuple[RecallUse, ...] = ()  # what recall gave the model in the last turn

    def block(self, name: str) -> PromptBlock:
        return next(block for block in self.blocks if block.name == name)

    @property
    def tokens(self) -> int:
        return sum(block.tokens for block in self.blocks)

    def to_json(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "blocks": [block.to_json() for block in self.blocks],
            "messages": self.messages,
            "tools": self.tools,
        }


def _history_text(messages: Sequence[Message]) -> str:
    lines = []
    for message in messages:
        if message.role == "tool":
            lines.append(f"tool {message.tool_name or ''}: {message.content}")
        elif message.tool_calls:
            calls = ", ".join(f"{c.name}({c.arguments_json})" for c in message.tool_calls)
            lines.append(
                f"{message.role}: {message.content} [calls {calls}]".replace(":  [", ": [")
            )
        else:
            lines.append(f"{message.role}: {message.content}")
    return "\n".join(lines)


class PromptBuilder:
    def __init__(
        self,
        workspace: Workspace,
        settings: Settings,
        memory: MemoryService,
        tools: dict[str, Tool],
        compactor: HistoryCompactor | None = None,
    ) -> None:
        self.workspace = workspace
        self.settings = settings
        self.memory = memory
        self.tools = tools
        self.compactor = compactor  # with [prompt] compact_history: earlier turns summarised

    def definition(self, agent: str | None) -> AgentDefinition | None:
        return None if agent is None else self.workspace.read_agent(agent)

    def max_history_turns(self, definition: AgentDefinition | None) -> int:
        if definition is not None and definition.settings.max_history_turns:
            return definition.settings.max_history_turns
        return self.settings.prompt.max_history_turns

    def build(self, agent: str | None, history: Sequence[Message], ask: bool = True) -> Prompt:
        """The prompt for the next model call; without `ask`, the model is never asked for
        anything (a preview a web page may have triggered: see `HistoryCompactor.summary`)."""
        definition = self.definition(agent)
        warnings: list[str] = []
        if agent is not None and definition is None:
            # A folder with only a MEMORY.md, or an agent known here only by its memory in a
            # shared database: say what the prompt lacks.
            warnings.append(
                f"Agent {agent} has no AGENT.md here: the prompt has the default identity and "
                f"every tool; `oryxtui agents new {agent}` writes one to give it its role."
            )
        identity = self._identity(definition, warnings)
        try:
            memory = self.memory.build_context(agent)
        except OutsideWorkspace:
            raise  # a link out of the workspace is refused outright, never papered over
        except OryxError as exc:  # a memory service that is down must not stop the turn
            memory = f"{CORE_HEADER}\n\n{ARCHIVAL_HEADER}\n"
            warnings.append(f"Memory is unavailable for this turn: {exc}")
        with contextlib.suppress(OryxError):
            warnings += held_notes([item.proposes for item in self.memory.held(agent)])
        max_turns = self.max_history_turns(definition)
        summary = ""
        if self.settings.prompt.compact_history and self.compactor is not None:
            earlier, window = split(history, max_turns)
            if earlier:
                summary = self.compactor.summary(agent, earlier, ask)
        else:
            window = last_turns(history, max_turns)
        tools = tools_for_agent(self.tools, definition.tools if definition else ())
        schemas = [tool.schema() for tool in tools]
        now = current_time_line(self.memory.clock()) if self.settings.prompt.current_time else ""
        blocks = (
            PromptBlock("identity", identity),
            *([PromptBlock("time", now)] if now else []),
            PromptBlock("memory", memory),
            *([PromptBlock("summary", summary)] if summary else []),
            PromptBlock("history", _history_text(window)),
            PromptBlock("tools", json.dumps(schemas, ensure_ascii=False, indent=2)),
        )
        # As upstream: the date-time line, then the memory block and a line break.
        time_line = f"{now}\n" if now else ""
        system = {"role": "system", "content": f"{identity}\n\n{time_line}{memory}\n"}
        summarised = [{"role": "system", "content": summary}] if summary else []
        messages = [system, *summarised, *(message.to_openai() for message in window)]
        recalls = recalls_of_last_turn(window)
        return Prompt(agent, blocks, messages, schemas, tuple(warnings), recalls)

    def _identity(self, definition: AgentDefinition | None, warnings: list[str]) -> str:
        if definition is None:
            parts = [DEFAULT_IDENTITY]
            bootstrap = [name for name in BOOTSTRAP_FILES]
        else:
            parts = [definition.identity.prompt, definition.body]
            bootstrap = definition.bootstrap
        for relative in bootstrap:
            text = self._bootstrap_file(relative, warnings, quiet=definition is None)
            if text:
                parts.append(text)
        return "\n\n".join(part.strip() for part in parts if part and part.strip())

    def _bootstrap_file(self, relative: str, warnings: list[str], quiet: bool) -> str | None:
        """A bootstrap file's text, or None with a warning: outside the workspace, missing, not
        a regular file (a FIFO would hang the read, a folder cannot be read), a bad name."""
        path = self.workspace.root / relative
        try:
            inside = self.workspace.contains(path)
        except ValueError:  # a NUL byte in the name
            warnings.append(f"Bootstrap entry {relative!r} is not a file name; skipped.")
            return None
        if not inside:
            warnings.append(f"Bootstrap file {relative} is outside the workspace; skipped.")
            return None
        try:
            # Non-blocking, so opening a FIFO returns at once; fstat then tells what it is.
            descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        except FileNotFoundError:
            if not quiet:
                warnings.append(f"Bootstrap file {relative} is missing; skipped.")
            return None
        except OSError as exc:
            warnings.append(f"Bootstrap file {relative} cannot be read ({exc.strerror}); skipped.")
            return None
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            os.close(descriptor)
            warnings.append(f"Bootstrap file {relative} is not a regular file; skipped.")
            return None
        with open(descriptor, encoding="utf-8", errors="replace") as handle:
            return handle.read()
