"""The REST endpoints. The services live on `app.state` and reach each route through a
dependency, so a test can hand the app others; an unknown agent is a 404 before a route runs."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any, TypeVar

import anyio.to_thread
from fastapi import APIRouter, Depends, Path, Query, Request, Response
from pydantic import BaseModel, ValidationError

from oryxtui import notices
from oryxtui.agent.loop import AgentLoop
from oryxtui.agent.sessions import os_user, session_id_for
from oryxtui.api.answers import FAILURES, answer
from oryxtui.api.keys import OPEN, Caller, Scope, reaches
from oryxtui.api.models import (
    AgentInfo,
    Change,
    ChangeBody,
    CheckedEntry,
    DigestBody,
    DigestInfo,
    Envelope,
    IndexInfo,
    MemoryAsOf,
    MemoryEntries,
    PromptInfo,
    RecallResult,
    ReviewBody,
    SaveBody,
    SavedEntry,
    saved_entry,
)
from oryxtui.api.operations import done, operation, reviewing, searching
from oryxtui.api.state import (
    caller_of,
    costly_of,
    memory_of,
    place_of,
    queue_of,
    runner_of,
    scrubber_of,
    settings_of,
    workspace_of,
)
from oryxtui.api.waiting import AgentQueue, CallersReads
from oryxtui.config import Settings
from oryxtui.errors import NotFound, OryxError, UsageError
from oryxtui.memory import MemoryService
from oryxtui.moments import moment_of
from oryxtui.places import Here
from oryxtui.workspace import GLOBAL_AGENT, Workspace


def all_agents(workspace: Workspace, memory: MemoryService, caller: Caller = OPEN) -> list[str]:
    """The workspace's agent folders, and the agents a shared database has memory of (those
    the caller's key reaches)."""
    found = {*workspace.list_agents(), *memory.stored_agents()}
    return sorted(agent for agent in found if reaches(caller, workspace, agent))


def known_agent(
    name: Annotated[
        str, Path(description=f"an agent folder's name, or {GLOBAL_AGENT} for the global memory")
    ],
    workspace: Annotated[Workspace, Depends(workspace_of)],
    memory: Annotated[MemoryService, Depends(memory_of)],
    caller: Annotated[Caller, Depends(caller_of)],
) -> str | None:
    """The agent a path names (None: the global memory), once the caller may see it."""
    agent = None if name == GLOBAL_AGENT else name
    # A key limited to some agents learns nothing about the others, not even whether they are.
    if not reaches(caller, workspace, agent):
        caller.refuse_reach(agent)
    listed = agent is None or agent in workspace.list_agents()
    if not listed and agent not in memory.stored_agents():
        raise NotFound(f"No agent named {name!r} in this workspace.")
    return agent


def needs(scope: Scope, doing: str) -> Any:
    """A dependency refusing (403) a caller whose key's scope is below `scope`."""

    def check(caller: Annotated[Caller, Depends(caller_of)]) -> None:
        caller.require(scope, doing)

    return Depends(check)


def costly_for(request: Request, caller: Annotated[Caller, Depends(caller_of)]) -> CallersReads:
    """The costly reads charged to the caller: its key (the server's token: one budget)."""
    spender = "the server's token" if caller.name is None else f"key {caller.name!r}"
    return CallersReads(costly_of(request), spender)


AgentName = Annotated[str | None, Depends(known_agent)]
Writes = [needs(Scope.WRITE, "changing memory")]
Memory = Annotated[MemoryService, Depends(memory_of)]
Queue = Annotated[AgentQueue, Depends(queue_of)]
Costly = Annotated[CallersReads, Depends(costly_for)]
Scrub = Annotated[Callable[[str], str], Depends(scrubber_of)]

router = APIRouter(prefix="/api/v1/agents", responses=FAILURES)


@router.get("", response_model=Envelope[list[AgentInfo]])
def list_agents(
    workspace: Annotated[Workspace, Depends(workspace_of)],
    settings: Annotated[Settings, Depends(settings_of)],
    memory: Annotated[MemoryService, Depends(memory_of)],
    caller: Annotated[Caller, Depends(caller_of)],
    scrub: Scrub,
) -> Response:
    """Every agent folder, with what its AGENT.md says, and every agent a shared database has
    memory of (`has_agent_md` false where this host has no AGENT.md for it)."""
    agents = []
    for name in all_agents(workspace, memory, caller):
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
    """Every entry, where the injected archival window starts, and the newest change they
    hold (a client following /events applies later ones to them)."""
    with contextlib.suppress(OryxError):  # a read-only workspace: shown as it is
        memory.reconcile(name)  # an outside edit is recorded before it is shown
    newest = memory.newest_change(name)
    snapshot = memory.snapshot(name)
    warning = scrub(snapshot.warning) if snapshot.warning else None
    # Only what the history says the entries hold: a change recorded meanwhile leaves it open.
    history = newest if newest is not None and newest == memory.newest_change(name) else None
    windowed = memory.store.windowed and snapshot.partial is None
    window_chars = memory.archival_max_chars if windowed else None
    return answer(MemoryEntries.of(snapshot, warning, history, window_chars))


@router.post(
    "/{name}/memory",
    response_model=Envelope[CheckedEntry],
    dependencies=Writes,
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": SaveBody.model_json_schema()}},
        }
    },
)
async def save_entry(name: AgentName, memory: Memory, queue: Queue, request: Request) -> Response:
    """Save one entry (the body: {"content": "...", "scope": "archival"}); `may_update` names
    the entries it probably replaces, `related` up to 5 most likely about the same thing (held
    ones included), `held` says it waits for a person's review."""
    body = await json_body(request, SaveBody, '{"content": "...", "scope": "archival"}')
    # A save may wait for another writer's lock: off the event loop, so the other requests
    # are answered meanwhile.
    with operation("create_memory", name, scope=body.scope):
        saved = await queue.run(name, memory.save_checked, name, body.content, body.scope, True)
        told: dict[str, Any] = dict(saved_entry(saved.entry))
        told["may_update"] = saved.may_update_json()  # always: empty, nothing
        told["related"] = saved.related_json()
        if memory.holds_change(memory.by, name):
            told["held"] = True
        done(saved.entry.id, bool(told.get("held")), saved.entry.line)
    return answer(told)


@router.patch(
    "/{name}/memory/entries/{entry_id}", response_model=Envelope[SavedEntry], dependencies=Writes
)
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
    with operation("update_memory", name, id=entry_id):
        entry = await queue.run(name, memory.change, name, entry_id, body.content, body.scope)
        done(entry.id, False, entry.line)
    return answer(saved_entry(entry))


@router.delete(
    "/{name}/memory/entries/{entry_id}", response_model=Envelope[SavedEntry], dependencies=Writes
)
async def delete_entry(name: AgentName, entry_id: str, memory: Memory, queue: Queue) -> Response:
    """Remove an entry; the answer is the entry as it was. 409 when it changed since read."""
    with operation("delete_memory", name, id=entry_id):
        entry = await queue.run(name, memory.delete, name, entry_id)
        done(entry.id, False)
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
    "/{name}/memory/history/{change}/bring-back",
    response_model=Envelope[list[SavedEntry]],
    dependencies=Writes,
)
async def bring_back(name: AgentName, change: int, memory: Memory, queue: Queue) -> Response:
    """Write again what change `change` removed or edited away, with their times (none that is
    still there); the entries written. 400 for a change the history does not hold."""
    brought = await queue.run(name, memory.bring_back, name, change)
    return answer([saved_entry(entry) for entry in brought])


@router.get("/{name}/memory/origins", response_model=Envelope[dict[str, dict[str, Any]]])
async def origins(
    name: AgentName,
    queue: Queue,
    place: Annotated[Here, Depends(place_of)],
) -> Response:
    """Where each entry came from, by its id: `by` (dashboard, cli, api or api:KEY, agent,
    outside, unknown), the change, and for an agent's save its session and turn (`via:
    upstream` for a line upstream's `save_memory` wrote)."""
    return answer(await queue.run(name, place.origins, name))


@router.get("/{name}/memory/review", response_model=Envelope[list[dict[str, Any]]])
async def awaiting_review(
    name: AgentName,
    memory: Memory,
    queue: Queue,
    runner: Annotated[AgentLoop, Depends(runner_of)],
    held: bool = False,
) -> Response:
    """What agents and outside writers wrote that awaits approval (held saves too), newest
    first, each with the turn that wrote it where known; `held=true`: only the held saves
    (quick: no replay of the memory)."""
    from oryxtui.agent.provenance import awaiting_json

    if held:
        waiting = await queue.run(name, memory.held, name)
        return answer([item.to_json(name) for item in waiting])
    return answer(await queue.run(name, awaiting_json, memory, runner.episodes, name))


@router.post("/{name}/memory/review", response_model=Envelope[dict[str, Any]], dependencies=Writes)
async def act_on_review(
    name: AgentName, memory: Memory, queue: Queue, request: Request
) -> Response:
    """`{"approve": [ids]}` (or `"all"`), `{"reject": [ids]}`: the entries approved and
    rejected. A held save approved is written into the memory, as its agent's save; a held
    change that could not be made once others were (two replaces of one entry) is listed in
    `not_approved` with why, and waits on. A refusal (409) only when nothing was made."""
    body = await json_body(request, ReviewBody, '{"approve": ["<id>"]}')

    def act() -> dict[str, Any]:
        decided: dict[str, Any] = {"approved": [], "rejected": []}
        if body.reject:
            decided["rejected"] = [saved_entry(e) for e in memory.reject(name, body.reject)]
        if body.approve is not None:
            ids = None if body.approve == "all" else body.approve
            done = memory.approve(name, ids)
            decided["approved"] = [saved_entry(e) for e in done]
            decided["not_approved"] = done.not_made_json()
        return decided

    with reviewing(name, body.approve, body.reject):
        return answer(await queue.run(name, act))


@router.get("/{name}/memory/history/{change}", response_model=Envelope[MemoryAsOf])
async def as_of(name: AgentName, change: int, memory: Memory, costly: Costly) -> Response:
    """The memory right after change `change`, and the memory block it injected; 404 for a
    change from before the history knew the memory. A costly read (429 past the key's share)."""

    def read() -> tuple[Any, Any]:
        return memory.change_record(name, change), memory.as_of(name, change)

    record, then = await costly.run("the memory as of a change", read)
    if then is None:
        raise NotFound(f"The history does not hold the memory as of change {change}.")
    snapshot, block = then
    entries = MemoryEntries.of(snapshot, None)
    return answer(
        MemoryAsOf.model_construct(change=record.to_json(name), memory=entries, block=block)
    )


@router.post(
    "/{name}/memory/digest",
    response_model=Envelope[DigestInfo | SavedEntry | None],
    dependencies=[needs(Scope.ADMIN, "writing a digest")],
)
async def digest(
    name: AgentName,
    memory: Memory,
    queue: Queue,
    request: Request,
    workspace: Annotated[Workspace, Depends(workspace_of)],
    settings: Annotated[Settings, Depends(settings_of)],
) -> Response:
    """Plan the next digest (`{"dry_run": true}`), write it, or write the `content` a plan
    gave (as the dashboard does after showing it); data null when nothing is uncovered."""
    from oryxtui.agent.consolidation import summariser_for
    from oryxtui.memory.format import Scope as Section

    body = await json_body(request, DigestBody, '{"dry_run": true}')
    if body.content is not None:  # the entry written, as a save answers
        entry = await queue.run(name, memory.save, name, body.content, Section.ARCHIVAL, "digest")
        return answer(saved_entry(entry))

    def plan() -> Any:
        summarise, method, warnings = summariser_for(workspace, settings, name)
        for warning in warnings:
            notices.notice(warning)
        return memory.consolidate(name, body.dry_run, summarise, method)

    planned = await queue.run(name, plan)
    return answer(None if planned is None else planned.to_json())


@router.post(
    "/{name}/memory/duplicates/remove",
    response_model=Envelope[list[SavedEntry]],
    dependencies=Writes,
)
async def remove_duplicates(name: AgentName, memory: Memory, queue: Queue) -> Response:
    """Remove every entry that repeats an earlier one of its section; the removed ones."""
    removed = await queue.run(name, memory.remove_duplicates, name)
    return answer([saved_entry(entry) for entry in removed])


@router.get("/{name}/memory/index", response_model=Envelope[IndexInfo | None])
def index_status(name: AgentName, memory: Memory) -> Response:
    """How much of the agent's archival memory has vectors (null without an embedder)."""
    engine = memory.engine
    status = engine.status(name) if engine is not None else None
    return answer(None if status is None else status.to_json())


@router.get("/{name}/memory/recall", response_model=Envelope[RecallResult])
async def recall(
    name: AgentName,
    keyword: str,
    memory: Memory,
    costly: Costly,
    explain: bool = False,
    as_of: str | None = None,
    include_replaced: bool = False,
) -> Response:
    """Archival entries for `keyword`: ranked (hybrid recall; `explain=true` adds each hit's
    fused score and route ranks), or every entry holding it, oldest first (keyword recall).
    `as_of` (a time) searches the memory as it stood then, `include_replaced=true` the
    versions replaced since too: ranked by words and time, each hit no longer true saying
    what replaced it."""
    with searching(name, keyword, memory) as told:
        if as_of is not None or include_replaced:
            moment = None if as_of is None else moment_of(as_of)
            past = memory.recall_past
            doing = "the past searched"
            found = told(await costly.run(doing, past, name, keyword, moment, include_replaced))
        else:
            found = told(await anyio.to_thread.run_sync(memory.recall, name, keyword))
    data: dict[str, Any] = found.to_json(explain)
    if data["index"] is not None:
        data["index"] = IndexInfo.model_construct(**data["index"])
    return answer(RecallResult.model_construct(**data))


@router.get("/{name}/prompt", response_model=Envelope[PromptInfo])
def prompt(
    name: AgentName,
    runner: Annotated[AgentLoop, Depends(runner_of)],
    scrub: Scrub,
    channel: Annotated[str, Query(pattern=r"^[a-z]{1,16}$")] = "cli",
    user: Annotated[str | None, Query(pattern=r"^[A-Za-z0-9_.@-]{1,64}$")] = None,
) -> Response:
    """What the model would receive now, block by block, in the session of `channel` and
    `user` (default: the cli's, of the server's user)."""
    # A GET never asks the model for anything (a page on another site can send one).
    built = runner.prompt(name, session_id_for(channel, user or os_user(), name), ask=False)
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
