"""`oryxtui web`: the dashboard in a browser, served by textual-serve (each browser tab runs
the dashboard in a process of its own) on a loopback address, behind the rules `serve` keeps:
only loopback `Host` names are answered, and a page or websocket asked for from another origin
is refused. textual-serve alone answers any `Host` and accepts cross-origin websockets, so a
page on another site (or a DNS-rebinding one) could drive the dashboard; here it cannot."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

from oryxtui.errors import UsageError
from oryxtui.extras import require
from oryxtui.hosts import LOOPBACK_NAMES, check_free, host_name, is_loopback

DEFAULT_PORT = 8766


def check_web_bind(host: str) -> None:
    """The browser dashboard can change memory and has no login: loopback only."""
    if not is_loopback(host):
        raise UsageError(
            f"oryxtui web serves this machine only (127.0.0.1, localhost or ::1), not {host}; "
            "to reach it from elsewhere, forward the port over SSH."
        )


def allowed_origins(port: int) -> frozenset[str]:
    return frozenset(f"http://{name}:{port}" for name in LOOPBACK_NAMES)


def refusal(request_host: str, origin: str | None, port: int) -> str | None:
    """Why a request is refused (None: answered): a `Host` that is not a loopback name, or an
    `Origin` that is not this server's. A websocket must say where it comes from."""
    if host_name(request_host) not in LOOPBACK_NAMES:
        return "This server answers only 127.0.0.1, localhost and [::1]."
    if origin is not None and origin.rstrip("/").lower() not in allowed_origins(port):
        return "Requests from other sites are refused."
    return None


def dashboard_command(root: Path) -> str:
    """The command each browser tab runs: this Python, this workspace."""
    return shlex.join([sys.executable, "-m", "oryxtui", "--root", str(root)])


def serve_web(root: Path, host: str, port: int) -> None:
    """Serve until interrupted (textual-serve's loop, with the guard in front)."""
    require("web", "The browser dashboard")
    from aiohttp import web
    from textual_serve.server import Server

    check_web_bind(host)
    check_free(host, port)  # a busy port is one sentence, not the server's traceback
    Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

    @web.middleware
    async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
        why = refusal(request.headers.get("Host", ""), request.headers.get("Origin"), port)
        is_socket = request.headers.get("Upgrade", "").lower() == "websocket"
        if why is None and is_socket and request.headers.get("Origin") is None:
            why = "A websocket must come from this server's page."
        if why is not None:
            return web.Response(status=403, text=why + "\n")
        return await handler(request)

    class GuardedServer(Server):
        async def _make_app(self) -> web.Application:
            app = await super()._make_app()
            app.middlewares.insert(0, guard)
            return app

    public = f"http://{'[::1]' if host == '::1' else host}:{port}"
    server = GuardedServer(
        dashboard_command(root), host=host, port=port, title="oryxtui", public_url=public
    )
    sys.stderr.write(f"Serving the dashboard of {root} on {public}\n")
    sys.stderr.flush()
    server.serve()
