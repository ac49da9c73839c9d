"""The conversation endpoints: an agent's sessions, a session's turns, a search over them, and
a chat turn streamed as Server-Sent Events."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from oryxtui.agent.loop import AgentLoop, LoopEvent
from oryxtui.api.answers import FAILURES, answer
from oryxtui.api.keys import Caller, Scope, reaches
from oryxtui.api.models import Envelope
from oryxtui.api.routes import AgentName, Queue, json_body, needs
from oryxtui.api.state import caller_of, runner_of, workspace_of
from oryxtui.errors import Forbidden, NotFound, OryxError, UsageError
from oryxtui.workspace import Workspace

router = APIRouter(prefix="/api/v1", responses=FAILURES)
Runner = Annotated[AgentLoop, Depends(runner_of)]
Place = Annotated[Workspace, Depends(workspace_of)]
CHANNEL = r"^[a-z]{1,16}$"
USER = r"^[A-Za-z0-9_.@-]{1,64}$"


@router.get("/agents/{name}/sessions", response_model=Envelope[list[dict[str, Any]]])
def sessions(name: AgentName, runner: Runner) -> Response:
    """The agent's sessions, newest first, with their turn counts."""
    return answer(runner.episodes.sessions(name))


@router.get("/sessions", response_model=Envelope[list[dict[str, Any]]])
def every_session(
    runner: Runner, caller: Annotated[Caller, Depends(caller_of)], workspace: Place
) -> Response:
    """Every agent's sessions the key reaches, newest first."""
    found = runner.episodes.sessions(None, every_agent=True)
    return answer([s for s in found if reaches(caller, workspace, s["agent"])])


@router.get("/sessions/{session_id}", response_model=Envelope[list[dict[str, Any]]])
def session(
    session_id: str, runner: Runner, caller: Annotated[Caller, Depends(caller_of)], workspace: Place
) -> Response:
    """A session's finished turns, in order (404 for none, or of an agent the key does not
    reach)."""
    turns = runner.episodes.session(session_id)
    if not turns or not all(reaches(caller, workspace, turn.agent) for turn in turns):
        raise NotFound(f"No session {session_id!r} with a finished turn.")
    return answer([turn.to_json() for turn in turns])


@router.get("/sessions/{session_id}/turns/{turn}/prompt", response_model=Envelope[dict[str, Any]])
def turn_prompt(
    session_id: str,
    turn: int,
    runner: Runner,
    caller: Annotated[Caller, Depends(caller_of)],
    workspace: Place,
) -> Response:
    """Exactly what the model received in that turn, call by call (`sessions show --turn N
    --prompt`); 404 when nothing is recorded for it, or of an agent the key does not reach."""
    agent = session_id.rpartition(":")[2]
    view = runner.turn_view(session_id, turn) if reaches(caller, workspace, agent) else None
    if view is None:
        raise NotFound(f"No recorded model call for turn {turn} of {session_id!r}.")
    return answer(view)


@router.get("/agents/{name}/sessions/search", response_model=Envelope[list[dict[str, Any]]])
def search(
    name: AgentName,
    runner: Runner,
    q: Annotated[str, Query(min_length=1, max_length=2000)],
    since: str | None = None,
    until: str | None = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 10,
) -> Response:
    """The agent's turns that best match `q` (words, and meaning with an embedder)."""
    from oryxtui.agent.episodes import REPLY_CHARS

    episodes = runner.episodes
    episodes.sync(name)
    try:
        found = episodes.search(name, q, since, until, limit)
    except ValueError:
        raise UsageError("since and until are ISO dates or date-times, like 2026-12-01.") from None
    return answer([turn.to_json(REPLY_CHARS) for turn in found])


class ChatBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    message: str = Field(min_length=1, max_length=32_000)
    channel: str = Field("api", pattern=CHANNEL)
    user: str | None = Field(None, pattern=USER)


@router.post(
    "/agents/{name}/chat",
    response_class=StreamingResponse,
    dependencies=[needs(Scope.WRITE, "chatting")],
    responses={
        200: {
            "description": "the turn: Server-Sent Events, each `data:` one loop event as "
            "JSON — kind text (a piece of the reply), tool_call (tool, arguments), "
            "tool_result (success, text), warning, final (the whole reply) or error",
            "content": {
                "text/event-stream": {
                    "schema": {"type": "string"},
                    "example": 'data: {"kind": "text", "text": "Deploys are on "}\n\n'
                    'data: {"kind": "final", "text": "Deploys are on Tuesdays."}\n\n',
                }
            },
        }
    },
)
async def chat(
    name: AgentName,
    request: Request,
    runner: Runner,
    queue: Queue,
    caller: Annotated[Caller, Depends(caller_of)],
) -> StreamingResponse:
    """One turn with the agent, streamed as Server-Sent Events, each `data` a loop event:
    text (a delta), tool_call, tool_result, warning, final, error. The session is
    `channel:user:agent` (user: the body's, else the key's name)."""
    body = await json_body(request, ChatBody, '{"message": "..."}')
    user = body.user or caller.name or "api"
    if caller.name is not None and caller.scope < Scope.ADMIN and user != caller.name:
        raise Forbidden(
            f"The key {caller.name!r} chats only in its own sessions (user {caller.name!r}); "
            "another user's session needs an admin key."
        )
    loop = asyncio.get_running_loop()
    events: asyncio.Queue[LoopEvent | None] = asyncio.Queue()
    gone = threading.Event()

    def turn() -> None:
        try:
            for event in runner.run(name, body.message, body.channel, user):
                loop.call_soon_threadsafe(events.put_nowait, event)
                if gone.is_set():
                    break  # the client left: the turn stops at the next event, stored so far
        except OryxError as exc:
            loop.call_soon_threadsafe(events.put_nowait, LoopEvent("error", str(exc)))
        finally:
            loop.call_soon_threadsafe(events.put_nowait, None)

    async def stream() -> AsyncIterator[str]:
        worker = queue.run(name, turn)  # one of the agent's waiting places, as a save takes
        running = asyncio.ensure_future(worker)
        try:
            while (event := await events.get()) is not None:
                yield f"data: {json.dumps(event.to_json(), ensure_ascii=False)}\n\n"
            await running
        except OryxError as exc:
            yield f"data: {json.dumps(LoopEvent('error', str(exc)).to_json())}\n\n"
        finally:
            gone.set()

    return StreamingResponse(
        stream(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"}
    )
