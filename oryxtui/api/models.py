"""The bodies the REST API answers with, so /openapi.json documents each one. Every answer is
upstream's envelope, {code, message, data, timestamp}, around one of these."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

from oryxtui.agent.prompt import Prompt
from oryxtui.memory import MemoryEntry, MemorySnapshot

Data = TypeVar("Data")


class Envelope(BaseModel, Generic[Data]):
    code: int = Field(0, description="0 on success; the HTTP status on an error")
    message: str = "success"
    data: Data | None = None
    timestamp: int = Field(description="milliseconds since the epoch")
    warnings: list[str] | None = Field(
        None,
        description="what went wrong beside a result that stands (e.g. a save that landed but "
        "could not be recorded in the history); only when there is something to say",
    )


def envelope(
    data: Any = None, code: int = 0, message: str = "success", warnings: list[str] | None = None
) -> Envelope[Any]:
    stamp = int(time.time() * 1000)
    if warnings:
        return Envelope[Any](
            data=data, code=code, message=message, timestamp=stamp, warnings=warnings
        )
    return Envelope[Any](data=data, code=code, message=message, timestamp=stamp)


class SaveBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    content: str
    scope: str | None = "archival"  # read by the one scope rule, as the CLI and the tool do


class DigestBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    dry_run: bool = False
    content: str | None = None  # write this digest (a plan's), instead of planning one


class ReviewBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    approve: list[str] | Literal["all"] | None = None
    reject: list[str] | None = None


class ChangeBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    content: str | None = None
    scope: str | None = None


class Entry(TypedDict):
    """A dict, not a model: an answer may hold 100,000 of them."""

    id: Annotated[str, Field(description="stable address of the entry, for PATCH and DELETE")]
    time: Annotated[
        str | None, Field(description="yyyy-MM-dd HH:mm:ss, or null for a hand-written line")
    ]
    content: str


def entries(found: Iterable[MemoryEntry]) -> list[Entry]:
    return [{"id": entry.id, "time": entry.time, "content": entry.content} for entry in found]


class SavedEntry(Entry):
    scope: Annotated[str, Field(description="core or archival")]


def saved_entry(entry: MemoryEntry) -> SavedEntry:
    return {"scope": entry.scope.value, **entry.to_json()}  # type: ignore[typeddict-item]


class MayUpdate(SavedEntry):
    score: Annotated[float, Field(description="how sure the check is, 0 to 1")]


class RelatedEntry(SavedEntry):
    held: Annotated[bool, Field(description="true: a change waiting for review, in no prompt")]


class CheckedEntry(SavedEntry, total=False):
    may_update: Annotated[
        list[MayUpdate],
        Field(
            description="entries this one probably replaces (the same subject, another value): "
            "replace them, or leave them; nothing is done unasked"
        ),
    ]
    related: Annotated[
        list[RelatedEntry],
        Field(
            description="up to 5 entries most likely about the same thing, held ones included: "
            "if one is an older version of what was saved, replace it"
        ),
    ]
    held: Annotated[bool, Field(description="true: waiting for a person's review")]


class Replacement(BaseModel):
    replaced: SavedEntry = Field(description="the entry as it was (now out of the memory)")
    entry: SavedEntry = Field(description="the entry that takes its place, stamped now")
    held: bool = Field(False, description="true: the replacement waits for a person's review")


class ReplacedVersion(SavedEntry):
    until: Annotated[str | None, Field(description="when it stopped being true (ISO 8601)")]
    replaced_by: Annotated[Entry, Field(description="the entry that took its place")]
    current: Annotated[Entry, Field(description="its chain's current version")]
    change: Annotated[int, Field(description="the replacement's number in the history")]
    by: Annotated[str, Field(description="who replaced it")]


class Suggestion(BaseModel):
    old: SavedEntry = Field(description="the entry that may be out of date")
    new: SavedEntry = Field(description="the save that probably replaces it")
    change: int = Field(description="the save's number in the history")


class SuggestionBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    old: str = Field(description="the older entry's id")
    new: str = Field(description="the newer entry's id")
    action: Literal["replace", "dismiss"]


class Change(TypedDict):
    """One change to the memory, as `memory log --json` prints it."""

    n: Annotated[int, Field(description="its number in the agent's history")]
    time: Annotated[str | None, Field(description="ISO 8601 local time it was recorded")]
    agent: str | None
    actor: Annotated[str, Field(description="dashboard, cli, api, agent or outside")]
    session: Annotated[str | None, Field(description="the agent's session, for its tool calls")]
    op: Annotated[
        str,
        Field(description="save, edit, move, delete, dedupe, restore, import, accept, outside"),
    ]
    before: Annotated[list[SavedEntry], Field(description="the entries it removed or replaced")]
    after: Annotated[list[SavedEntry], Field(description="the entries it added")]


class AgentInfo(BaseModel):
    name: str
    description: str = ""
    provider: str | None = None
    model: str | None = None
    tools: list[str] = []
    has_agent_md: bool = Field(True, description="false: a folder with only a MEMORY.md")
    error: str | None = Field(None, description="present when AGENT.md cannot be read")


class MemoryEntries(BaseModel):
    agent: str | None
    backend: str
    core: list[Entry]
    archival: list[Entry]
    window_start: int = Field(description="index of the first archival entry injected")
    digests: list[int] = Field(
        [], description="indexes of the archival entries oryxtui wrote as digests"
    )
    warning: str | None = Field(None, description="present when the file needs attention")
    history: int | None = Field(
        None,
        description="the number of the newest change of the agent's history these entries "
        "hold: a client that follows /events applies the changes after it (`memory` events "
        "carry them) instead of reading the entries again",
    )
    window_chars: int | None = Field(
        None,
        description="the most characters of archival entries the memory block injects "
        "(null: it injects them all)",
    )

    @classmethod
    def of(
        cls,
        snapshot: MemorySnapshot,
        warning: str | None,
        history: int | None = None,
        window_chars: int | None = None,
    ) -> MemoryEntries:
        fields: dict[str, Any] = {
            "agent": snapshot.agent,
            "backend": snapshot.backend,
            "core": entries(snapshot.core),
            "archival": entries(snapshot.archival),
            "window_start": snapshot.window_start,
            "digests": sorted(snapshot.digests),
        }
        if warning:
            fields["warning"] = warning
        if history is not None:
            fields["history"] = history
        if window_chars is not None:
            fields["window_chars"] = window_chars
        return cls.model_construct(**fields)


class RouteInfo(TypedDict):
    rank: Annotated[int, Field(description="1-based rank in this route")]
    score: Annotated[
        float | None, Field(description="the route's own score: similarity, BM25; else null")
    ]


class RecallHit(Entry, total=False):
    replaced: Annotated[
        dict[str, Any],
        Field(description="a version no longer true (as_of, include_replaced): when and by what"),
    ]
    score: Annotated[float | None, Field(description="the fused score (with explain=true)")]
    routes: Annotated[
        dict[str, RouteInfo],
        Field(description="semantic, keyword, lexical, recency: the routes that ranked it"),
    ]


class IndexInfo(BaseModel):
    entries: int
    indexed: int
    pending: int
    model: str = Field(description="provider/model, as stored with every vector")
    dimensions: int | None
    meaningless: bool = Field(description="true for the mock embedder")
    problem: str | None = Field(description="the embedder's last failure, while it lasts")


class RecallResult(BaseModel):
    keyword: str
    mode: str = Field(
        "keyword",
        description="keyword (every entry containing it, oldest first), hybrid (ranked "
        "fusion, best first) or delegated (the memory server ranks)",
    )
    semantic: str = Field("off", description="used, failed, deferred or off")
    notice: str | None = Field(None, description="upstream's fallback notice, when meaning failed")
    problem: str | None = None
    index: IndexInfo | None = None
    hits: list[RecallHit]


class PromptBlockInfo(BaseModel):
    name: str = Field(description="identity, time, memory, history or tools")
    text: str
    chars: int
    tokens: int = Field(description="an estimate")


class PromptInfo(BaseModel):
    agent: str | None
    blocks: list[PromptBlockInfo]
    messages: list[dict[str, Any]] = Field(description="the chat messages sent to the model")
    tools: list[dict[str, Any]] = Field(description="the tool schemas sent to the model")
    warnings: list[str]

    @classmethod
    def of(cls, prompt: Prompt, warnings: list[str]) -> PromptInfo:
        return cls.model_validate({**prompt.to_json(), "warnings": warnings})


class MemoryAsOf(BaseModel):
    change: dict[str, Any] = Field(description="the change, as the history lists it")
    memory: MemoryEntries = Field(description="the memory right after it")
    block: str = Field(description="the memory block it injected")


class MemoryAt(BaseModel):
    time: str = Field(description="the moment asked for (ISO 8601, local)")
    change: int = Field(description="the last change made by then")
    memory: MemoryEntries = Field(description="the memory as it stood")
    block: str = Field(description="the memory block it injected then")


class DigestInfo(BaseModel):
    content: str
    method: str = Field(description="extractive, or the LLM that wrote it")
    count: int = Field(description="ordinary entries covered once it is written")
    uncovered_before: int
    covers: list[Entry]


class ServerInfo(BaseModel):
    version: str
    backend: str = Field(description="markdown, sqlite, mem0 or postgres")
    ranked: bool = Field(description="recall ranks by meaning and words (else keyword recall)")
    embeds: bool = Field(description="an embedder indexes new entries")
    stream: str = Field(description="this run's event stream: event ids start with it")
    caller: str | None = Field(description="the key's name (null: the server's token, or open)")
    scope: str = Field(description="metrics, read, write or admin")
    agents: list[str] | None = Field(description="the agent patterns the key is limited to")
    store: str | None = Field(
        None,
        description="the shared database this server's memory is in, as an opaque id: two "
        "servers with the same one show the same memory (null: this server's own)",
    )
