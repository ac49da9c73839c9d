"""MCP over streamable HTTP at `/mcp` of `oryxtui serve`: `/mcp/agents/NAME` is that agent's
memory, `/mcp` the global memory. Every request has passed the REST API's guard (Host, Origin,
body size) and its key check (a revoked key is refused at once) before it gets here; here the
key's reach is checked against the agent in the URL, then the agent's server (made on first
use, one per agent, each with its own sessions) answers. A session belongs to the agent it was
opened on: the URL fixes the agent, never a tool argument."""

from __future__ import annotations

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
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import ValidationError
from starlette.routing import Mount, Route
from starlette.types import Receive, Scope, Send

from oryxtui.api.guard import refusal_body, replay
from oryxtui.api.state import ApiState, caller_of
from oryxtui.errors import Forbidden
from oryxtui.mcp.server import MemoryServer, follow
from oryxtui.workspace import is_valid_agent_name

_PATH = re.compile(r"/mcp(?:/agents/(?P<agent>[^/]*))?/?")


def serve_mcp(api: FastAPI) -> None:
    """Add `/mcp` to an app made by `create_api`, running while the app runs."""
    endpoint = McpEndpoint(state_of_app(api))
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
    """The ASGI app behind `/mcp`: one MCP server per agent, made when first asked for."""

    def __init__(self, state: ApiState) -> None:
        self.state = state
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
        found = _PATH.search(request.url.path)
        if scope["type"] != "http" or found is None or found.end() != len(request.url.path):
            await refuse(scope, receive, send, 404, "No such MCP endpoint: use /mcp/agents/NAME.")
            return
        agent = found.group("agent")
        if agent is not None and not is_valid_agent_name(agent):
            await refuse(scope, receive, send, 404, f"{agent[:64]!r} is not an agent name.")
            return
        caller = caller_of(request)
        if not caller.reaches(agent):
            try:
                caller.refuse_reach(agent)
            except Forbidden as exc:
                await refuse(scope, receive, send, 403, str(exc))
            return
        if agent is not None and agent not in self.state.place.known_agents():
            await refuse(
                scope,
                receive,
                send,
                404,
                f"There is no agent {agent!r} on this server; `oryxtui agents list` there lists "
                "them.",
            )
            return
        if request.method == "POST":  # (the guard has read the body already: it is at hand)
            problem = malformed(await request.body())
            if problem is not None:
                await refuse(scope, receive, send, 400, problem[1], problem[0])
                return
            receive = replay(await request.body(), receive)
        server = await self._server(agent)
        await server.session_manager.handle_request(scope, receive, send)

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
                    )
                )
                await self._tasks.start(_host, server)
                self._servers[agent] = server
            return server


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


def malformed(body: bytes) -> tuple[int, str] | None:
    """(JSON-RPC error code, one sentence) for a body that is not one JSON-RPC message, as
    the SDK reads them (its own refusal would be pydantic's whole report)."""
    try:
        message = pydantic_core.from_json(body)
    except ValueError:
        return types.PARSE_ERROR, "The body is not JSON: send one JSON-RPC 2.0 message."
    try:
        types.jsonrpc_message_adapter.validate_python(message, by_name=False)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"][1:]) or "the message"
        return types.INVALID_REQUEST, (
            f"The body is not a JSON-RPC 2.0 message ({where}: {first['msg']}); send a request "
            "with jsonrpc, id, method and params."
        )
    return None
