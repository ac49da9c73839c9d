"""The outermost layer of the API (ASGI): each request timed and counted by its route's
template, logged in the JSON format, and — with tracing on — a server span. Only bounded
values are named: a route's template (never its path), a method HTTP knows (else `_OTHER`),
a status and the kind of caller."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from starlette.routing import BaseRoute, Match

from oryxtui import telemetry
from oryxtui.api import logs

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

    from oryxtui.api.metrics import ServerMetrics

UNMATCHED = "<unmatched>"  # a request no route took (a 404, a refused Host): one label
METHODS = frozenset(
    {"GET", "POST", "PATCH", "PUT", "DELETE", "HEAD", "OPTIONS", "CONNECT", "TRACE"}
)


class Instrumented:
    """The outermost layer of the app (ASGI): each request timed and counted by its route's
    template, and — with tracing on — a server span, continuing the caller's trace."""

    def __init__(
        self, app: ASGIApp, metrics: ServerMetrics | None, routes: Sequence[BaseRoute] = ()
    ) -> None:
        self.app = app
        self.metrics = metrics
        self.routes = routes  # the app's, to name a request refused before it was routed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or (
            self.metrics is None
            and not telemetry.tracing()
            and not logs.access.isEnabledFor(logging.INFO)
        ):
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        answered = Answered(send)
        method = known_method(scope["method"])
        try:
            with telemetry.observing(self.metrics):
                if telemetry.tracing():
                    await self._traced(scope, receive, answered)
                else:
                    await self.app(scope, receive, answered)
        finally:
            route, spent = route_of(scope, self.routes), time.perf_counter() - started
            status = answered.status
            if self.metrics is not None:
                self.metrics.request(route, method, status, spent)
            logs.request_line(route, method, status, spent, caller_kind(scope, route))

    async def _traced(self, scope: Scope, receive: Receive, answered: Answered) -> None:
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        method = known_method(scope["method"])

        with (
            telemetry.continued(headers),
            telemetry.span(
                method, {"http.request.method": method, "url.scheme": scope.get("scheme")}, "server"
            ) as span,
        ):
            scope.setdefault("state", {})["trace_context"] = telemetry.current_context()
            try:
                await self.app(scope, receive, answered)
            finally:
                route, status = route_of(scope, self.routes), answered.status
                span.update_name(f"{method} {route}")
                span.set_attribute("http.route", route)
                span.set_attribute("http.response.status_code", status)
                if status >= 500:
                    telemetry.failed(span, str(status), str(status))


def known_method(method: str) -> str:
    """An HTTP method as metrics, spans and logs may name it: one HTTP knows, else `_OTHER`
    (OpenTelemetry's semantic conventions): a client's made-up method is never their text."""
    return method if method in METHODS else "_OTHER"


class Answered:
    """`send`, noting the status the answer started with (500 until it starts)."""

    def __init__(self, send: Send) -> None:
        self.send = send
        self.status = 500

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.status = int(message["status"])
        await self.send(message)


def route_of(scope: Scope, routes: Sequence[BaseRoute] = ()) -> str:
    """The template of the route that took the request (`/api/v1/agents/{name}/memory`), or
    would have: a request refused before routing (no key, a key's scope) is named by the
    route its path matches, as one that was answered."""
    route = getattr(scope.get("route"), "path", None)
    if isinstance(route, str) and route and route != "/mcp":
        return route
    path = str(scope.get("path", ""))
    if path == "/mcp" or path.startswith("/mcp/"):  # the MCP app, mounted: its own paths
        return "/mcp/agents/{agent}" if path.startswith("/mcp/agents/") else "/mcp"
    for candidate in routes:
        included = getattr(candidate, "original_router", None)  # a router FastAPI included
        if included is not None:
            found = route_of(scope, included.routes)
            if found != UNMATCHED:
                return found
            continue
        template = getattr(candidate, "path", None)
        if isinstance(template, str) and template and candidate.matches(scope)[0] is not Match.NONE:
            return template
    return UNMATCHED


def caller_kind(scope: Scope, route: str) -> str:
    """Who asked, as a kind (never a key's name): an MCP client, an API caller, or nobody
    known (refused before its key was read, or a probe without one)."""
    if route.startswith("/mcp"):
        return "mcp"
    return "api" if scope.get("state", {}).get("caller") is not None else "anonymous"
