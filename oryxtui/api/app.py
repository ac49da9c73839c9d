"""The REST API app: services on `app.state`, the request guard and token check, and every error
in upstream's envelope without paths or tracebacks. The endpoints are in `routes`."""

from __future__ import annotations

from collections.abc import Sequence

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import HTMLResponse

from oryxtui import __version__
from oryxtui.api import about, talk
from oryxtui.api.auth import Authenticator
from oryxtui.api.events import EventLog
from oryxtui.api.facts import router as facts_router
from oryxtui.api.feed import EventFeed
from oryxtui.api.guard import RequestGuard
from oryxtui.api.health import Health
from oryxtui.api.health import router as health_router
from oryxtui.api.instrumented import Instrumented
from oryxtui.api.keys import KeyStore
from oryxtui.api.limits import CostBudget, RateLimit, StreamSlots
from oryxtui.api.metrics import ServerMetrics
from oryxtui.api.middleware import (
    Answers,
    Authentication,
    Scrubber,
    gathering_notices,
    install_error_handlers,
)
from oryxtui.api.routes import router
from oryxtui.api.scrape import router as metrics_router
from oryxtui.api.state import ApiState
from oryxtui.api.streams import router as streams_router
from oryxtui.api.waiting import AgentQueue, CostlyReads
from oryxtui.config import Settings
from oryxtui.errors import UsageError
from oryxtui.hosts import WILDCARD_BINDS, allowed_host_names, is_loopback
from oryxtui.memory import MemoryService
from oryxtui.memory.history import Actor
from oryxtui.places import Here
from oryxtui.workspace import Workspace

MAX_BODY_BYTES = 32 * 1024


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
    scrub = Scrubber(workspace.root)
    place = Here(workspace, settings, memory)  # its database and loop, each opened once
    events = EventLog()
    feed = EventFeed(workspace, settings, memory, events, scrub, lambda: place.database)
    keys = KeyStore(place.database)
    auth = Authenticator.at_start(keys, token, bind_host)
    streams = StreamSlots(settings.api.max_streams, settings.api.streams_per_key)
    health = Health(workspace, settings, feed)
    metrics = ServerMetrics.serving(settings, memory, place, health, streams.open, events)

    api = FastAPI(
        lifespan=lambda _: feed.running(),
        redirect_slashes=False,  # an unknown path is a 404 in the envelope, never a redirect
        docs_url=None,  # served below, from this machine (FastAPI's loads from a CDN)
        redoc_url=None,
        title="oryxtui",
        version=__version__,
        description="Read and write OryxOS agent memory; every answer is in the "
        "{code, message, data, timestamp} envelope.",
    )
    api.state.oryx = ApiState(
        workspace=workspace,
        settings=settings,
        place=place,
        memory=memory,
        events=events,
        streams=streams,
        runner=place.loop(),
        queue=AgentQueue(),
        costly=CostlyReads(
            CostBudget(settings.api.costly_seconds, settings.api.costly_refill_per_second)
        ),
        scrub=scrub,
        keys=keys,
        auth=auth,
        metrics=metrics,
    )
    api.state.health = health
    answers = Answers(scrub)
    hosts = allowed_host_names(bind_host, [*settings.api.allowed_hosts, *allowed_hosts])
    _layers(api, settings, Authentication(auth, limit_of(settings), answers), hosts, metrics)
    install_error_handlers(api, answers)
    routers = (router, facts_router, about.router, streams_router, talk.router)
    for routes in (*routers, health_router, metrics_router):
        api.include_router(routes)
    _serve_docs(api)
    return api


def limit_of(settings: Settings) -> RateLimit:
    return RateLimit(settings.api.rate_limit_per_minute)


def _layers(
    api: FastAPI,
    settings: Settings,
    authentication: Authentication,
    hosts: frozenset[str] | None,
    metrics: ServerMetrics | None,
) -> None:
    """What every request passes, outermost last: counted and traced, guarded (Host, Origin,
    body), CORS, authenticated, its notices gathered."""
    api.middleware("http")(gathering_notices(authentication.answers.scrub))
    api.middleware("http")(authentication)
    if settings.api.cors_origins:
        _allow_origins(api, settings.api.cors_origins)
    api.add_middleware(
        RequestGuard,  # before CORS, the token, and any body is read
        allowed_hosts=hosts,
        cors_origins=settings.api.cors_origins,
        max_body_bytes=MAX_BODY_BYTES,
        body_timeout=settings.api.body_timeout_seconds,
    )
    api.add_middleware(
        Instrumented, metrics=metrics, routes=api.router.routes
    )  # outermost: every request counted


def _allow_origins(api: FastAPI, origins: Sequence[str]) -> None:
    """Browser pages of these origins may call the API (`[api] cors_origins`)."""
    api.add_middleware(
        CORSMiddleware,
        allow_origins=origins,
        allow_methods=["GET", "POST", "PATCH", "DELETE"],
        allow_headers=["Authorization", "Content-Type"],
    )


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
