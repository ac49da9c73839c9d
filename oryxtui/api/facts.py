"""The REST endpoints of facts that change: replace an entry, what replaced what, the
suggestions a save made, and the memory as it stood at a moment."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response

from oryxtui.api.answers import answer
from oryxtui.api.models import (
    Envelope,
    MemoryAt,
    MemoryEntries,
    ReplacedVersion,
    Replacement,
    SaveBody,
    Suggestion,
    SuggestionBody,
    saved_entry,
)
from oryxtui.api.operations import done, operation
from oryxtui.api.routes import AgentName, Costly, Memory, Queue, Writes, json_body
from oryxtui.api.routes import router as memory_router
from oryxtui.moments import moment_of

router = APIRouter(prefix=memory_router.prefix, responses=memory_router.responses)


@router.post(
    "/{name}/memory/entries/{entry_id}/replace",
    response_model=Envelope[Replacement],
    dependencies=Writes,
)
async def replace_entry(
    name: AgentName, entry_id: str, request: Request, memory: Memory, queue: Queue
) -> Response:
    """Replace an entry by what is true now (the body: {"content": "..."}): the new entry is
    stamped now, at the end of its section; the old one leaves the memory and stays in the
    history, replaced. A key whose changes are reviewed proposes it (`held`). 409 when the
    entry changed since it was read."""
    body = await json_body(request, SaveBody, '{"content": "..."}')
    with operation("update_memory", name, "replace", id=entry_id):
        old, new = await queue.run(name, memory.replace, name, entry_id, body.content)
        held = memory.holds_change(memory.by, name)
        done(new.id, held, new.line)
    return answer(Replacement(replaced=saved_entry(old), entry=saved_entry(new), held=held))


@router.get("/{name}/memory/replaced", response_model=Envelope[list[ReplacedVersion]])
async def replaced(name: AgentName, memory: Memory, costly: Costly) -> Response:
    """The versions replaced and not brought back, newest first: when each stopped being true
    and what took its place (its chain followed to the current version). A costly read: 429
    past the key's share of the server's time."""
    versions = await costly.run("the versions replaced", memory.replaced_versions, name)
    return answer([version.to_json() for version in versions])


@router.get("/{name}/memory/suggestions", response_model=Envelope[list[Suggestion]])
async def suggestions(name: AgentName, memory: Memory, costly: Costly) -> Response:
    """What saves probably replace and nobody acted on (both entries still there), newest
    first."""
    found = await costly.run("the suggestions", memory.suggestions, name)
    return answer(
        [Suggestion(old=saved_entry(old), new=saved_entry(new), change=n) for old, new, n in found]
    )


@router.post(
    "/{name}/memory/suggestions", response_model=Envelope[dict[str, Any]], dependencies=Writes
)
async def act_on_suggestion(
    name: AgentName, request: Request, memory: Memory, queue: Queue
) -> Response:
    """{"old": id, "new": id, "action": "replace"}: the old entry leaves, replaced by the new
    one (already in the memory); "dismiss": both stay, and it is not suggested again."""
    body = await json_body(
        request, SuggestionBody, '{"old": "<id>", "new": "<id>", "action": "replace"}'
    )
    if body.action == "dismiss":
        await queue.run(name, memory.dismiss, name, body.old, body.new)
        return answer({"dismissed": True})
    old = await queue.run(name, memory.supersede, name, body.old, body.new)
    return answer({"replaced": saved_entry(old)})


@router.get("/{name}/memory/as-of/{moment}", response_model=Envelope[MemoryAt])
async def memory_at(name: AgentName, moment: str, memory: Memory, costly: Costly) -> Response:
    """The memory as it stood at `moment` (2026-07-01T09:30:00, or a date: the end of that
    day), from the history, and the memory block it injected then; 400 for a moment before
    the history starts. A costly read: 429 past the key's share of the server's time."""
    when = moment_of(moment)
    snapshot, block, n = await costly.run(
        "the memory as of a moment", memory.as_of_time, name, when
    )
    return answer(
        MemoryAt.model_construct(
            time=when.isoformat(timespec="seconds"),
            change=n,
            memory=MemoryEntries.of(snapshot, None),
            block=block,
        )
    )
