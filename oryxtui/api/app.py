"""The REST API app: services on `app.state`, the request guard and token check, and every error
in upstream's envelope without paths or tracebacks. The endpoints are in `routes`."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import secrets
import threading
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

import anyio.to_thread
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import HTMLResponse, JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from oryxtui import __version__
from oryxtui.api import talk
from oryxtui.api.auth import Authenticator
from oryxtui.api.events import EventLog
from oryxtui.api.feed import EventFeed
from oryxtui.api.guard import RequestGuard
from oryxtui.api.keys import KeyStore
from oryxtui.api.limits import RateLimit
from oryxtui.api.models import envelope
from oryxtui.api.routes import events_router, router
from oryxtui.api.streams import StreamSlots
from oryxtui.api.streams import router as streams_router
from oryxtui.api.waiting import AgentQueue
from oryxtui.config import Settings
from oryxtui.errors import DatabaseError, OryxError, Unreachable, UsageError
from oryxtui.hosts import WILDCARD_BINDS, allowed_host_names, is_loopback
from oryxtui.memory import MemoryService
from oryxtui.memory.history import Actor, current_actor
from oryxtui.notices import collected, collecting
from oryxtui.places import Here
from oryxtui.workspace import Workspace

MAX_BODY_BYTES = 32 * 1024
log = logging.getLogger("oryxtui.api")
# An absolute path not inside a URL (no word character, ':' or '/' just before it).
_ABSOLUTE_PATH = re.compile(r"(?<![\w:/.])/(?:[\w.\-]+/)*[\w.\-]+")


def _keep_index(
    memory: MemoryService, workspace: Workspace, stopped: threading.Event, feed: EventFeed
) -> None:
    from oryxtui.memory.recall.keeper import keep_index

    keep_index(memory, workspace.memories, stopped, feed.index_changed)


def create_api(
    workspace: Workspace,
    settings: Settings,
    token: str | None = None,
    bind_host: str = "127.0.0.1",
    allowed_hosts: Sequence[str] = (),
) -> FastAPI:
    """The ASGI app for one workspace. With a token, every request must carry it as Bearer.
    Only the loopback names, `bind_host` and `allowed_hosts` (plus `[api] allowed_hosts`) are
    answered as Host; only the server's own origin and `[api] cors_origins` as Origin."""
    memory = MemoryService.open(workspace, settings, actor=Actor("api"))

    def scrub(message: str) -> str:
        message = message.replace(str(workspace.root), ".oryxos")
        return _ABSOLUTE_PATH.sub("<path>", message)

    events = EventLog()
    place = Here(workspace, settings, memory)  # its database and loop, each opened once
    feed = EventFeed(workspace, settings, memory, events, scrub, lambda: place.database)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        """While serving, changes are told on the event stream as they happen, and new
        entries are indexed as they are written (with an embedder)."""
        stopped = threading.Event()
        await anyio.to_thread.run_sync(feed.prime)
        watching = asyncio.ensure_future(feed.watch_files())
        threading.Thread(target=feed.listen, args=(stopped,), daemon=True).start()
        if memory.embeds:
            threading.Thread(
                target=_keep_index, args=(memory, workspace, stopped, feed), daemon=True
            ).start()
        yield
        stopped.set()
        watching.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watching

    api = FastAPI(
        lifespan=lifespan,
        redirect_slashes=False,  # an unknown path is a 404 in the envelope, never a redirect
        docs_url=None,  # served below, from this machine (FastAPI's loads from a CDN)
        redoc_url=None,
        title="oryxtui",
        version=__version__,
        description="Read and write OryxOS agent memory; every answer is in the "
        "{code, message, data, timestamp} envelope.",
    )
    api.state.workspace = workspace
    api.state.settings = settings
    api.state.memory = memory
    api.state.place = place
    api.state.events = events
    api.state.streams = StreamSlots(settings.api.max_streams, settings.api.streams_per_key)
    api.state.runner = place.loop()
    api.state.queue = AgentQueue()

    api.state.scrub = scrub

    def failure(status: int, message: str) -> JSONResponse:
        answer = envelope(None, status, scrub(message), warnings=collected())
        body = answer.model_dump(exclude_unset=True)
        return JSONResponse(body, status_code=status)

    @api.middleware("http")
    async def gather_notices(request: Request, call_next):
        # What went wrong beside a result, for `answer` to add to the envelope as warnings.
        with collecting(scrub):
            return await call_next(request)

    keys = KeyStore(place.database)
    api.state.keys = keys
    auth = Authenticator.at_start(keys, token, bind_host)
    api.state.auth = auth
    limit = RateLimit(settings.api.rate_limit_per_minute)

    @api.middleware("http")
    async def authenticate(request: Request, call_next):
        """Who is asking (checked on every request: a revoked key is refused at once), at
        what rate; their changes are recorded under their key's name."""
        client = request.client.host if request.client else "unknown"
        authorization = request.headers.get("authorization")
        try:
            caller = await anyio.to_thread.run_sync(auth.identify, authorization, client)
            limit.spend("the server's token" if caller.name is None else f"key {caller.name!r}")
        except DatabaseError as exc:
            return unavailable(exc)  # nobody is known yet: no detail of the store
        except OryxError as exc:
            return failure(exc.http_status, str(exc))
        request.state.caller = caller
        request.state.authorization = authorization
        acting = current_actor.set(Actor(caller.actor))
        try:
            return await call_next(request)
        finally:
            current_actor.reset(acting)

    def unavailable(exc: OryxError) -> JSONResponse:
        """A store failure told to a caller not yet authenticated: one generic sentence and
        a request id; what failed (a database's host, user and name) only in the log."""
        request_id = secrets.token_hex(6)
        log.warning("request %s: %s", request_id, scrub(str(exc)))
        return failure(
            503,
            f"The memory store is unavailable just now (request id {request_id}; the "
            "server's log has the details); try again in a moment.",
        )

    if settings.api.cors_origins:
        api.add_middleware(
            CORSMiddleware,
            allow_origins=settings.api.cors_origins,
            allow_methods=["GET", "POST", "PATCH", "DELETE"],
            allow_headers=["Authorization", "Content-Type"],
        )
    api.add_middleware(
        RequestGuard,  # outermost: before CORS, the token, and any body is read
        allowed_hosts=allowed_host_names(bind_host, [*settings.api.allowed_hosts, *allowed_hosts]),
        cors_origins=settings.api.cors_origins,
        max_body_bytes=MAX_BODY_BYTES,
        body_timeout=settings.api.body_timeout_seconds,
    )

    @api.exception_handler(OryxError)
    async def oryx_error(_: Request, exc: OryxError) -> JSONResponse:
        if isinstance(exc, Unreachable):  # its advice ("check the url…") is the operator's
            return unavailable(exc)
        return failure(exc.http_status, str(exc))

    @api.exception_handler(RequestValidationError)
    async def bad_request(_: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
        where = ".".join(str(part) for part in first["loc"] if part not in ("query", "body"))
        return failure(400, f"Invalid request{f' ({where})' if where else ''}: {first['msg']}.")

    @api.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        message = "No such endpoint." if exc.status_code == 404 else str(exc.detail)
        return failure(exc.status_code, message)

    @api.exception_handler(Exception)
    async def unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error", exc_info=exc)
        return failure(500, "Internal error; the server log has the details.")

    api.include_router(router)
    api.include_router(events_router)
    api.include_router(streams_router)
    api.include_router(talk.router)
    _serve_docs(api)
    return api


def _serve_docs(api: FastAPI) -> None:
    """/docs with Swagger UI's files from an installed package: it works with no internet."""
    from fastapi.openapi.docs import get_swagger_ui_html
    from fastapi.staticfiles import StaticFiles
    from swagger_ui_bundle import swagger_ui_path

    api.mount("/docs/assets", StaticFiles(directory=str(swagger_ui_path)), name="docs-assets")

    @api.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url="/openapi.json",
            title="oryxtui REST API",
            swagger_js_url="/docs/assets/swagger-ui-bundle.js",
            swagger_css_url="/docs/assets/swagger-ui.css",
            swagger_favicon_url="/docs/assets/favicon-32x32.png",
        )


def check_bind(
    host: str, token: str | None, allowed_hosts: Sequence[str] = (), keys: bool = False
) -> None:
    """Anything but loopback needs a token or keys, and a wildcard bind the host names
    clients use; refuse to start without them."""
    if is_loopback(host):
        return
    if not token and not keys:
        raise UsageError(
            f"Binding to {host} exposes memory beyond this machine: make keys with `oryxtui "
            "keys create`, or set a token in ORYXTUI_API_TOKEN or --token-file, or bind to "
            "127.0.0.1."
        )
    if host.lower() in WILDCARD_BINDS and not allowed_hosts:
        raise UsageError(
            f"Bound to {host}, the server answers only the host names you name: add "
            "--allow-host NAME (or [api] allowed_hosts) for each name clients use, or '*'."
        )
