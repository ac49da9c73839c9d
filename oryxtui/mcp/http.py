"""MCP over streamable HTTP at `/mcp` of `oryxtui serve`: `/mcp/agents/NAME` is that agent's
memory, `/mcp` the global memory. Every request has passed the REST API's guard (Host, Origin,
body size) and its key check (a revoked key is refused at once) before it gets here; here the
key's reach is checked against the agent in the URL, then the agent's server (made on first
use, one per agent, each with its own sessions) answers. A session belongs to the agent it was
opened on: the URL fixes the agent, never a tool argument."""

from __future__ import annotations

import hashlib
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
import pydantic_core
from anyio.abc import TaskGroup, TaskStatus
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import ValidationError
from starlette.routing import Mount, Route
from starlette.types import Message, Receive, Scope, Send

from oryxtui import telemetry
from oryxtui.api.guard import refusal_body, replay
from oryxtui.api.keys import Caller, reaches
from oryxtui.api.state import ApiState, caller_of
from oryxtui.errors import Forbidden, TooManyRequests
from oryxtui.mcp.server import MemoryServer, follow
from oryxtui.mcp.sessions import SESSION_IDLE_SECONDS, Seat, SessionCount
from oryxtui.workspace import is_valid_agent_name

_PATH = re.compile(r"/mcp(?:/agents/(?P<agent>[^/]*))?/?")


def serve_mcp(api: FastAPI) -> None:
    """Add `/mcp` to an app made by `create_api`, running while the app runs."""
    endpoint = McpEndpoint(state_of_app(api))
    if endpoint.state.metrics is not None:
        endpoint.state.metrics.mcp_sessions = endpoint.sessions.open
    outer = api.router.lifespan_context

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        async with outer(app), endpoint.running():
            yield

    api.router.lifespan_context = lifespan
    api.router.routes.append(Route("/mcp", endpoint, methods=["GET", "POST", "DELETE"]))
    api.router.routes.append(Mount("/mcp", endpoint))


def state_of_app(api: FastAPI) -> ApiState:
    state = api.state.oryx
    assert isinstance(state, ApiState), "the app was not made by create_api"
    return state


class McpEndpoint:
    """The ASGI app behind `/mcp`: one MCP server per agent, made when first asked for. A
    session is bound to the credentials that opened it (another key is told it does not
    exist); a key holds at most `[mcp] sessions_per_key` sessions, and its streams (a 2025
    session's GET stream, a `subscriptions/listen`) count against `[api] streams_per_key`
    with the REST event streams; a stream ends as soon as its key is revoked or changed."""

    def __init__(self, state: ApiState) -> None:
        self.state = state
        self.sessions = SessionCount(state.settings.mcp.sessions_per_key)
        self._servers: dict[str | None, MemoryServer] = {}
        self._lock = anyio.Lock()
        self._tasks: TaskGroup | None = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """While the app runs: the agents' servers, and their subscribers told of changes."""
        async with anyio.create_task_group() as tasks:
            self._tasks = tasks
            tasks.start_soon(follow, self.state.events, lambda: list(self._servers.values()))
            try:
                yield
            finally:
                tasks.cancel_scope.cancel()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        agent, refused = self._door(request)
        if refused is not None:
            await refuse(scope, receive, send, *refused)
            return
        caller = caller_of(request)
        method = None
        if request.method == "POST":  # (the guard has read the body already: it is at hand)
            body = await request.body()
            try:
                method = rpc_method(body)
            except Malformed as problem:
                await refuse(scope, receive, send, 400, problem.sentence, problem.code)
                return
            told = None if method is None else telemetry.token(method)
            telemetry.note({"mcp.method.name": told})  # on the request's span
            receive = replay(body, receive)
        authorization = request.headers.get("authorization")
        # The SDK binds a session to the principal that opened it: here, the credentials.
        scope["user"] = AuthenticatedUser(
            AccessToken(token="", client_id=principal(authorization), scopes=[])
        )
        session = request.headers.get(MCP_SESSION_ID_HEADER)
        streaming = request.method == "GET" or method == "subscriptions/listen"
        seat, slot = None, None
        try:
            slot = self.state.streams.take(caller.actor) if streaming else None
            if request.method == "POST" and session is None and method == "initialize":
                seat = self.sessions.admit(caller.actor)  # counted now, not at the answer
        except TooManyRequests as exc:
            if slot is not None:
                slot.release()
            await refuse(scope, receive, send, 429, str(exc))
            return
        counted = self._counted(send, session, seat, request.method)
        try:
            server = await self._server(agent)
            if streaming:  # ends when its key no longer allows it
                await self._while_allowed(server, scope, receive, counted, authorization, caller)
            else:
                await server.session_manager.handle_request(scope, receive, counted)
        finally:
            if slot is not None:
                slot.release()
            if seat is not None:
                seat.taken(None)  # no answer opened a session: its seat is free again

    def _door(self, request: Request) -> tuple[str | None, tuple[int, str] | None]:
        """The agent the path names (None: the global memory), and why the request is refused
        before MCP reads it (status, sentence), if it is: the path names no endpoint or agent
        here, or the key does not reach the agent."""
        found = _PATH.search(request.url.path)
        if request.scope["type"] != "http" or found is None or found.end() != len(request.url.path):
            return None, (404, "No such MCP endpoint: use /mcp/agents/NAME.")
        agent = found.group("agent")
        if agent is not None and not is_valid_agent_name(agent):
            return agent, (404, f"{agent[:64]!r} is not an agent name.")
        caller = caller_of(request)
        if not reaches(caller, self.state.workspace, agent):  # a linked folder: its agent too
            try:
                caller.refuse_reach(agent)
            except Forbidden as exc:
                return agent, (403, str(exc))
        if agent is not None and agent not in self.state.place.known_agents():
            unknown = (
                f"There is no agent {agent!r} on this server; `oryxtui agents list` there "
                "lists them."
            )
            return agent, (404, unknown)
        return agent, None

    def _counted(self, send: Send, session: str | None, seat: Seat | None, method: str) -> Send:
        """`send`, noting the session an answer opens (in the seat taken for it), uses,
        deletes or finds gone."""
        if session is not None:
            self.sessions.used(session)

        async def counting(message: Message) -> None:
            if message["type"] == "http.response.start":
                status = int(message["status"])
                if seat is not None:
                    opened = dict(message.get("headers") or []).get(MCP_SESSION_ID_HEADER.encode())
                    seat.taken(opened.decode("latin-1") if opened and status < 400 else None)
                elif session is not None and (
                    status == 404 or (method == "DELETE" and status < 400)
                ):
                    self.sessions.ended(session)
            await send(message)

        return counting

    async def _while_allowed(
        self,
        server: MemoryServer,
        scope: Scope,
        receive: Receive,
        send: Send,
        authorization: str | None,
        caller: Caller,
    ) -> None:
        """A stream served until it ends or its key is revoked or changed (told by the
        feed's `keys` event, or found at a heartbeat): then it is cut, as the REST stream is."""
        log, auth = self.state.events, self.state.auth
        heartbeat = self.state.settings.api.heartbeat_seconds

        async def watch(cut: anyio.CancelScope) -> None:
            n = log.last
            while True:
                told = await log.wait(n, heartbeat)
                news = log.after(n)
                n = log.last
                keys = news is None or any(event.kind == "keys" for event in news)
                if (keys or not told) and not await anyio.to_thread.run_sync(
                    auth.still, authorization, caller
                ):
                    cut.cancel()
                    return

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(watch, tasks.cancel_scope)
            await server.session_manager.handle_request(scope, receive, send)
            tasks.cancel_scope.cancel()

    async def _server(self, agent: str | None) -> MemoryServer:
        async with self._lock:
            server = self._servers.get(agent)
            if server is None:
                assert self._tasks is not None, "the app's lifespan is not running"
                server = MemoryServer(self.state.place, agent)
                server.still = self.state.auth.still  # a revoked key hears nothing more
                # The guard in front of the whole app checks Host and Origin already.
                server.streamable_http_app(
                    transport_security=TransportSecuritySettings(
                        enable_dns_rebinding_protection=False
                    ),
                    session_idle_timeout=SESSION_IDLE_SECONDS,
                )
                await self._tasks.start(_host, server)
                self._servers[agent] = server
            return server


def principal(authorization: str | None) -> str:
    """Who a session belongs to: a digest of the credentials it was opened with (another key,
    even one of the same name made again, is another principal)."""
    return hashlib.sha256((authorization or "").encode("utf-8", "replace")).hexdigest()[:32]


async def _host(server: MemoryServer, *, task_status: TaskStatus[None]) -> None:
    async with server.session_manager.run():
        task_status.started()
        await anyio.sleep_forever()


async def refuse(
    scope: Scope, receive: Receive, send: Send, status: int, message: str, code: int = -32600
) -> None:
    """A request refused before MCP reads it: a JSON-RPC error of one sentence."""
    body = refusal_body("/mcp", status, message, code)
    await JSONResponse(body, status_code=status)(scope, receive, send)


class Malformed(ValueError):
    """A body that is not one JSON-RPC message: its JSON-RPC error code and one sentence."""

    def __init__(self, code: int, sentence: str) -> None:
        super().__init__(sentence)
        self.code, self.sentence = code, sentence


def rpc_method(body: bytes) -> str | None:
    """The method of a body that is one JSON-RPC message, read as the SDK reads it (None: a
    response or a notification without one); Malformed otherwise, in one sentence (the SDK's
    own refusal would be pydantic's whole report)."""
    try:
        message = pydantic_core.from_json(body)
    except ValueError:
        raise Malformed(
            types.PARSE_ERROR, "The body is not JSON: send one JSON-RPC 2.0 message."
        ) from None
    try:
        types.jsonrpc_message_adapter.validate_python(message, by_name=False)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"][1:]) or "the message"
        raise Malformed(
            types.INVALID_REQUEST,
            f"The body is not a JSON-RPC 2.0 message ({where}: {first['msg']}); send a request "
            "with jsonrpc, id, method and params.",
        ) from None
    method = message.get("method") if isinstance(message, dict) else None
    return method if isinstance(method, str) else None
