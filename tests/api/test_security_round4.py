"""Security round 4 (issue 43), in-process. Item 5: a hostile server cannot hang or exhaust the
client — every call has a total deadline (the connection, the headers and the answer alike),
answers are capped as they stream in, and hanging up ends every call at once, whatever
phase it is in. Item 10: a key made and revoked before any request closes an open server."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler

import pytest

from oryxtui.errors import OryxError, ServiceUnavailable
from oryxtui.remote.client import MAX_ANSWER_BYTES, Server
from oryxtui.workspace import Workspace
from tests.api_server import RunningApi
from tests.local_http import LocalHttpServer
from tests.support import agents_with_notes, cli, make_key


class Hostile(LocalHttpServer):
    """A server that answers as `mode` says: `headers` sends its status line a byte at a
    time, `body` its answer a byte at a time, `silent` says nothing at all, `flood` sends
    answers far past any limit (without a length)."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.gone = threading.Event()  # the client hung up on a trickle
        super().__init__()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        hostile = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: object) -> None:
                pass

            def do_GET(self) -> None:
                try:
                    hostile.answer(self)
                except OSError:
                    hostile.gone.set()

        return Handler

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        out = handler.wfile
        if self.mode == "silent":
            handler.rfile.read(1)  # waits until the client goes away
            raise OSError("gone")
        if self.mode == "headers":
            for byte in b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" * 1000:
                out.write(bytes([byte]))
                out.flush()
                time.sleep(0.2)
            return
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.end_headers()
        if self.mode == "body":
            for byte in b'{"code": 0, "data": "' + b"x" * 10_000:
                out.write(bytes([byte]))
                out.flush()
                time.sleep(0.2)
        elif self.mode == "flood":
            out.write(b'{"code": 0, "data": "')
            chunk = b"x" * (1 << 20)
            for _ in range(300):
                out.write(chunk)


def in_thread(call: Callable[[], object]) -> tuple[threading.Thread, list[BaseException]]:
    failed: list[BaseException] = []

    def run() -> None:
        try:
            call()
        except OryxError as exc:
            failed.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, failed


@pytest.mark.parametrize("mode", ["headers", "body", "silent"])
def test_every_call_ends_by_its_deadline_whatever_the_server_trickles(mode: str) -> None:
    with Hostile(mode) as hostile:
        server = Server(hostile.base_url, timeout=1.5)
        thread, failed = in_thread(lambda: server.get("/agents"))
        thread.join(timeout=20)  # a per-read timeout would never end the trickles
        assert not thread.is_alive()
        [error] = failed
        assert isinstance(error, ServiceUnavailable)
        assert "did not answer within 1.5 s" in str(error)


@pytest.mark.parametrize("mode", ["headers", "body", "silent"])
def test_hanging_up_ends_a_call_at_once_in_any_phase(mode: str) -> None:
    with Hostile(mode) as hostile:
        server = Server(hostile.base_url)  # its own deadline: 30 s
        thread, failed = in_thread(lambda: server.get("/agents"))
        connected = time.monotonic() + 10
        while not _established(hostile) and time.monotonic() < connected:
            time.sleep(0.02)
        server.hang_up()  # what quitting the dashboard does
        thread.join(timeout=5)
        assert not thread.is_alive() and failed
        again, failed_again = in_thread(lambda: server.get("/agents"))
        again.join(timeout=5)  # hung up for good: no call waits on the network after
        assert not again.is_alive() and failed_again


def _established(hostile: Hostile) -> bool:
    """The client's connection reached the server (a handler is at work)."""
    host, port = hostile.base_url.removeprefix("http://").split(":")
    with open("/proc/net/tcp") as table:
        rows = table.read().splitlines()[1:]
    wanted = f"{socket.inet_aton(host)[::-1].hex().upper()}:{int(port):04X}"
    return any(row.split()[1] == wanted and row.split()[3] == "01" for row in rows)


def test_an_answer_past_the_limit_is_refused_as_it_streams_in() -> None:
    with Hostile("flood") as hostile:
        server = Server(hostile.base_url)
        with pytest.raises(ServiceUnavailable, match=f"over {MAX_ANSWER_BYTES >> 20} MB"):
            server.get("/agents")
        assert server.received <= MAX_ANSWER_BYTES + (1 << 20)  # read no further than that


# Item 10: once a key has existed, the server needs one — from what is stored -----------------


def test_a_key_made_and_revoked_before_any_request_closes_an_open_server(
    workspace: Workspace,
) -> None:
    agents_with_notes(workspace, "ops")
    root = ("--root", str(workspace.root))
    with RunningApi(workspace) as client:  # loopback, no keys: open at start
        make_key(workspace, "brief", "read")
        assert cli("keys", "revoke", "brief", *root).code == 0  # before any request came
        refused = client.get("/api/v1/agents")
        assert refused.status_code == 401 and "none is live" in refused.json()["message"]
    with RunningApi(workspace) as client:  # started after: closed from the start
        assert client.get("/api/v1/agents").status_code == 401
