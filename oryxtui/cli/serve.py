"""`oryxtui serve` (the REST API) and `oryxtui web` (the dashboard in a browser)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from oryxtui.cli.common import EXIT_OK, TOP, arg, open_workspace
from oryxtui.errors import UsageError
from oryxtui.extras import require
from oryxtui.hosts import listening_socket, port

if TYPE_CHECKING:
    from fastapi import FastAPI

    from oryxtui.config import Settings
    from oryxtui.workspace import Workspace


@TOP.command(
    "serve",
    "the REST API (needs the server extra)",
    arg("--host", default="127.0.0.1", help="default: 127.0.0.1"),
    arg("--port", type=port, default=8765, help="default: 8765"),
    arg(
        "--token-file",
        metavar="PATH",
        help="a file holding the server's token (or set ORYXTUI_API_TOKEN); keys need neither",
    ),
    arg("--token", help=argparse.SUPPRESS),  # refused: it would show in `ps`
    arg(
        "--allow-host",
        metavar="NAME",
        action="append",
        default=[],
        help="a host name clients use to reach the server ('*' for any); repeatable",
    ),
    arg("--tls-cert", metavar="PEM", help="serve HTTPS with this certificate (chain)"),
    arg("--tls-key", metavar="PEM", help="the certificate's private key"),
    arg(
        "--log-format",
        choices=("plain", "json"),
        default="plain",
        help="json: one JSON object per line on stderr, a line per request (default: plain)",
    ),
)
def serve(args: argparse.Namespace) -> int:
    token = _token(args)
    require("server", "The REST API")
    import uvicorn
    import uvicorn.config

    from oryxtui.agent.sessions import open_conversations
    from oryxtui.api.app import check_bind, create_api
    from oryxtui.api.guard import guarded
    from oryxtui.api.keys import KeyStore

    workspace, settings = open_workspace(args)
    tls = _tls(args.tls_cert, args.tls_key)
    keys = KeyStore(open_conversations(workspace, settings)).any_live()
    check_bind(args.host, token, [*settings.api.allowed_hosts, *args.allow_host], keys)
    tracing = settings.telemetry.tracing
    if tracing.enabled:
        require("otel", "Tracing ([telemetry.tracing] enabled)")
    api = create_api(workspace, settings, token, args.host, args.allow_host)
    mcp = _serve_mcp(api)
    listener = listening_socket(args.host, args.port)  # a port in use fails here, quietly
    protocol = guarded(settings.api.header_timeout_seconds, settings.api.connections_per_client)
    json_logs = args.log_format == "json"
    if json_logs:
        from oryxtui.api.logs import log_json
        from oryxtui.api.middleware import Scrubber

        log_json(Scrubber(workspace.root))
    config = uvicorn.Config(
        api,
        http=protocol,
        log_config=None if json_logs else uvicorn.config.LOGGING_CONFIG,
        log_level="warning",  # uvicorn's access log off: it would show the paths asked for
        timeout_keep_alive=5,
        # Event streams never end by themselves: on shutdown they are cut after this long.
        timeout_graceful_shutdown=2,
        ssl_certfile=tls[0] if tls else None,
        ssl_keyfile=tls[1] if tls else None,
    )
    scheme = "https" if tls else "http"
    banner = [
        f"Serving {workspace.root} on {scheme}://{args.host}:{args.port}/api/v1",
        f"memory: {memory_place(workspace, settings)}",
    ]
    if mcp:
        url = f"{scheme}://{args.host}:{args.port}/mcp/agents/NAME"
        banner.append(f"MCP: {url} (streamable HTTP, the same keys)")
    if tracing.enabled:
        from oryxtui.addresses import masked_text

        banner.append(f"traces: OTLP to {masked_text(tracing.endpoint)}")
    _tell(banner, json_logs)
    stop_tracing = _start_tracing(settings)
    try:
        uvicorn.Server(config).run(sockets=[listener])
    finally:
        stop_tracing()  # the last spans sent
    return EXIT_OK


def _tell(lines: list[str], json_logs: bool) -> None:
    """What the server says as it starts: lines on stderr, or log events in the JSON format."""
    if json_logs:
        import logging

        for line in lines:
            logging.getLogger("oryxtui.api").info(line)
        return
    sys.stderr.write("".join(line + "\n" for line in lines))
    sys.stderr.flush()


def _start_tracing(settings: Settings) -> Callable[[], None]:
    """Spans from now on when `[telemetry.tracing]` is enabled; what stops it."""
    tracing = settings.telemetry.tracing
    if not tracing.enabled:
        return lambda: None
    from oryxtui import telemetry

    return telemetry.start_tracing(tracing.endpoint, tracing.service_name, tracing.capture_content)


def _serve_mcp(api: FastAPI) -> bool:
    """MCP at /mcp beside the REST API when the mcp extra is installed; else /mcp says how to
    install it."""
    from oryxtui.extras import install_command, missing

    if not missing("mcp"):
        from oryxtui.mcp.http import serve_mcp

        serve_mcp(api)
        return True
    from fastapi import Request
    from fastapi.responses import JSONResponse

    from oryxtui.api.guard import refusal_body

    sentence = f"MCP needs the mcp extra on the server: {install_command('mcp')}."

    async def refuse(_: Request) -> JSONResponse:
        return JSONResponse(refusal_body("/mcp", 501, sentence, -32601), status_code=501)

    for path in ("/mcp", "/mcp/{rest:path}"):
        api.add_route(path, refuse, methods=["GET", "POST", "DELETE"])
    return False


def memory_place(workspace: Workspace, settings: Settings) -> str:
    """Where the served memory lives, as the banner names it."""
    memory = settings.memory
    if memory.backend == "mem0":
        return f"{memory.mem0.base_url} (mem0)"
    if settings.database.url:
        from oryxtui.conninfo import ConnInfo, ConnInfoError

        try:
            shown = ConnInfo.parse(settings.database.url).shown
        except ConnInfoError:
            shown = "the configured database"
        return f"{shown} (shared)"
    if memory.backend == "markdown":
        return f"MEMORY.md files in {workspace.root}"
    return f"{workspace.db_path} (memory_entries)"


def _token(args: argparse.Namespace) -> str | None:
    """The server's token, from the environment or a file (never the command line, which
    every user of the machine can read), at least MIN_TOKEN_CHARS long."""
    from oryxtui.api.auth import checked_token

    if args.token is not None:
        raise UsageError(
            "A token on the command line shows in `ps` to every user of this machine: put it "
            "in ORYXTUI_API_TOKEN or in a file named with --token-file (or use keys: `oryxtui "
            "keys create`)."
        )
    if args.token_file is not None:
        try:
            text = Path(args.token_file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = getattr(exc, "strerror", None) or "not UTF-8 text"
            raise UsageError(
                f"The token file {args.token_file} cannot be read ({reason})."
            ) from None
        return checked_token(text)
    return checked_token(os.environ.get("ORYXTUI_API_TOKEN") or None)


def _tls(cert: str | None, key: str | None) -> tuple[str, str] | None:
    """The certificate and key, checked before the server starts (one sentence if unusable)."""
    if cert is None and key is None:
        return None
    if cert is None or key is None:
        raise UsageError("HTTPS needs both --tls-cert and --tls-key.")
    import ssl

    try:
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(cert, key)
    except (OSError, ssl.SSLError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise UsageError(
            f"The certificate {cert} and key {key} cannot be used ({reason}); give PEM files "
            "that belong together."
        ) from None
    return cert, key


@TOP.command(
    "web",
    "the dashboard in a browser, on this machine only (needs the web extra)",
    arg("--host", default="127.0.0.1", help="a loopback address; default 127.0.0.1"),
    arg("--port", type=port, default=8766, help="default: 8766"),
)
def web(args: argparse.Namespace) -> int:
    from oryxtui.web import serve_web

    workspace, _ = open_workspace(args)
    serve_web(workspace.root, args.host, args.port)
    return EXIT_OK
