"""The REST API: every answer in upstream's envelope; errors never leak paths or tracebacks."""

from __future__ import annotations

import errno
import getpass
import hmac
import json
import logging
import re
import socket
import time
from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from oryxtui import __version__
from oryxtui.agent.loop import Agent
from oryxtui.agent.sessions import SessionStore, session_id_for
from oryxtui.api.guard import WILDCARD_BINDS, RequestGuard, allowed_host_names, is_loopback
from oryxtui.config import Settings
from oryxtui.errors import (
    AgentDefinitionError,
    ConfigError,
    DatabaseError,
    MemoryWriteError,
    OryxError,
    OutsideWorkspace,
    ServiceUnavailable,
    UsageError,
)
from oryxtui.memory import MemoryEntry, MemoryService
from oryxtui.workspace import Workspace

MAX_BODY_BYTES = 32 * 1024
log = logging.getLogger("oryxtui.api")
# An absolute path not inside a URL (no word character, ':' or '/' just before it).
_ABSOLUTE_PATH = re.compile(r"(?<![\w:/.])/(?:[\w.\-]+/)*[\w.\-]+")


class ApiError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class SaveBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    content: str
    scope: str | None = "archival"  # read by the one scope rule, as the CLI and the tool do


def envelope(data: Any = None, code: int = 0, message: str = "success") -> dict[str, Any]:
    return {"code": code, "message": message, "data": data, "timestamp": int(time.time() * 1000)}


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
    memory = MemoryService.open(workspace, settings)
    runner = Agent(workspace, settings, memory, SessionStore(workspace.db_path))
    api = FastAPI(
        title="oryxtui",
        version=__version__,
        description="Read and write OryxOS agent memory; every answer is in the "
        "{code, message, data, timestamp} envelope.",
    )

    def scrub(message: str) -> str:
        message = message.replace(str(workspace.root), ".oryxos")
        return _ABSOLUTE_PATH.sub("<path>", message)

    def failure(status: int, message: str) -> JSONResponse:
        return JSONResponse(envelope(None, status, scrub(message)), status_code=status)

    @api.middleware("http")
    async def require_token(request: Request, call_next):
        if token is not None:
            given = request.headers.get("authorization", "")
            if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
                return failure(401, "Missing or wrong token: send Authorization: Bearer <token>.")
        return await call_next(request)

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
    )

    @api.exception_handler(ApiError)
    async def api_error(_: Request, exc: ApiError) -> JSONResponse:
        return failure(exc.status, exc.message)

    @api.exception_handler(OryxError)
    async def oryx_error(_: Request, exc: OryxError) -> JSONResponse:
        return failure(_status_for(exc), str(exc))

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

    def known_agent(name: str) -> str:
        if name not in workspace.list_agents():
            raise ApiError(404, f"No agent named {name!r} in this workspace.")
        return name

    @api.get("/api/v1/agents")
    def list_agents() -> dict[str, Any]:
        agents = []
        for name in workspace.list_agents():
            row: dict[str, Any] = {
                "name": name,
                "description": "",
                "provider": None,
                "model": None,
                "tools": [],
                "has_agent_md": True,
            }
            try:
                definition = workspace.read_agent(name)
            except OryxError as exc:
                row["error"] = scrub(str(exc))
            else:
                if definition is None:  # a folder with only a MEMORY.md
                    row["has_agent_md"] = False
                    agents.append(row)
                    continue
                provider = definition.provider.name or settings.llm.provider
                provider = provider or ("openai" if settings.llm.base_url else "offline")
                row.update(
                    description=definition.description,
                    provider=provider,
                    model=definition.provider.model or settings.llm.model,
                    tools=definition.tools,
                )
            agents.append(row)
        return envelope(agents)

    @api.get("/api/v1/agents/{name}/memory")
    def memory_block(name: str) -> dict[str, Any]:
        return envelope(memory.build_context(known_agent(name)))

    @api.get("/api/v1/agents/{name}/memory/entries")
    def memory_entries(name: str) -> dict[str, Any]:
        snapshot = memory.snapshot(known_agent(name))
        data = snapshot.to_json()
        if snapshot.warning:
            data["warning"] = scrub(snapshot.warning)
        return envelope(data)

    @api.post("/api/v1/agents/{name}/memory")
    async def save_entry(name: str, request: Request) -> dict[str, Any]:
        raw = await request.body()  # the guard has capped it at MAX_BODY_BYTES
        try:
            body = SaveBody.model_validate(json.loads(raw or b"null"))
        except (ValueError, ValidationError, RecursionError):
            raise ApiError(
                400, 'The body must be JSON like {"content": "...", "scope": "archival"}.'
            ) from None
        # A save may wait for another writer's lock: off the event loop, so the other
        # requests are answered meanwhile.
        entry = await run_in_threadpool(_save, name, body)
        return envelope({"scope": entry.scope.value, **entry.to_json()})

    def _save(name: str, body: SaveBody) -> MemoryEntry:
        return memory.save(known_agent(name), body.content, body.scope)

    @api.get("/api/v1/agents/{name}/memory/recall")
    def recall(name: str, keyword: str) -> dict[str, Any]:
        hits = memory.recall(known_agent(name), keyword)
        return envelope({"keyword": keyword, "hits": [hit.to_json() for hit in hits]})

    @api.get("/api/v1/agents/{name}/prompt")
    def prompt(name: str) -> dict[str, Any]:
        agent = known_agent(name)
        built = runner.prompt(agent, session_id_for("cli", _os_user(), agent))
        data = built.to_json()
        data["warnings"] = [scrub(w) for w in built.warnings]
        return envelope(data)

    return api


def _status_for(error: OryxError) -> int:
    if isinstance(error, UsageError | ConfigError):
        return 400
    if isinstance(error, MemoryWriteError | OutsideWorkspace):
        return 409  # refused given the file's state: a symlink, undecodable bytes, a held lock
    if isinstance(error, AgentDefinitionError):
        return 422
    if isinstance(error, ServiceUnavailable | DatabaseError):
        return 503
    return 500


def _os_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "user"


def check_bind(host: str, token: str | None, allowed_hosts: Sequence[str] = ()) -> None:
    """Anything but loopback needs a token, and a wildcard bind the host names clients use;
    refuse to start without them."""
    if is_loopback(host):
        return
    if not token:
        raise UsageError(
            f"Binding to {host} exposes memory beyond this machine: set a token with --token "
            "or ORYXTUI_API_TOKEN, or bind to 127.0.0.1."
        )
    if host.lower() in WILDCARD_BINDS and not allowed_hosts:
        raise UsageError(
            f"Bound to {host}, the server answers only the host names you name: add "
            "--allow-host NAME (or [api] allowed_hosts) for each name clients use, or '*'."
        )


def listening_socket(host: str, port: int) -> socket.socket:
    """The server's socket, bound before anything says it is serving."""
    try:
        address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror:
        raise UsageError(f"Cannot bind to {host!r}: no such address; check --host.") from None
    family, kind, proto, _, where = address
    listener = socket.socket(family, kind, proto)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind(where)
        listener.listen(128)
    except OSError as exc:
        listener.close()
        if exc.errno == errno.EADDRINUSE:
            raise OryxError(
                f"Port {port} on {host} is already in use; stop what is using it or choose "
                "another with --port."
            ) from None
        raise OryxError(f"Cannot listen on {host}:{port} ({exc.strerror}).") from None
    listener.set_inheritable(True)
    return listener
