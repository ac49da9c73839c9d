"""Typed tools (pydantic input → JSON Schema → validation → run) and the auditing executor."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from oryxtui import telemetry
from oryxtui.agent.episodes import REPLY_CHARS, EpisodeStore, clipped
from oryxtui.agent.messages import ToolCall
from oryxtui.errors import OryxError, UsageError
from oryxtui.memory import MemoryService, current_agent
from oryxtui.memory.format import parse_scope
from oryxtui.memory.history import Actor, acting_agent, current_actor
from oryxtui.memory.recall.results import NOTHING_FOUND
from oryxtui.memory.service import replace_hint
from oryxtui.notices import collecting


class Tool:
    """A tool the model may call. Subclasses set `name`, `description`, `Input` and `run`."""

    name: ClassVar[str]
    description: str  # a class default; an instance may say more (RecallMemory)
    Input: ClassVar[type[BaseModel]]

    def run(self, arguments: BaseModel) -> dict[str, Any]:
        raise NotImplementedError

    def schema(self) -> dict[str, Any]:
        """The chat-completions `tools` entry."""
        parameters = self.Input.model_json_schema()
        parameters.pop("title", None)
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": parameters,
            },
        }


class SaveMemoryInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    content: str = Field(description="What to remember, in one line.")
    scope: Literal["core", "archival"] = Field(
        "archival",
        description="'core' for facts that must always be in the prompt; 'archival' otherwise.",
    )

    @field_validator("scope", mode="before")
    @classmethod
    def _one_scope_rule(cls, value: object) -> str:
        """Upstream's reading (any case; null or blank is archival), through the one rule the
        CLI and the API use; an unknown scope is named in the error the model gets back."""
        if value is not None and not isinstance(value, str):
            raise ValueError(f"scope must be 'core' or 'archival', not {value!r}")
        try:
            return parse_scope(value).value
        except UsageError as exc:
            raise ValueError(str(exc)) from None


class SaveMemory(Tool):
    name = "save_memory"
    description = "Save something worth remembering to long-term memory."
    Input = SaveMemoryInput
    replaces_with = "update_memory"  # the tool its caller replaces an entry with

    def __init__(self, memory: MemoryService) -> None:
        self.memory = memory

    def run(self, arguments: BaseModel) -> dict[str, Any]:
        assert isinstance(arguments, SaveMemoryInput)
        agent = current_agent.get()
        saved = self.memory.save_checked(agent, arguments.content, arguments.scope, related=True)
        entry = saved.entry
        # may_update and related are always there (empty: nothing), so a client never has to
        # guess; related is for the model to judge (an older version of the same fact: replace).
        told: dict[str, Any] = {
            "id": entry.id,
            "may_update": saved.may_update_json(),
            "related": saved.related_json(),
        }
        if any(not update.held for update in saved.may_update):
            told["hint"] = replace_hint(self.replaces_with)
        if self.memory.holds_change(self.memory.by, agent):
            return {
                "saved": False,
                "held": True,
                "scope": arguments.scope,
                "entry": entry.line,
                "note": "The entry awaits a person's review: it is not in memory, nor in any "
                "prompt, until it is approved.",
                **told,
            }
        return {"saved": True, "scope": arguments.scope, "entry": entry.line, **told}


class UpdateMemoryInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(description="The old entry's id (recall_memory's ids).")
    content: str = Field(description="What is true now, in one line.")


class UpdateMemory(Tool):
    name = "update_memory"
    description = (
        "Replace a fact that changed by what is true now, by the old entry's id: the old one "
        "leaves memory. Prefer it to saving a contradicting entry."
    )
    Input = UpdateMemoryInput

    def __init__(self, memory: MemoryService) -> None:
        self.memory = memory

    def run(self, arguments: BaseModel) -> dict[str, Any]:
        assert isinstance(arguments, UpdateMemoryInput)
        agent = current_agent.get()
        old, new = self.memory.replace(agent, arguments.id, arguments.content)
        if self.memory.holds_change(self.memory.by, agent):
            return {
                "replaced": False,
                "held": True,
                "was": old.line,
                "entry": new.line,
                "note": "The change awaits a person's review: the old entry stays in memory "
                "until it is approved. Do not make it again.",
            }
        return {"replaced": True, "was": old.line, "id": new.id, "entry": new.line}


class RecallMemoryInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    keyword: str = Field(description="A word or phrase to look for in archival memory.")


class RecallMemory(Tool):
    name = "recall_memory"
    description = "Search archival memory (case-insensitive) for entries containing a keyword."
    Input = RecallMemoryInput

    def __init__(self, memory: MemoryService, ids: bool = False) -> None:
        self.memory = memory
        self.ids = ids
        if memory.ranked:  # hybrid recall (or a server that ranks): a phrase or a question
            self.description = (
                "Search archival memory for a keyword, phrase or question; the most relevant "
                "entries come first."
            )

    def run(self, arguments: BaseModel) -> dict[str, Any]:
        assert isinstance(arguments, RecallMemoryInput)
        started = time.perf_counter()
        agent = current_agent.get()
        found = self.memory.recall(agent, arguments.keyword)
        telemetry.searched(agent, found, started, self.memory.embedder_model)
        limit = self.memory.max_entry_chars  # a line written by hand may be any length
        result: dict[str, Any] = {
            "keyword": clipped(arguments.keyword, limit),
            "count": len(found.hits),
            "order": "oldest first" if found.mode == "keyword" else "best first",
            "entries": [clipped(entry.line, limit) for entry in found.entries],
        }
        if self.ids:  # what update_memory names an entry by
            result["ids"] = [entry.id for entry in found.entries]
        if not found.hits:
            result["note"] = NOTHING_FOUND
        if found.notice:  # upstream's line: ranked by keywords and time, meaning unavailable
            result["notice"] = found.notice
        return result


class SearchConversationsInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str = Field(description="Words to look for in earlier conversations.")
    since: str | None = Field(None, description="Only turns from then on: an ISO date or time.")
    until: str | None = Field(None, description="Only turns until then: an ISO date or time.")

    @field_validator("since", "until")
    @classmethod
    def _iso(cls, value: str | None) -> str | None:
        if value is not None and value.strip():
            try:
                datetime.fromisoformat(value.strip())
            except ValueError:
                raise ValueError(
                    f"{value!r} is not an ISO date or date-time, like 2026-12-01 or "
                    "2026-12-01T09:30"
                ) from None
            return value.strip()
        return None


class SearchConversations(Tool):
    name = "search_conversations"
    description = (
        "Search this agent's earlier conversations (every finished turn of every session) for "
        "words; the best-matching turns come first, each with its time and session."
    )
    Input = SearchConversationsInput

    def __init__(self, episodes: EpisodeStore) -> None:
        self.episodes = episodes

    def run(self, arguments: BaseModel) -> dict[str, Any]:
        assert isinstance(arguments, SearchConversationsInput)
        if not arguments.query.strip():
            raise UsageError("Nothing to search for: the query is empty.")
        agent = current_agent.get()
        self.episodes.sync(agent)
        found = self.episodes.search(agent, arguments.query, arguments.since, arguments.until)
        return {
            "query": clipped(arguments.query, REPLY_CHARS),
            "count": len(found),
            "turns": [episode.to_json(REPLY_CHARS) for episode in found],
        }


MEMORY_TOOLS = ("save_memory", "recall_memory", "update_memory", "search_conversations")


def builtin_tools(memory: MemoryService, episodes: EpisodeStore | None = None) -> dict[str, Tool]:
    """Upstream's two memory tools; oryxtui's `update_memory` beside them (not in the upstream
    profile, whose agents know only upstream's) and the conversation search."""
    setup = memory.recall_setup
    own = setup is None or setup.settings.profile != "upstream"
    tools: list[Tool] = [SaveMemory(memory), RecallMemory(memory, ids=own)]
    if own:
        tools.append(UpdateMemory(memory))
    if episodes is not None:
        tools.append(SearchConversations(episodes))
    return {tool.name: tool for tool in tools}


def tools_for_agent(available: dict[str, Tool], declared: Sequence[str]) -> list[Tool]:
    """The tools AGENT.md lists that exist, plus the memory tools, which are always there."""
    names = [*MEMORY_TOOLS, *(name for name in declared if name not in MEMORY_TOOLS)]
    return [available[name] for name in names if name in available]


MAX_RESULT_CHARS = 16_000  # a tool result is part of every later prompt of the turn


def bounded(output: dict[str, Any], limit: int) -> str:
    """`output` as JSON of at most about `limit` characters: the items of its longest list
    dropped from the end (and `"truncated": true` said) until it fits."""
    text = json.dumps(output, ensure_ascii=False)
    if len(text) <= limit:
        return text
    lists = [key for key, value in output.items() if isinstance(value, list) and value]
    if not lists:
        return json.dumps({"error": "The result was too long to return."})
    key = max(lists, key=lambda name: len(json.dumps(output[name], ensure_ascii=False)))
    items = list(output[key])
    while items and len(text) > limit:
        items = items[: len(items) * 3 // 4] if len(items) > 8 else items[:-1]
        text = json.dumps({**output, key: items, "truncated": True}, ensure_ascii=False)
    return text


@dataclass(frozen=True)
class ToolResult:
    call: ToolCall
    success: bool
    content: str  # JSON text fed back to the model
    error: str | None = None


AuditLog = Callable[[str | None, str, str, str | None, bool, str | None, int], None]


class ToolExecutor:
    """Runs every call: sets the agent context, validates input, records it, never raises."""

    def __init__(self, tools: dict[str, Tool], audit: AuditLog) -> None:
        self.tools = tools
        self.audit = audit

    def execute(
        self,
        call: ToolCall,
        agent: str | None,
        session_id: str | None,
        turn: int | None = None,
        actor: Actor | None = None,
    ) -> ToolResult:
        """The call run as `actor` (default: the agent of the session's turn), audited."""
        started = time.perf_counter()
        token = current_agent.set(agent)
        by = actor or acting_agent(session_id, turn)
        acting = current_actor.set(by)
        tool = call.name if call.name in self.tools else "unknown"  # (the model's word)
        told = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool,
            "gen_ai.tool.call.id": call.id[:128],
            "gen_ai.tool.type": "function",
            "gen_ai.conversation.id": session_id,
        }
        try:
            with telemetry.span(f"execute_tool {tool}", told) as span:
                result = self._run(call, agent, telemetry.actor_kind(by.kind))
                if span is not None:
                    _told_in(span, call, result)
        finally:
            current_actor.reset(acting)
            current_agent.reset(token)
        duration = int((time.perf_counter() - started) * 1000)
        with contextlib.suppress(OryxError):
            # The tool ran: its result goes back to the model even if the audit cannot be
            # written now (the session store keeps the row; the loop reports it at the end).
            self.audit(
                session_id,
                call.name,
                call.arguments_json,
                result.content if result.success else None,
                result.success,
                result.error,
                duration,
            )
        return result

    def _run(self, call: ToolCall, agent: str | None, actor: str) -> ToolResult:
        tool = self.tools.get(call.name)
        if tool is None:
            known = ", ".join(sorted(self.tools)) or "none"
            return self._failed(call, f"Unknown tool '{call.name}'; available tools: {known}.")
        try:
            raw = json.loads(call.arguments_json or "{}")
        except ValueError as exc:
            return self._failed(call, f"The arguments are not valid JSON ({exc}).")
        if not isinstance(raw, dict):
            return self._failed(call, "The arguments must be a JSON object.")
        try:
            arguments = tool.Input.model_validate(raw)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in error['loc']) or 'input'}: "
                f"{error['msg'].removeprefix('Value error, ')}"
                for error in exc.errors()
            )
            return self._failed(call, f"Invalid arguments for {call.name}: {problems.rstrip('.')}.")
        try:
            with collecting() as notes, _operation(call.name, agent, actor) as operation:
                output = tool.run(arguments)
                if operation is not None:
                    _outcome(operation, call.name, output)
        except OryxError as exc:
            return self._failed(call, str(exc))
        except Exception as exc:
            return self._failed(call, f"{call.name} failed: {type(exc).__name__}: {exc}")
        if notes:  # e.g. saved, but the history could not be recorded
            output = {**output, "warnings": notes}
        return ToolResult(call, True, bounded(output, MAX_RESULT_CHARS))

    @staticmethod
    def _failed(call: ToolCall, message: str) -> ToolResult:
        return ToolResult(call, False, json.dumps({"error": message}, ensure_ascii=False), message)


def _operation(tool: str, agent: str | None, actor: str) -> contextlib.AbstractContextManager[Any]:
    """A memory tool's call as the GenAI conventions' memory operation (its span; a refusal
    counted); any other tool's: nothing."""
    if tool not in telemetry.MEMORY_TOOLS:
        return contextlib.nullcontext(None)
    operation, change = telemetry.MEMORY_TOOLS[tool]
    return telemetry.memory_operation(operation, agent, actor, change=change)


def _outcome(span: Any, tool: str, output: dict[str, Any]) -> None:
    """What a memory tool's call came to, on its span: the entry and whether it was held."""
    if tool == "recall_memory":
        return
    span.set_attribute("oryxtui.memory.outcome", "held" if output.get("held") else "written")
    if isinstance(output.get("id"), str):
        span.set_attribute("gen_ai.memory.id", telemetry.token(output["id"]))
    if telemetry.content() and isinstance(output.get("entry"), str):
        span.set_attribute("gen_ai.memory.content", output["entry"])


def _told_in(span: Any, call: ToolCall, result: ToolResult) -> None:
    """A tool call's span: its failure, and (with capture_content) its arguments and result."""
    if not result.success:
        telemetry.failed(span, "tool_error", result.error or "failed")
    if telemetry.content():
        span.set_attribute("gen_ai.tool.call.arguments", call.arguments_json)
        span.set_attribute("gen_ai.tool.call.result", result.content)
