"""What every request passes through before and after its route, each part testable alone:
paths taken out of messages (`Scrubber`), the envelope for a failure (`Answers`), the notices a
request gathers, who is asking and at what rate (`Authentication`), and the error handlers that
keep every failure in the envelope without paths or tracebacks."""

from __future__ import annotations

import logging
import re
import secrets
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio.to_thread
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from oryxtui.api.auth import Authenticator
from oryxtui.api.guard import NOT_JSON, is_mcp, refusal_body
from oryxtui.api.health import PUBLIC
from oryxtui.api.keys import Scope
from oryxtui.api.limits import RateLimit
from oryxtui.api.models import envelope
from oryxtui.errors import DatabaseError, OryxError, Unreachable
from oryxtui.memory.history import Actor, current_actor
from oryxtui.notices import collected, collecting

log = logging.getLogger("oryxtui.api")
# An absolute path not inside a URL (no word character, ':' or '/' just before it).
_ABSOLUTE_PATH = re.compile(r"(?<![\w:/.])/(?:[\w.\-]+/)*[\w.\-]+")
Next = Callable[[Request], Awaitable[Response]]
Middleware = Callable[[Request, Next], Awaitable[Response]]


class Scrubber:
    """A message without the server's paths: the workspace as `.oryxos`, any other absolute
    path as `<path>` (a URL's path is left alone)."""

    def __init__(self, root: Path) -> None:
        self.root = str(root)

    def __call__(self, message: str) -> str:
        return _ABSOLUTE_PATH.sub("<path>", message.replace(self.root, ".oryxos"))


class Answers:
    """Failures in upstream's envelope, their messages scrubbed, with the request's notices."""

    def __init__(self, scrub: Callable[[str], str]) -> None:
        self.scrub = scrub

    def failure(self, status: int, message: str, path: str = "") -> JSONResponse:
        if is_mcp(path):  # an MCP client reads a JSON-RPC error
            return JSONResponse(refusal_body(path, status, self.scrub(message)), status)
        answer = envelope(None, status, self.scrub(message), warnings=collected())
        return JSONResponse(answer.model_dump(exclude_unset=True), status_code=status)

    def unavailable(self, exc: OryxError, path: str = "") -> JSONResponse:
        """A store failure told to a caller not yet authenticated, or one whose advice is the
        operator's: one generic sentence and a request id; what failed (a database's host,
        user and name) only in the log."""
        request_id = secrets.token_hex(6)
        log.warning("request %s: %s", request_id, self.scrub(str(exc)))
        return self.failure(
            503,
            f"The memory store is unavailable just now (request id {request_id}; the "
            "server's log has the details); try again in a moment.",
            path,
        )


def gathering_notices(
    scrub: Callable[[str], str],
) -> Callable[[Request, Next], Awaitable[Response]]:
    """What went wrong beside a result, gathered for `answer` to add to the envelope."""

    async def gather(request: Request, call_next: Next) -> Response:
        with collecting(scrub):
            return await call_next(request)

    return gather


class Authentication:
    """Who is asking (checked on every request: a revoked key is refused at once), at what
    rate; the caller goes on `request.state.caller` (read by `state.caller_of`), and the
    request's changes are recorded under its actor."""

    def __init__(self, auth: Authenticator, limit: RateLimit, answers: Answers) -> None:
        self.auth = auth
        self.limit = limit
        self.answers = answers

    async def __call__(self, request: Request, call_next: Next) -> Response:
        client = request.client.host if request.client else "unknown"
        authorization = request.headers.get("authorization")
        if request.url.path in PUBLIC:  # probes: answered to anyone, in more detail to a key
            return await self._probe(request, call_next, authorization, client)
        try:
            caller = await anyio.to_thread.run_sync(self.auth.identify, authorization, client)
            spender = "the server's token" if caller.name is None else f"key {caller.name!r}"
            self.limit.spend(spender)
        except DatabaseError as exc:
            # nobody is known yet: no detail of the store
            return self.answers.unavailable(exc, request.url.path)
        except OryxError as exc:
            return self.answers.failure(exc.http_status, str(exc), request.url.path)
        request.state.caller = caller  # known from here on, refused or not (the access log)
        not_json = request.scope.get("state", {}).get(NOT_JSON)
        if not_json:
            return self.answers.failure(415, not_json, request.url.path)
        if caller.scope is Scope.METRICS and request.url.path != "/metrics":
            return self.answers.failure(
                403,
                f"The key {caller.name!r} has the metrics scope: it may read the metrics and "
                "the readiness checks, nothing else; use a key with the read scope for memory.",
                request.url.path,
            )
        request.state.authorization = authorization
        acting = current_actor.set(Actor(caller.actor))
        try:
            return await call_next(request)
        finally:
            current_actor.reset(acting)

    async def _probe(
        self, request: Request, call_next: Next, authorization: str | None, client: str
    ) -> Response:
        """/healthz and /readyz: no key needed (a probe has none), and none counted as a
        failed attempt when there is none; a valid one is the caller, who is told more."""
        try:
            if authorization:
                caller = await anyio.to_thread.run_sync(self.auth.identify, authorization, client)
            else:
                caller = await anyio.to_thread.run_sync(self.auth.caller, None)
        except OryxError:
            caller = None
        if caller is not None:
            request.state.caller = caller
        return await call_next(request)


def install_error_handlers(api: FastAPI, answers: Answers) -> None:
    """Every failure in the envelope: oryxtui's in their own sentence, a bad request naming
    the field, an unknown path a 404, anything unexpected a 500 without its traceback."""

    @api.exception_handler(OryxError)
    async def oryx_error(_: Request, exc: OryxError) -> JSONResponse:
        if isinstance(exc, Unreachable):  # its advice ("check the url…") is the operator's
            return answers.unavailable(exc)
        return answers.failure(exc.http_status, str(exc))

    @api.exception_handler(RequestValidationError)
    async def bad_request(_: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
        where = ".".join(str(part) for part in first["loc"] if part not in ("query", "body"))
        return answers.failure(
            400, f"Invalid request{f' ({where})' if where else ''}: {first['msg']}."
        )

    @api.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        message = "No such endpoint." if exc.status_code == 404 else str(exc.detail)
        return answers.failure(exc.status_code, message)

    @api.exception_handler(Exception)
    async def unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error", exc_info=exc)
        return answers.failure(500, "Internal error; the server log has the details.")
