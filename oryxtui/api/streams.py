"""`GET /api/v1/events`: the event log as Server-Sent Events, for as long as the key that
opened a stream still allows it. Streams are counted — per key and in all — so idle
connections cannot pile up, and each ends as soon as its key is revoked or changed, on any host
of a shared database (the feed tells the streams, which check their key again)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Annotated, Any

import anyio.to_thread
from fastapi import APIRouter, Depends, Request
from fastapi.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from oryxtui.api.answers import FAILURES
from oryxtui.api.events import EVERYONE, INTERNAL, EventLog, Logged
from oryxtui.api.keys import Caller, reaches
from oryxtui.api.keys import Scope as KeyScope
from oryxtui.api.limits import Slot
from oryxtui.api.state import caller_of, state_of
from oryxtui.memory.events import Hello, Reset, to_json

if TYPE_CHECKING:
    from oryxtui.workspace import Workspace

router = APIRouter(prefix="/api/v1", responses=FAILURES)


class CountedStream(StreamingResponse):
    """A streamed answer that gives its slot back however it ends."""

    def __init__(self, content: AsyncIterator[str], slot: Slot, **options: Any) -> None:
        super().__init__(content, **options)
        self.slot = slot

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.slot.release()


@router.get(
    "/events",
    response_class=StreamingResponse,
    responses={
        200: {
            "description": "the stream: one Server-Sent Event per change, `id:` (for "
            "Last-Event-ID) and `data:` one JSON object whose `kind` says what it is — "
            "memory (with the change: n, op, actor, time, before, after), agents, session, "
            "index, keys, hello, reset, store",
            "content": {
                "text/event-stream": {
                    "schema": {"type": "string"},
                    "example": 'id: 7\ndata: {"kind": "memory", "agent": "ops", '
                    '"change": {"n": 12, "op": "save", "actor": "cli"}}\n\n',
                }
            },
        }
    },
)
async def events(
    request: Request,
    caller: Annotated[Caller, Depends(caller_of)],
    since: str | None = None,
) -> StreamingResponse:
    """What changes, as Server-Sent Events, each `data` a JSON object with its `kind`:
    `memory` (with `change`: n, op, actor, … where the history has it — with its entries,
    `before` and `after`, as the history shows them, up to 64 KB — and `counts` of core and
    archival entries after the last of a batch: a client holding the entries of
    `/memory/entries` and its `history` number applies the changes after it instead of
    reading the entries again), `agents`, `session`,
    `index`, `hello` (the first event of a new connection) and `reset` (reload everything:
    what happened since the id you sent is not held), and `store` (`state`: "down" when the
    shared database this server reads went out of reach, "up" when it is back; a first event
    says `"store": "down"` while it is out). Send the last id you saw as
    `Last-Event-ID` (or `since`) to resume with nothing missed. A comment line every
    `[api] heartbeat_seconds` keeps proxies from closing a quiet stream. Only the agents
    the key reaches are told. A stream ends when its key is revoked or changed; a key may
    hold `[api] streams_per_key` streams at once (429 past that)."""
    caller.require(KeyScope.READ, "following changes")
    state = state_of(request)
    slot, log, workspace = state.streams.take(caller.actor), state.events, state.workspace
    authorization = getattr(request.state, "authorization", None)
    heartbeat = state.settings.api.heartbeat_seconds
    asked = request.headers.get("last-event-id") or since
    start = log.position(asked)
    told = _told(request, caller, log, workspace, authorization, heartbeat, asked, start)
    return CountedStream(
        told,
        slot,
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


async def _told(
    request: Request,
    caller: Caller,
    log: EventLog,
    workspace: Workspace,
    authorization: str | None,
    heartbeat: float,
    asked: str | None,
    start: int | None,
) -> AsyncIterator[str]:
    """The stream's lines: from where the client was (or a hello/reset), every event the
    caller may see, heartbeats while quiet; it ends when the caller's key no longer allows it
    or the client went away."""
    auth = state_of(request).auth

    async def still_allowed() -> bool:
        return await anyio.to_thread.run_sync(auth.still, authorization, caller)

    n = log.last if start is None else start
    yield "retry: 1000\n\n"
    if start is None:  # a new client, or one that cannot resume: from here on
        down = log.store_down
        first = Reset(store_down=down) if asked else Hello(store_down=down)
        yield sse(log.id_of(n), to_json(first) | {"stream": log.stream})
    while True:
        told = log.after(n)
        if told is None:  # the client fell further behind than the log holds
            n = log.last
            yield sse(log.id_of(n), to_json(Reset()) | {"stream": log.stream})
            continue
        check = False
        for event in told:
            n = event.n
            if event.kind in INTERNAL:
                check = True
            elif event.kind in EVERYONE or reaches(caller, workspace, event.agent):
                yield told_as_sse(log.id_of(n), event)
        if check and not await still_allowed():
            return  # revoked or changed: the client reconnects and is told why
        if not await log.wait(n, heartbeat):
            if await request.is_disconnected() or not await still_allowed():
                return
            yield ": heartbeat\n\n"


def sse(event_id: str, data: dict[str, Any]) -> str:
    """One event: its id and its JSON on one line (JSON never holds a raw line break)."""
    return f"id: {event_id}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def told_as_sse(event_id: str, event: Logged) -> str:
    return f"id: {event_id}\ndata: {event.json}\n\n"
