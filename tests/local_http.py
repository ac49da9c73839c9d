"""A threaded HTTP server on 127.0.0.1 (a free port) for test doubles of network services."""

from __future__ import annotations

import json
import threading
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class JsonHandler(BaseHTTPRequestHandler):
    """A quiet request handler that answers JSON."""

    def log_message(self, *_: object) -> None:
        pass

    def reply_json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class LocalHttpServer:
    """Start with `with`; `base_url` is where it answers. Subclasses provide `_handler()`."""

    url_suffix = ""

    def __init__(self) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        # A client that goes away mid-answer is the point of some tests: no traceback for it.
        self._server.handle_error = lambda request, address: None  # type: ignore[method-assign]
        # Told to stop, it stops within a poll (the default 0.5 s was half a second per test).
        serve = partial(self._server.serve_forever, poll_interval=0.01)
        self._thread = threading.Thread(target=serve, daemon=True)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}{self.url_suffix}"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()
