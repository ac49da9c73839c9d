"""The tools an MCP client may call: the agent's own memory tools (the same inputs, checks and
one entry path) with what a client outside oryxtui needs besides — the memory block as
injected, and (where allowed) edit and delete by id, compare-and-set as at the CLI. Each says
what its key must allow; the server checks it before running anything."""

from __future__ import annotations

import time
from contextvars import ContextVar
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from oryxtui import telemetry
from oryxtui.agent.episodes import EpisodeStore, clipped
from oryxtui.agent.tools import (
    SaveMemory,
    SearchConversations,
    Tool,
    UpdateMemory,
)
from oryxtui.api.keys import OPEN, Caller, Scope
from oryxtui.errors import UsageError
from oryxtui.memory import MemoryService, current_agent
from oryxtui.memory.recall.results import NOTHING_FOUND

# Who is calling (a key over HTTP; the person who launched a stdio server: OPEN).
current_caller: ContextVar[Caller] = ContextVar("oryxtui_mcp_caller", default=OPEN)
EDITS = ("edit_memory", "delete_memory")  # offered only with [mcp] edits = true
MAX_RECALL = 50


class Needs:
    """A tool that changes memory needs a key with the write scope."""

    needs: ClassVar[Scope] = Scope.READ
    doing: ClassVar[str] = "reading memory"

    def allowed(self) -> None:
        current_caller.get().require(self.needs, self.doing)


class McpSave(Needs, SaveMemory):
    needs = Scope.WRITE
    doing = "saving to memory"
    replaces_with = "replace_memory"
    description = (
        "Save one durable fact to this agent's long-term memory: a decision, a preference, a "
        "name, a fix that worked — something a later session should know. Write it as one "
        "self-contained line (who/what/why, no 'as I said'); do not save small talk, secrets "
        "or what is already in memory (recall first). scope 'core' is for the few facts that "
        "must be in every prompt; leave it out for 'archival', searched on demand. The server "
        "may hold the entry for a person's review: the answer says so. The answer lists up to "
        "5 existing entries most likely about the same thing (related; held: waiting for "
        "review), each with its id, text and time: if one is an older version of what you "
        "saved (a value that changed), replace_memory it with the id and the current text. "
        "may_update names the ones the server is sure of."
    )

    def run(self, arguments: BaseModel) -> dict[str, Any]:
        self.allowed()
        result = super().run(arguments)
        if result.get("held"):
            result["note"] = (
                "The entry awaits a person's approval in oryxtui's review inbox: it is not in "
                "memory, nor in any prompt, until it is approved. Do not save it again."
            )
        return result


# What an edit or delete held for review answers (the entry stays as it is until approved).
HELD = {
    "held": True,
    "note": "The change awaits a person's approval in oryxtui's review inbox: the entry stays "
    "as it is, in memory and in every prompt, until it is approved. Do not make it again.",
}


class McpReplace(Needs, UpdateMemory):
    name = "replace_memory"
    needs = Scope.WRITE
    doing = "replacing in memory"
    description = (
        "Replace an entry that is no longer true (a fact that changed: a new owner, a moved "
        "date, a new address) by what is true now, by its id (from recall_memory, or a save's "
        "related or may_update): a new entry takes its place and the old one leaves memory "
        "(its history keeps it). Prefer it to saving a second, contradicting entry. The server "
        "may hold the change for a person's review: the answer says so. If the entry changed "
        "since you read it, nothing is changed: recall it again."
    )

    def run(self, arguments: BaseModel) -> dict[str, Any]:
        self.allowed()
        return super().run(arguments)


class RecallInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str = Field(description="A word, phrase or question; any language.")
    limit: int = Field(10, ge=1, le=MAX_RECALL, description="How many entries at most.")


class McpRecall(Needs, Tool):
    name = "recall_memory"
    Input = RecallInput
    description = (
        "Search this agent's memory before answering from assumptions or saving a fact again: "
        "a word, phrase or question (by words and, where the server has an embedder, by "
        "meaning). Core entries that hold the words come first, then archival entries best "
        "first, each with its id and the time it was written."
    )

    def __init__(self, memory: MemoryService) -> None:
        self.memory = memory

    def run(self, arguments: BaseModel) -> dict[str, Any]:
        assert isinstance(arguments, RecallInput)
        self.allowed()
        query = arguments.query
        if not query.strip():
            raise UsageError("Nothing to recall: the query is empty.")
        agent = current_agent.get()
        limit = self.memory.max_entry_chars  # a line written by hand may be any length
        started = time.perf_counter()
        core = self.memory.find_core(agent, query)[: arguments.limit]
        found = self.memory.recall(agent, query)
        hits = found.entries[: max(arguments.limit - len(core), 0)]
        model = self.memory.embedder_model
        telemetry.searched(agent, found, started, model, hits=len(core) + len(hits))

        def told(entry: Any) -> dict[str, Any]:
            return {
                "id": entry.id,
                "scope": entry.scope.value,
                "time": entry.time,
                "content": clipped(entry.content, limit),
            }

        result: dict[str, Any] = {
            "query": clipped(query, limit),
            "count": len(core) + len(hits),
            "order": "core first, then "
            + ("oldest first" if found.mode == "keyword" else "best first"),
            "entries": [told(entry) for entry in [*core, *hits]],
        }
        if not result["entries"]:
            result["note"] = NOTHING_FOUND
        if found.notice:
            result["notice"] = found.notice
        return result


class McpSearch(Needs, SearchConversations):
    description = (
        "Search this agent's earlier conversations (every finished turn) for words, when "
        "memory does not hold what was said; since/until narrow it to a time (ISO dates). "
        "The best-matching turns come first, each with its time and session."
    )

    def run(self, arguments: BaseModel) -> dict[str, Any]:
        self.allowed()
        return super().run(arguments)


class Nothing(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ShowMemory(Needs, Tool):
    name = "show_memory"
    description = (
        "The memory block exactly as this agent's prompt receives it: every core entry, and "
        "the newest archival entries that fit its window. Read it at the start of a task."
    )
    Input = Nothing

    def __init__(self, memory: MemoryService) -> None:
        self.memory = memory

    def run(self, arguments: BaseModel) -> dict[str, Any]:
        self.allowed()
        block = self.memory.build_context(current_agent.get())
        return {"chars": len(block), "lines": block.split("\n")}


class EditInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(description="The entry's id, as recall_memory gave it.")
    content: str = Field(description="The entry's new text, in one line.")


class EditMemory(Needs, Tool):
    name = "edit_memory"
    needs = Scope.WRITE
    doing = "editing memory"
    description = (
        "Correct one entry that is wrong or outdated, by its id (from recall_memory); its time "
        "and scope stay. If the entry changed since you read it, nothing is changed and you are "
        "told: recall it again."
    )
    Input = EditInput

    def __init__(self, memory: MemoryService) -> None:
        self.memory = memory

    def run(self, arguments: BaseModel) -> dict[str, Any]:
        assert isinstance(arguments, EditInput)
        self.allowed()
        agent = current_agent.get()
        entry = self.memory.edit(agent, arguments.id, arguments.content)
        if self.memory.holds_change(self.memory.by, agent):
            return {"edited": False, **HELD, "entry": entry.line}
        return {"edited": True, "id": entry.id, "entry": entry.line}


class DeleteInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(description="The entry's id, as recall_memory gave it.")


class DeleteMemory(Needs, Tool):
    name = "delete_memory"
    needs = Scope.WRITE
    doing = "deleting from memory"
    description = (
        "Remove one entry that is wrong, by its id (from recall_memory). A person can bring it "
        "back from the history. If it changed since you read it, nothing is removed."
    )
    Input = DeleteInput

    def __init__(self, memory: MemoryService) -> None:
        self.memory = memory

    def run(self, arguments: BaseModel) -> dict[str, Any]:
        assert isinstance(arguments, DeleteInput)
        self.allowed()
        agent = current_agent.get()
        entry = self.memory.delete(agent, arguments.id)
        if self.memory.holds_change(self.memory.by, agent):
            return {"deleted": False, **HELD, "entry": entry.line}
        return {"deleted": True, "entry": entry.line}


def mcp_tools(memory: MemoryService, episodes: EpisodeStore, edits: bool) -> dict[str, Tool]:
    """The tools by name: the five always, edit and delete when `[mcp] edits` is on."""
    tools: list[Tool] = [
        McpSave(memory),
        McpReplace(memory),
        McpRecall(memory),
        McpSearch(episodes),
        ShowMemory(memory),
    ]
    if edits:
        tools += [EditMemory(memory), DeleteMemory(memory)]
    return {tool.name: tool for tool in tools}
