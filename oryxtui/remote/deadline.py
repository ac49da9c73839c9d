"""A total deadline for every call to a server, kept at the socket: each read and write of a
call waits at most what is left of its time — the connection, the headers and the body alike
(a server that sends a byte a second cannot hold a call past its deadline, however the bytes
come) — and every socket the client opened can be shut down at once, from any thread, so
quitting never waits on the network."""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading
import time
import weakref
from collections.abc import Iterable, Iterator
from typing import Any

import httpcore
import httpx

_calls = threading.local()  # the deadline of the call this thread is making, if any


@contextlib.contextmanager
def within(seconds: float) -> Iterator[None]:
    """The calls made inside end by `seconds` from now (a nested deadline never extends the
    one around it)."""
    outer: float | None = getattr(_calls, "deadline", None)
    at = time.monotonic() + seconds
    _calls.deadline = at if outer is None else min(at, outer)
    try:
        yield
    finally:
        _calls.deadline = outer


def expired() -> bool:
    """This thread's call has run out of time."""
    at: float | None = getattr(_calls, "deadline", None)
    return at is not None and time.monotonic() >= at


def _bounded(timeout: float | None, ended: bool) -> float | None:
    """The socket timeout for one read or write: what is left of the call's time, at most."""
    if ended:
        raise httpcore.ReadError("the client is closing")
    at: float | None = getattr(_calls, "deadline", None)
    if at is None:
        return timeout
    left = at - time.monotonic()
    if left <= 0:
        raise httpcore.ReadTimeout("the call's time is up")
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    def __init__(self, stream: httpcore.NetworkStream, backend: DeadlineBackend) -> None:
        self._stream = stream
        self._backend = backend

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _bounded(timeout, self._backend.ended))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _bounded(timeout, self._backend.ended))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        bounded = _bounded(timeout, self._backend.ended)
        return self._backend.kept(self._stream.start_tls(ssl_context, server_hostname, bounded))

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)

    def shutdown(self) -> None:
        found = self._stream.get_extra_info("socket")
        if isinstance(found, socket.socket):
            with contextlib.suppress(OSError):
                found.shutdown(socket.SHUT_RDWR)


class DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's own sockets, each read and write bounded by the calling thread's deadline;
    `end()` shuts every one of them down."""

    def __init__(self) -> None:
        self._backend = httpcore.SyncBackend()
        self._open: weakref.WeakSet[_Stream] = weakref.WeakSet()
        self._lock = threading.Lock()
        self.ended = False

    def kept(self, stream: httpcore.NetworkStream) -> _Stream:
        wrapped = _Stream(stream, self)
        with self._lock:
            self._open.add(wrapped)
        return wrapped

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        bounded = _bounded(timeout, self.ended)
        return self.kept(
            self._backend.connect_tcp(host, port, bounded, local_address, socket_options)
        )

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        bounded = _bounded(timeout, self.ended)
        return self.kept(self._backend.connect_unix_socket(path, bounded, socket_options))

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)

    def end(self) -> None:
        """Every socket shut down: a read blocked on one (in any thread) returns at once."""
        self.ended = True
        with self._lock:
            streams = list(self._open)
        for stream in streams:
            stream.shutdown()


class DeadlineTransport(httpx.HTTPTransport):
    """httpx's transport over a DeadlineBackend (certificates checked as `verify` says): its
    connection pool is httpcore's, made as httpx makes it, with the backend given (httpx's
    own constructor makes only the pool, so it is not called)."""

    def __init__(self, verify: ssl.SSLContext | bool = True) -> None:
        self.backend = DeadlineBackend()
        limits = httpx.Limits()
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(verify=verify),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=self.backend,
        )
