"""One agent's memory as an MCP server (the SDK's `MCPServer`): the tools of `tools`, every
call through the agent loop's own executor (validated, one sentence when refused, audited in
`tool_invocations`, recorded in the history as `mcp:<client>`); the memory block and its core
section as resources, with subscriptions of both kinds — `resources/subscribe` (clients of the
2025 protocol) and `subscriptions/listen` (2026-07-28) — told when the memory changes, by
whatever writer. The agent is the server's, fixed when it is made: never a tool argument."""

from __future__ import annotations

import contextlib
import json
import logging
import uuid
import weakref
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from functools import cached_property
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ResourceUpdated
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from oryxtui import __version__, telemetry
from oryxtui.agent.messages import ToolCall
from oryxtui.agent.sessions import SessionStore
from oryxtui.agent.tools import ToolExecutor
from oryxtui.api.events import EventLog
from oryxtui.api.feed import EventFeed
from oryxtui.api.keys import OPEN, Caller
from oryxtui.api.keys import Scope as KeyScope
from oryxtui.errors import OryxError
from oryxtui.mcp.tools import EDITS, current_caller, mcp_tools
from oryxtui.memory.events import MemoryChange, Reset, from_json
from oryxtui.memory.format import Scope
from oryxtui.memory.history import MARKS, Actor, mcp_client
from oryxtui.places import Here
from oryxtui.workspace import GLOBAL_AGENT

MAX_ARGUMENT_CHARS = 256 * 1024  # a call's arguments as JSON; an entry is far shorter
INSTRUCTIONS = (
    "This server is the long-term memory of one agent, shared with the agent's other tools and "
    "with the people who look after it. Call recall_memory before you answer from assumptions "
    "or save something again; call save_memory for a durable fact a later session should know "
    "(one self-contained line). show_memory gives the memory block as the agent's prompt "
    "receives it. A person may review what you save before it counts."
)


def memory_uri(agent: str | None) -> str:
    return f"oryx://agents/{agent or GLOBAL_AGENT}/memory"


def core_uri(agent: str | None) -> str:
    return f"oryx://agents/{agent or GLOBAL_AGENT}/memory/core"


def one_sentence(message: str) -> str:
    """A message as a client's model reads it: its first line, ending as a sentence."""
    line = message.strip().splitlines()[0] if message.strip() else "The call failed."
    return line if line.endswith((".", "?", "!")) else line + "."


class MemoryServer(MCPServer[Any]):
    """The MCP server of `agent`'s memory at a workspace (`place`)."""

    def __init__(self, place: Here, agent: str | None) -> None:
        # The SDK configures the root logger (rich, with colours) unless it is configured: plain
        # lines on standard error, as the rest of oryxtui's servers write them.
        logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
        self.bus = InMemorySubscriptionBus()
        name = agent or GLOBAL_AGENT
        super().__init__(
            "oryxtui",
            title=f"oryxtui memory of {name}",
            instructions=INSTRUCTIONS,
            version=__version__,
            log_level="WARNING",
            subscriptions=self.bus,
        )
        self.place = place
        self.agent = agent
        memory = place.memory
        self.tools = mcp_tools(memory, place.episodes, place.settings.mcp.edits)
        self.executor = ToolExecutor(self.tools, self._audit)
        self.uris = {memory_uri(agent): False, core_uri(agent): True}  # uri → core only
        # The connections of clients of the 2025 protocol, by the resource they subscribed to
        # (held weakly: a client that went away is forgotten) …
        self._watchers: dict[str, weakref.WeakSet[Any]] = {
            uri: weakref.WeakSet() for uri in self.uris
        }
        # … and over HTTP the key each subscribed with, checked again before each notice (a
        # revoked key hears nothing more); `still` is the server's check, set by `mcp.http`.
        self._keys: weakref.WeakKeyDictionary[Any, tuple[str | None, Caller]] = (
            weakref.WeakKeyDictionary()
        )
        self.still: Callable[[str | None, Caller], bool] | None = None
        self.resource(
            memory_uri(agent),
            name=f"{name} memory",
            title=f"The memory block of {name}",
            description="Core and the injected archival window, exactly as the prompt has it.",
            mime_type="text/markdown",
        )(self._block)
        self.resource(
            core_uri(agent),
            name=f"{name} core memory",
            title=f"The core memory of {name}",
            description="The core section: the facts in every prompt.",
            mime_type="text/markdown",
        )(self._core)
        low = self._lowlevel_server  # the SDK's own way to serve a method MCPServer does not
        low.add_request_handler(
            "resources/subscribe", types.SubscribeRequestParams, self._subscribe
        )
        low.add_request_handler(
            "resources/unsubscribe", types.UnsubscribeRequestParams, self._unsubscribe
        )
        self._listen = ListenHandler(self.bus)
        low.add_request_handler(
            "subscriptions/listen", types.SubscriptionsListenRequestParams, self._listening
        )

    # Tools ----------------------------------------------------------------------------------

    async def _handle_list_tools(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        """The tools the asking key may call (a read-only key is not offered save_memory)."""
        request = getattr(ctx, "request", None)
        caller = getattr(getattr(request, "state", None), "caller", None)
        return types.ListToolsResult(
            tools=await self.list_tools(caller if isinstance(caller, Caller) else OPEN)
        )

    async def list_tools(self, caller: Caller = OPEN) -> list[types.Tool]:
        listed = []
        for tool in self.tools.values():
            if getattr(tool, "needs", KeyScope.READ) > caller.scope:
                continue
            schema = tool.Input.model_json_schema()
            schema.pop("title", None)
            writes = getattr(tool, "needs", KeyScope.READ) >= KeyScope.WRITE
            listed.append(
                types.Tool(
                    name=tool.name,
                    description=tool.description,
                    input_schema=schema,
                    annotations=types.ToolAnnotations(
                        read_only_hint=not writes,
                        destructive_hint=tool.name in (*EDITS, "replace_memory"),
                        idempotent_hint=not writes,
                        open_world_hint=False,
                    ),
                )
            )
        return listed

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> types.CallToolResult:
        """Run a call: refused in one sentence (a result flagged as an error, as the MCP
        specification says for a tool's own failures) or answered with the tool's JSON. Its
        span (MCP's conventions) continues the trace of the HTTP request that brought it."""
        request_context = None if context is None else context.request_context
        request = None if request_context is None else request_context.request
        state = getattr(request, "state", None)
        headers = getattr(request, "headers", None) or {}
        tool = name if name in self.tools or name in EDITS else "unknown"  # (the client's word)
        told = {
            "mcp.method.name": "tools/call",
            "mcp.session.id": headers.get(MCP_SESSION_ID_HEADER),
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool,
            "jsonrpc.request.id": getattr(request_context, "request_id", None),
        }
        with (
            telemetry.resumed(getattr(state, "trace_context", None)),
            telemetry.span(f"tools/call {tool}", told, "server") as span,
        ):
            result = await self._call_tool(name, arguments, context)
            if result.is_error:
                telemetry.failed(span, "tool_error", "the call was refused or failed")
            return result

    async def _call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None
    ) -> types.CallToolResult:
        actor, caller = who(context)
        try:
            raw = json.dumps(arguments, ensure_ascii=False)
        except (TypeError, ValueError):
            return failed("The arguments are not a JSON object.")
        refusal = None
        if len(raw) > MAX_ARGUMENT_CHARS:
            refusal = (
                f"The arguments of {name[:64]!r} are {len(raw):,} characters, over the "
                f"{MAX_ARGUMENT_CHARS:,} this server takes; nothing was done."
            )
        elif name in EDITS and name not in self.tools:
            refusal = f"{name} is off on this server: a person turns it on with [mcp] edits = true."
        if refusal is not None:  # audited too, without arguments it would not take
            row = (actor.kind, name[:128], None, None, False, refusal, 0)
            await anyio.to_thread.run_sync(self._audit_quietly, *row)
            return failed(refusal)
        call = ToolCall(f"mcp-{uuid.uuid4().hex[:12]}", name, raw)
        result = await anyio.to_thread.run_sync(self._execute, call, actor, caller)
        if not result.success:
            return failed(result.error or "The call failed.")
        return types.CallToolResult(content=[types.TextContent(type="text", text=result.content)])

    def _execute(self, call: ToolCall, actor: Actor, caller: Caller) -> Any:
        token = current_caller.set(caller)
        try:
            return self.executor.execute(call, self.agent, actor.kind, actor=actor)
        finally:
            current_caller.reset(token)

    def _audit_quietly(self, *row: Any) -> None:
        with contextlib.suppress(OryxError):  # the answer goes back even so
            self._audit(*row)

    def _audit(self, *row: Any) -> None:
        self._audit_log.record_tool_call(*row)

    @cached_property
    def _audit_log(self) -> SessionStore:
        """Where calls are audited (one store: a row a failing database kept back is written
        with the next)."""
        return SessionStore(self.place.database)

    # Resources ------------------------------------------------------------------------------

    async def _block(self) -> str:
        return await anyio.to_thread.run_sync(self.place.memory.build_context, self.agent)

    async def _core(self) -> str:
        def core() -> str:
            snapshot = self.place.memory.snapshot(self.agent)
            return "".join(entry.line + "\n" for entry in snapshot.core)

        return await anyio.to_thread.run_sync(core)

    async def _subscribe(self, ctx: Any, params: types.SubscribeRequestParams) -> types.EmptyResult:
        connection = connection_of(ctx)
        self._watched(str(params.uri)).add(connection)
        caller = getattr(getattr(ctx.request, "state", None), "caller", None)
        if isinstance(caller, Caller):
            self._keys[connection] = (ctx.request.headers.get("authorization"), caller)
        return types.EmptyResult()

    async def _unsubscribe(
        self, ctx: Any, params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        self._watched(str(params.uri)).discard(connection_of(ctx))
        return types.EmptyResult()

    async def _listening(
        self, ctx: Any, params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        """A `subscriptions/listen` stream, for this server's own resources only (a URI of
        another agent is refused, not acknowledged and left silent)."""
        for uri in params.notifications.resource_subscriptions or ():
            self._watched(str(uri))
        return await self._listen(ctx, params)

    def _watched(self, uri: str) -> weakref.WeakSet[Any]:
        watchers = self._watchers.get(uri)
        if watchers is None:
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"No resource {uri[:200]!r} here: subscribe to {', '.join(self.uris)}.",
            )
        return watchers

    async def run_stdio(self) -> None:
        """Serve on standard input and output (the SDK's transport) until the client closes
        them. A line that is not a JSON-RPC message is answered with an error of one sentence
        (id null, as JSON-RPC asks), where the SDK alone would drop it unanswered."""
        from mcp.server.stdio import stdio_server
        from mcp.shared.message import SessionMessage

        low = self._lowlevel_server
        async with stdio_server() as (incoming, outgoing):
            send, checked = anyio.create_memory_object_stream[Any](0)

            async def check() -> None:
                async with send:
                    async for item in incoming:
                        if isinstance(item, Exception):
                            await outgoing.send(SessionMessage(unreadable(item)))
                        else:
                            await send.send(item)

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(check)
                await low.run(checked, outgoing, low.create_initialization_options())

    async def _still_allowed(self, connection: Any) -> bool:
        key = self._keys.get(connection)
        if key is None or self.still is None:
            return True
        return await anyio.to_thread.run_sync(self.still, *key)

    @asynccontextmanager
    async def following(self) -> AsyncIterator[None]:
        """While open, this server's subscribers are told of every change to its memory, by
        any writer: the workspace watched, a shared database listened to (as `serve` does,
        for a server that runs alone: `oryxtui mcp`)."""
        place = self.place
        events = EventLog()
        feed = EventFeed(
            place.workspace, place.settings, place.memory, events, database=lambda: place.database
        )
        async with feed.running(), anyio.create_task_group() as tasks:
            tasks.start_soon(follow, events, lambda: (self,))
            try:
                yield
            finally:
                tasks.cancel_scope.cancel()

    async def changed(self, core: bool) -> None:
        """The memory changed (`core`: its core section may have): every subscriber is told."""
        for uri, core_only in self.uris.items():
            if core_only and not core:
                continue
            await self.bus.publish(ResourceUpdated(uri=uri))
            for connection in list(self._watchers[uri]):
                if not await self._still_allowed(connection):
                    self._watchers[uri].discard(connection)
                    continue
                try:
                    await connection.send_resource_updated(uri)
                except Exception:  # that client went away: it is forgotten
                    self._watchers[uri].discard(connection)


def who(context: Context[Any, Any] | None) -> tuple[Actor, Caller]:
    """The client (by the name it gave in `initialize`) and the key it came with over HTTP
    (the Authentication middleware put it on the request); over stdio, the person who ran it."""
    request_context = None if context is None else context.request_context
    session = None if request_context is None else request_context.session
    params = getattr(session, "client_params", None)
    info = getattr(params, "client_info", None)
    actor = mcp_client(getattr(info, "name", None))
    request = None if request_context is None else request_context.request
    caller = getattr(getattr(request, "state", None), "caller", None)
    if isinstance(caller, Caller):
        return Actor(actor.kind, via=caller.actor), caller
    return actor, OPEN


def unreadable(problem: Exception) -> types.JSONRPCError:
    """The answer to a line that is not a JSON-RPC message: a parse error when it is not
    JSON, else an invalid request — one sentence, not the parser's report."""
    errors = problem.errors() if isinstance(problem, ValidationError) else []
    if errors and errors[0]["type"] == "json_invalid":
        code, message = types.PARSE_ERROR, "The line is not JSON: send one JSON-RPC 2.0 message."
    else:
        code, message = (
            types.INVALID_REQUEST,
            "The line is not a JSON-RPC 2.0 message: send a request with jsonrpc, id, method "
            "and params.",
        )
    return types.JSONRPCError(
        jsonrpc="2.0", id=None, error=types.ErrorData(code=code, message=message)
    )


def connection_of(ctx: Any) -> Any:
    """The client's connection a request came on: what outlives the request, to tell it of
    changes later. (`ctx.session` is a proxy made for each request; the SDK has no public
    handle on the connection behind it yet.)"""
    return ctx.session._connection


def failed(message: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=one_sentence(message))], is_error=True
    )


async def follow(events: EventLog, servers: Callable[[], Iterable[MemoryServer]]) -> None:
    """Tell the servers' subscribers of every memory change the event log hears (the
    watcher's, the shared database's), until cancelled. A change of the history's
    bookkeeping only (a save held for review, an approval mark) changes no resource."""
    seen = events.last
    while True:
        if not await events.wait(seen, 30):
            continue
        logged = events.after(seen)
        if logged is None:  # fell behind what the log holds: everything may have changed
            seen = events.last
            for server in servers():
                await server.changed(core=True)
            continue
        for item in logged:
            seen = item.n
            await _tell(from_json(item.data), servers())


async def _tell(event: object, servers: Iterable[MemoryServer]) -> None:
    match event:
        case MemoryChange(agent, record):
            if record is not None and record.op in MARKS:
                return
            core = record is None or any(
                scope is Scope.CORE for scope, _ in (*record.before, *record.after)
            )
            for server in servers:
                if server.agent == agent:
                    await server.changed(core)
        case Reset():
            for server in servers:
                await server.changed(core=True)
