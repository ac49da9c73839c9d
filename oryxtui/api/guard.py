"""What the local API accepts, checked before any route runs or any body is read.

A browser will send a "simple" cross-site POST (`text/plain`, no preflight) to 127.0.0.1 from
any page, and a DNS-rebound name makes a page look same-origin. So, as Jupyter Server does for
its loopback server: only known `Host` names are answered, a foreign `Origin` is refused, writes
must be `application/json`, and a body is cut off at the limit before it is buffered.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any

from h11 import IDLE
from uvicorn.protocols.http.h11_impl import H11Protocol

from oryxtui.hosts import host_name

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH"})
HEADER_TIMEOUT_SECONDS = 10.0
BODY_TIMEOUT_SECONDS = 10.0
CONNECTIONS_PER_CLIENT = 64


def is_mcp(path: str) -> bool:
    """A path of the MCP endpoint, whose clients read refusals as JSON-RPC errors."""
    return path == "/mcp" or path.startswith("/mcp/")


def refusal_body(path: str, status: int, message: str, rpc_code: int = -32600) -> dict[str, Any]:
    """A refusal as the client at `path` reads one: upstream's envelope, or (MCP) a JSON-RPC
    error with the same sentence (`rpc_code`: invalid request unless said)."""
    if is_mcp(path):
        return {"jsonrpc": "2.0", "id": None, "error": {"code": rpc_code, "message": message}}
    return {"code": status, "message": message, "data": None, "timestamp": int(time.time() * 1000)}


def _refusal(path: str, status: int, message: str) -> tuple[dict[str, Any], bytes]:
    body = refusal_body(path, status, message)
    start = {
        "type": "http.response.start",
        "status": status,
        "headers": [(b"content-type", b"application/json"), (b"connection", b"close")],
    }
    return start, json.dumps(body, ensure_ascii=False).encode("utf-8")


class RequestGuard:
    """The outermost ASGI layer: Host, Origin, Content-Type and body size, in the envelope."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        allowed_hosts: frozenset[str] | None,
        cors_origins: Iterable[str],
        max_body_bytes: int,
        body_timeout: float = BODY_TIMEOUT_SECONDS,
    ) -> None:
        self.app = app
        self.allowed_hosts = allowed_hosts
        self.cors_origins = frozenset(origin.rstrip("/").lower() for origin in cors_origins)
        self.max_body_bytes = max_body_bytes
        self.body_timeout = body_timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {
            key.decode("latin-1"): value.decode("latin-1") for key, value in scope["headers"]
        }
        problem = self._refused(scope, headers)
        if problem is None and scope["type"] == "http" and scope["method"] in WRITE_METHODS:
            problem = self._too_long(headers)
            if not _is_json(headers):
                # Refused (415) once the caller is known: who you are is said first.
                scope.setdefault("state", {})[NOT_JSON] = NOT_JSON_SAID
            if problem is None:
                try:
                    async with asyncio.timeout(self.body_timeout):
                        body = await self._read_body(receive)
                except TimeoutError:
                    problem = (408, self._too_slow())
                else:
                    if body is None:
                        problem = (413, self._too_large())
                    else:
                        receive = replay(body, receive)
        if problem is None:
            await self.app(scope, receive, send)
        elif scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
        else:
            start, body = _refusal(scope.get("path", ""), *problem)
            await send(start)
            await send({"type": "http.response.body", "body": body})

    def _refused(self, scope: Scope, headers: dict[str, str]) -> tuple[int, str] | None:
        host = headers.get("host", "")
        if self.allowed_hosts is not None and host_name(host) not in self.allowed_hosts:
            return 403, (
                f"This server does not answer for the host name {host_name(host)!r}; "
                "add it with --allow-host (or [api] allowed_hosts) if it is yours."
            )
        origin = headers.get("origin")
        if origin is not None:
            origin = origin.rstrip("/").lower()
            own = f"{scope.get('scheme', 'http')}://{host.lower()}"
            if origin != own and origin not in self.cors_origins:
                return 403, (
                    f"Requests from the web page origin {origin!r} are refused; "
                    "allow it in [api] cors_origins if you trust it."
                )
        return None

    def _too_long(self, headers: dict[str, str]) -> tuple[int, str] | None:
        length = headers.get("content-length")
        if length is not None and (
            not length.strip().isdigit() or int(length) > self.max_body_bytes
        ):
            return 413, self._too_large()
        return None

    def _too_slow(self) -> str:
        return (
            f"The body did not arrive within {self.body_timeout:g} s; nothing was done — send "
            "it whole."
        )

    def _too_large(self) -> str:
        return f"The body is over {self.max_body_bytes // 1024} KB; send less."

    async def _read_body(self, receive: Receive) -> bytes | None:
        """The whole body, or None as soon as it passes the limit (the rest is never read)."""
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return bytes(body)  # the client went away; the app sees an empty request
            body += message.get("body", b"")
            if len(body) > self.max_body_bytes:
                return None
            if not message.get("more_body", False):
                return bytes(body)


# A write whose body is not JSON: marked on the request by the guard, refused with 415 by the
# authentication once it knows the caller (a form a web page posts is never read as JSON).
NOT_JSON = "oryx_not_json"
NOT_JSON_SAID = "Send the body as JSON, with Content-Type: application/json."


def _is_json(headers: dict[str, str]) -> bool:
    return headers.get("content-type", "").split(";")[0].strip().lower() == "application/json"


def replay(body: bytes, then: Receive) -> Receive:
    """The body read already, then what the client sends next (its disconnect, when it goes:
    a streamed answer is cut off only then)."""
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await then()

    return receive


class GuardedH11Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol, closing a connection that has not finished a request's
    headers within HEADER_TIMEOUT_SECONDS (uvicorn itself waits forever: slowloris),
    refusing a client address more than `connections_per_client` connections at once (before
    anything is read, so idle connections cannot use up the server's files), and ending
    streamed answers when the server stops. `guarded()` makes one for a server."""

    header_timeout = HEADER_TIMEOUT_SECONDS
    connections_per_client = CONNECTIONS_PER_CLIENT
    open_per_client: Counter[str] = Counter()  # each server's class has its own (`guarded`)
    _header_deadline = None
    _client: str | None = None

    def connection_made(self, transport) -> None:
        peer = transport.get_extra_info("peername")
        client = str(peer[0]) if isinstance(peer, tuple) and peer else "unix"
        if self.open_per_client[client] >= self.connections_per_client:
            transport.write(_too_many_connections(client, self.connections_per_client))
            transport.close()
            return
        self.open_per_client[client] += 1
        self._client = client
        super().connection_made(transport)
        self._arm_header_deadline()

    def handle_events(self) -> None:
        super().handle_events()
        if self.cycle is not None and self.conn.their_state is not IDLE:
            self._disarm_header_deadline()  # a request's headers are in

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state is IDLE:
            self._arm_header_deadline()  # waiting for the next request on this connection

    def connection_lost(self, exc: Exception | None) -> None:
        if self._client is None:  # refused at once: uvicorn never knew it
            return
        self.open_per_client[self._client] -= 1
        if self.open_per_client[self._client] <= 0:
            del self.open_per_client[self._client]
        self._client = None
        self._disarm_header_deadline()
        super().connection_lost(exc)

    def shutdown(self) -> None:
        """The server is stopping: a response still streaming (an event stream) is told its
        client left, so it ends now instead of holding the shutdown up."""
        super().shutdown()
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete:
            cycle.disconnected = True
            cycle.message_event.set()
            self.transport.close()  # the client sees the stream end, and reconnects

    def _arm_header_deadline(self) -> None:
        self._disarm_header_deadline()
        self._header_deadline = self.loop.call_later(self.header_timeout, self._too_slow)

    def _disarm_header_deadline(self) -> None:
        if self._header_deadline is not None:
            self._header_deadline.cancel()
            self._header_deadline = None

    def _too_slow(self) -> None:
        self._header_deadline = None
        if not self.transport.is_closing():
            self.transport.close()


def guarded(header_timeout: float, connections_per_client: int) -> type[GuardedH11Protocol]:
    """The protocol class for one server: its limits, and its own count of connections."""
    return type(
        "Protocol",
        (GuardedH11Protocol,),
        {
            "header_timeout": header_timeout,
            "connections_per_client": connections_per_client,
            "open_per_client": Counter(),
        },
    )


def _too_many_connections(client: str, limit: int) -> bytes:
    _, body = _refusal(
        "", 429, f"{client} has {limit} connections open to this server already; close some."
    )
    head = (
        "HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode("latin-1") + body
