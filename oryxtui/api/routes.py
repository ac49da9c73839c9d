"""The REST endpoints. The services live on `app.state` and reach each route through a
dependency, so a test can hand the app others; an unknown agent is a 404 before a route runs."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Depends, Path, Request, Response
from pydantic import BaseModel, ValidationError

from oryxtui.agent.loop import AgentLoop
from oryxtui.agent.sessions import os_user, session_id_for
from oryxtui.api.models import (
    AgentInfo,
    Change,
    ChangeBody,
    Envelope,
    IndexInfo,
    MemoryEntries,
    PromptInfo,
    RecallResult,
    SaveBody,
    SavedEntry,
    envelope,
    saved_entry,
)
from oryxtui.api.waiting import AgentQueue
from oryxtui.config import Settings
from oryxtui.errors import NotFound, OryxError, UsageError
from oryxtui.memory import MemoryService
from oryxtui.notices import collected
from oryxtui.workspace import Workspace


def workspace_of(request: Request) -> Workspace:
    return request.app.state.workspace


def settings_of(request: Request) -> Settings:
    return request.app.state.settings


def memory_of(request: Request) -> MemoryService:
    return request.app.state.memory


def runner_of(request: Request) -> AgentLoop:
    return request.app.state.runner


def queue_of(request: Request) -> AgentQueue:
    return request.app.state.queue


def scrubber_of(request: Request) -> Callable[[str], str]:
    """Takes paths out of a message: the workspace as `.oryxos`, anything else as `<path>`."""
    return request.app.state.scrub


def all_agents(workspace: Workspace, memory: MemoryService) -> list[str]:
    """The workspace's agent folders, and the agents a shared database has memory of."""
    return sorted({*workspace.list_agents(), *memory.stored_agents()})


def known_agent(
    name: Annotated[str, Path(description="an agent folder's name")],
    workspace: Annotated[Workspace, Depends(workspace_of)],
    memory: Annotated[MemoryService, Depends(memory_of)],
) -> str:
    if name not in workspace.list_agents() and name not in memory.stored_agents():
        raise NotFound(f"No agent named {name!r} in this workspace.")
    return name


AgentName = Annotated[str, Depends(known_agent)]
Memory = Annotated[MemoryService, Depends(memory_of)]
Queue = Annotated[AgentQueue, Depends(queue_of)]
Scrub = Annotated[Callable[[str], str], Depends(scrubber_of)]

# What goes wrong comes back in the envelope too, with `data` null and the status as `code`.
_FAILURES: dict[int | str, dict[str, Any]] = {
    status: {"model": Envelope[None], "description": description}
    for status, description in (
        (400, "a bad request: the message says what to send"),
        (401, "a missing or wrong token"),
        (404, "no such agent"),
        (409, "refused given the file's state (a symbolic link, undecodable bytes, a lock)"),
        (503, "a service memory depends on is unavailable"),
    )
}
router = APIRouter(prefix="/api/v1/agents", responses=_FAILURES)


@router.get("", response_model=Envelope[list[AgentInfo]])
def list_agents(
    workspace: Annotated[Workspace, Depends(workspace_of)],
    settings: Annotated[Settings, Depends(settings_of)],
    memory: Annotated[MemoryService, Depends(memory_of)],
    scrub: Scrub,
) -> Response:
    """Every agent folder, with what its AGENT.md says, and every agent a shared database has
    memory of (`has_agent_md` false where this host has no AGENT.md for it)."""
    agents = []
    for name in all_agents(workspace, memory):
        row: dict[str, Any] = {
            "name": name,
            "description": "",
            "provider": None,
            "model": None,
            "tools": [],
            "has_agent_md": True,
        }
        try:
            definition = workspace.read_agent(name)
        except OryxError as exc:
            row["error"] = scrub(str(exc))
        else:
            if definition is None:  # a folder with only a MEMORY.md
                row["has_agent_md"] = False
            else:
                provider = definition.provider.name or settings.llm.provider
                row.update(
                    description=definition.description,
                    provider=provider or ("openai" if settings.llm.base_url else "offline"),
                    model=definition.provider.model or settings.llm.model,
                    tools=definition.tools,
                )
        agents.append(AgentInfo.model_construct(**row))
    return answer(agents)


@router.get("/{name}/memory", response_model=Envelope[str])
def memory_block(name: AgentName, memory: Memory) -> Response:
    """The memory block exactly as the agent's prompt holds it."""
    return answer(memory.build_context(name))


@router.get("/{name}/memory/entries", response_model=Envelope[MemoryEntries])
def memory_entries(name: AgentName, memory: Memory, scrub: Scrub) -> Response:
    """Every entry, and where the injected archival window starts."""
    snapshot = memory.snapshot(name)
    warning = scrub(snapshot.warning) if snapshot.warning else None
    return answer(MemoryEntries.of(snapshot, warning))


@router.post(
    "/{name}/memory",
    response_model=Envelope[SavedEntry],
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": SaveBody.model_json_schema()}},
        }
    },
)
async def save_entry(name: AgentName, memory: Memory, queue: Queue, request: Request) -> Response:
    """Save one entry (the body: {"content": "...", "scope": "archival"})."""
    body = await json_body(request, SaveBody, '{"content": "...", "scope": "archival"}')
    # A save may wait for another writer's lock: off the event loop, so the other requests
    # are answered meanwhile.
    entry = await queue.run(name, memory.save, name, body.content, body.scope)
    return answer(saved_entry(entry))


@router.patch("/{name}/memory/entries/{entry_id}", response_model=Envelope[SavedEntry])
async def change_entry(
    name: AgentName, entry_id: str, request: Request, memory: Memory, queue: Queue
) -> Response:
    """Edit an entry's text and/or move it to the other section (the body: {"content": "...",
    "scope": "core"}); its time is kept. 409 when the entry changed since it was read."""
    body = await json_body(request, ChangeBody, '{"content": "...", "scope": "core"}')
    if body.content is None and body.scope is None:
        raise UsageError('Nothing to change: give "content", "scope" or both.')
    # One change, checked whole before anything is written: a bad scope never leaves the
    # text edited behind a 400.
    entry = await queue.run(name, memory.change, name, entry_id, body.content, body.scope)
    return answer(saved_entry(entry))


@router.delete("/{name}/memory/entries/{entry_id}", response_model=Envelope[SavedEntry])
async def delete_entry(name: AgentName, entry_id: str, memory: Memory, queue: Queue) -> Response:
    """Remove an entry; the answer is the entry as it was. 409 when it changed since read."""
    entry = await queue.run(name, memory.delete, name, entry_id)
    return answer(saved_entry(entry))


@router.get("/{name}/memory/history", response_model=Envelope[list[Change]])
async def history(
    name: AgentName, memory: Memory, queue: Queue, since: datetime | None = None
) -> Response:
    """Every change to the memory, newest first (`since`: made then or later), what changed and
    by what; changes another program made are found and recorded first (under the memory's
    lock, so this waits as a save does)."""
    records = await queue.run(name, memory.history, name, since)
    return answer([record.to_json(name) for record in records])


@router.post(
    "/{name}/memory/history/{change}/bring-back", response_model=Envelope[list[SavedEntry]]
)
async def bring_back(name: AgentName, change: int, memory: Memory, queue: Queue) -> Response:
    """Write again what change `change` removed or edited away, with their times (none that is
    still there); the entries written. 400 for a change the history does not hold."""
    brought = await queue.run(name, memory.bring_back, name, change)
    return answer([saved_entry(entry) for entry in brought])


@router.get("/{name}/memory/recall", response_model=Envelope[RecallResult])
def recall(name: AgentName, keyword: str, memory: Memory, explain: bool = False) -> Response:
    """Archival entries for `keyword`: ranked (hybrid recall; `explain=true` adds each hit's
    fused score and route ranks), or every entry holding it, oldest first (keyword recall)."""
    data: dict[str, Any] = memory.recall(name, keyword).to_json(explain)
    if data["index"] is not None:
        data["index"] = IndexInfo.model_construct(**data["index"])
    return answer(RecallResult.model_construct(**data))


@router.get("/{name}/prompt", response_model=Envelope[PromptInfo])
def prompt(
    name: AgentName, runner: Annotated[AgentLoop, Depends(runner_of)], scrub: Scrub
) -> Response:
    """What the model would receive now, block by block."""
    # A GET never asks the model for anything (a page on another site can send one).
    built = runner.prompt(name, session_id_for("cli", os_user(), name), ask=False)
    return answer(PromptInfo.of(built, [scrub(warning) for warning in built.warnings]))


Body = TypeVar("Body", bound=BaseModel)


async def json_body(request: Request, model: type[Body], example: str) -> Body:
    """The request's JSON body as `model` (the guard has capped its size and checked its
    content type), or a 400 that shows what is expected."""
    raw = await request.body()
    try:
        return model.model_validate(json.loads(raw or b"null"))
    except (ValueError, ValidationError, RecursionError):
        raise UsageError(f"The body must be JSON like {example}.") from None


def answer(data: Any) -> Response:
    """`data` in the envelope, serialised by pydantic in one pass. (Returned as a model, FastAPI
    would validate it again first: a 100,000-entry answer three times slower. The route's
    `response_model` documents it.)"""
    body = envelope(data, warnings=collected()).model_dump_json(exclude_unset=True)
    return Response(body, media_type="application/json")
