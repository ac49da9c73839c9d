"""One oryxtui server, over HTTP: every answer read as untrusted (the envelope checked, its
warnings passed on as notices), every refusal the same error, with the same exit code, as
the command would meet locally."""

from __future__ import annotations

import contextlib
import json
import socket
import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import quote, urlsplit

import httpx

from oryxtui import errors, notices
from oryxtui.addresses import AddressError, web_address
from oryxtui.errors import OryxError, ServiceUnavailable, Unreachable, UsageError
from oryxtui.remote.deadline import DeadlineTransport, expired, within

TIMEOUT_SECONDS = 30.0  # a whole call: connecting, the headers and the answer, however slow
ANSWER_SECONDS = 120.0  # … of a call whose answer may be a whole memory
MAX_ANSWER_BYTES = 8 << 20  # the largest answer read …
MAX_MEMORY_BYTES = 64 << 20  # … and of a whole memory (100,000 entries take about 30 MB)
MAX_LINE_BYTES = 1 << 20  # the longest line of an event stream
GLOBAL_PATH = "__global__"  # the global memory's name in the API's paths

# The error a status stands for: the same class, so the same exit code, as locally.
_BY_STATUS: dict[int, type[OryxError]] = {
    400: errors.UsageError,
    401: errors.Unauthenticated,
    403: errors.Forbidden,
    404: errors.NotFound,
    409: errors.StaleEntry,
    413: errors.UsageError,
    415: errors.UsageError,
    422: errors.AgentDefinitionError,
    429: errors.TooManyRequests,
    502: errors.ProviderError,
    503: errors.ServiceUnavailable,
}


# What a lost connection was, in words.
_LOST: dict[type[Exception], str] = {
    httpx.ConnectTimeout: "no answer to connect",
    httpx.ReadTimeout: "no answer in time",
    httpx.WriteTimeout: "no answer in time",
    httpx.PoolTimeout: "no answer in time",
}


def _not_connected(text: str) -> str:
    """Why a connection could not be made, in words."""
    if "CERTIFICATE" in text.upper() or "SSL" in text.upper():
        return "its TLS certificate is not trusted here; name its CA as ca_cert in [remotes]"
    if "refused" in text.lower():
        return "connection refused"
    if "name" in text.lower() and ("known" in text.lower() or "resolution" in text.lower()):
        return "its host name is unknown"
    return "no connection"


class ServerUnreachable(Unreachable):
    """The server does not answer (down, the network, a wrong URL): what was read last is
    still worth showing (exit code 1, HTTP 503, as a database out of reach)."""


def api_base(url: str) -> str:
    """`https://host:8765` (or with `/api/v1`) → the API's base URL; one sentence if `url` is
    no http(s) URL."""
    try:
        address = web_address(url, what="a server URL")
    except AddressError as exc:
        raise UsageError(f"{exc}.") from None
    if address.has_credentials:  # said without the URL: it holds a password
        raise UsageError(
            "A server URL holds no user name or password (they would show in every message, "
            "and replace the key): give the key in an environment variable (--key-env)."
        )
    parts = address.parts
    path = parts.path.rstrip("/")
    if not path.endswith("/api/v1"):
        path += "/api/v1"
    return f"{parts.scheme}://{parts.netloc}{path}"


def agent_path(agent: str | None) -> str:
    return f"/agents/{quote(agent or GLOBAL_PATH, safe='')}"


class Server:
    """The API of one server, with its key (never shown in any message)."""

    def __init__(
        self,
        url: str,
        key: str | None = None,
        name: str | None = None,
        ca_cert: str | None = None,
        timeout: float = TIMEOUT_SECONDS,
    ) -> None:
        self.base = api_base(url)
        self.name = name or urlsplit(self.base).netloc
        # Answers come as they are: no compressed answer to inflate past any limit.
        headers = {"Accept-Encoding": "identity"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        verify: ssl.SSLContext | bool = True
        if ca_cert:
            try:
                verify = ssl.create_default_context(cafile=ca_cert)
            except (OSError, ssl.SSLError) as exc:
                raise UsageError(
                    f"The CA certificate {ca_cert} for {self.name} cannot be used ({exc}); "
                    "name a PEM file in [remotes]."
                ) from None
        self._transport = DeadlineTransport(verify)
        self._client = httpx.Client(
            base_url=self.base,
            headers=headers,
            timeout=httpx.Timeout(timeout, connect=min(timeout, 5.0)),
            transport=self._transport,
            follow_redirects=False,
        )
        self.timeout = timeout
        self.key = key
        self._streams: set[httpx.Response] = set()  # open now, closed by `interrupt`
        self.answered = False  # it has answered once: losing it now is its going away
        # Bytes received: in answers, and on event streams (what a dashboard costs a link).
        self.received = 0
        self.streamed = 0

    def close(self) -> None:
        self.hang_up()
        self._client.close()

    def hang_up(self) -> None:
        """End every call, answer and stream, now and from now on (from any thread): every
        socket is shut down, so a read blocked on one returns at once — quitting never waits
        on the network."""
        self._transport.backend.end()
        self.interrupt()

    def interrupt(self) -> None:
        """End every answer and stream being read (from another thread): its reader sees it
        closed at once (the socket is shut down first: closing alone may not wake a read)."""
        for response in list(self._streams):
            with contextlib.suppress(Exception):
                stream = response.extensions.get("network_stream")
                found = stream.get_extra_info("socket") if stream is not None else None
                if isinstance(found, socket.socket):
                    found.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(Exception):
                response.close()

    # Plain requests ----------------------------------------------------------------------

    def get(self, path: str, **params: Any) -> Any:
        return self.call("GET", path, params=params)

    def get_memory(self, path: str, **params: Any) -> Any:
        """A GET whose answer may be a whole memory: more time and bytes than a plain one."""
        return self.call("GET", path, params=params, seconds=ANSWER_SECONDS, limit=MAX_MEMORY_BYTES)

    def post(self, path: str, body: Any = None, seconds: float | None = None) -> Any:
        return self.call("POST", path, body=body if body is not None else {}, seconds=seconds)

    def patch(self, path: str, body: Any) -> Any:
        return self.call("PATCH", path, body=body)

    def delete(self, path: str) -> Any:
        return self.call("DELETE", path)

    def call(
        self,
        method: str,
        path: str,
        params: dict[str, Any] | None = None,
        body: Any = None,
        seconds: float | None = None,
        limit: int | None = None,
    ) -> Any:
        """The answer's `data`, within `seconds` in all (connecting, headers, answer) and at
        most `limit` bytes; its warnings become notices; a refusal its error."""
        query = {k: v for k, v in (params or {}).items() if v is not None}
        seconds = self.timeout if seconds is None else seconds
        with within(seconds):
            try:
                with self._client.stream(
                    method, path, params=query, json=body if method != "GET" else None
                ) as response:
                    content = self._whole(response, limit or MAX_ANSWER_BYTES)
            except (httpx.TransportError, httpx.StreamClosed) as exc:
                if expired():
                    raise ServiceUnavailable(
                        f"The server {self.name} did not answer within {seconds:g} s; try "
                        "again, or ask its operator."
                    ) from None
                raise self.unreachable(exc) from None
        self.answered = True
        return self.data(response, content)

    def _whole(self, response: httpx.Response, limit: int) -> bytes:
        """The answer's bytes: at most `limit`, counted as they come (a server that sends
        too much gets one sentence, not the client's memory; one that sends a byte at a
        time meets the call's deadline); `interrupt` ends the read from another thread."""
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise self._too_much(limit)
        content = bytearray()
        self._streams.add(response)
        try:
            for chunk in response.iter_raw():
                self.received += len(chunk)
                if len(content) + len(chunk) > limit:
                    raise self._too_much(limit)
                content += chunk
        finally:
            self._streams.discard(response)
        return bytes(content)

    def _too_much(self, limit: int) -> ServiceUnavailable:
        return ServiceUnavailable(
            f"The server {self.name} sent an answer over {limit >> 20} MB; none of it was used."
        )

    def data(self, response: httpx.Response, content: bytes | None = None) -> Any:
        try:
            answer = json.loads(response.content if content is None else content)
        except (ValueError, RecursionError):
            answer = None
        if not isinstance(answer, dict) or "code" not in answer:
            raise ServiceUnavailable(
                f"The server {self.name} answered something that is not oryxtui's API (HTTP "
                f"{response.status_code}); check the URL."
            )
        message = answer.get("message")
        message = message if isinstance(message, str) and message else "refused"
        for warning in answer.get("warnings") or []:
            if isinstance(warning, str):
                notices.notice(f"{self.name}: {warning}")
        if response.status_code >= 400 or answer.get("code") not in (0, None):
            error = _BY_STATUS.get(response.status_code, OryxError)
            raise error(message)  # as the command would say it locally
        return answer.get("data")

    def unreachable(self, error: Exception) -> ServerUnreachable:
        """One sentence for a server lost, in words (the transport's own text — "incomplete
        chunked read" — is no help): one that answered before went away; one never reached
        may be down or wrongly named."""
        reason = _LOST.get(type(error), "the connection broke")
        if isinstance(error, httpx.ConnectError):
            reason = _not_connected(str(error))
        if self.answered:
            return ServerUnreachable(
                f"The server {self.name} went away ({reason}); what it showed last stays, "
                "and oryxtui reconnects when it is back."
            )
        return ServerUnreachable(
            f"The server {self.name} cannot be reached ({reason}); check that it runs and "
            "that the URL is right."
        )

    # Streams -------------------------------------------------------------------------------

    @contextmanager
    def stream(
        self,
        method: str,
        path: str,
        body: Any = None,
        headers: dict[str, str] | None = None,
        read_timeout: float | None = None,
    ) -> Iterator[Iterator[str]]:
        """The lines of an event stream; a refusal raises its error before any line."""
        timeout = httpx.Timeout(TIMEOUT_SECONDS, connect=5.0, read=read_timeout)
        try:
            with self._client.stream(
                method, path, json=body, headers=headers or {}, timeout=timeout
            ) as response:
                if "text/event-stream" not in response.headers.get("content-type", ""):
                    self.data(response, self._whole(response, MAX_ANSWER_BYTES))
                    raise ServiceUnavailable(f"The server {self.name} sent no event stream.")
                self._streams.add(response)
                try:
                    yield self._lines(response)
                finally:
                    self._streams.discard(response)
        except (httpx.TransportError, httpx.StreamClosed) as exc:
            raise self.unreachable(exc) from None

    def _lines(self, response: httpx.Response) -> Iterator[str]:
        """An event stream's lines (split at CR, LF or CRLF, as SSE says), none longer than
        MAX_LINE_BYTES: a server that never ends a line is one sentence, not a client
        growing without bound."""
        pending = b""
        for chunk in response.iter_raw():
            self.streamed += len(chunk)
            pending += chunk
            while True:
                cut = min(
                    (i for i in (pending.find(b"\n"), pending.find(b"\r")) if i >= 0), default=-1
                )
                if cut < 0 or (pending[cut : cut + 1] == b"\r" and cut + 1 == len(pending)):
                    break  # a CR at the very end may be half of a CRLF
                line, step = pending[:cut], 2 if pending[cut : cut + 2] == b"\r\n" else 1
                pending = pending[cut + step :]
                yield line.decode("utf-8", "replace")
            if len(pending) > MAX_LINE_BYTES:
                raise ServiceUnavailable(
                    f"The server {self.name} sent an event line over "
                    f"{MAX_LINE_BYTES >> 20} MB; the stream was closed."
                )


def events(lines: Iterator[str]) -> Iterator[tuple[str | None, dict[str, Any]]]:
    """(id, data) of each event in an SSE stream's lines; a malformed event is skipped and
    counted (the server is untrusted too)."""
    event_id: str | None = None
    data: list[str] = []
    for line in lines:
        if line == "":
            if data:
                try:
                    parsed = json.loads("\n".join(data))
                except ValueError:
                    parsed = None
                if isinstance(parsed, dict) and isinstance(parsed.get("kind"), str):
                    yield event_id, parsed
                else:
                    notices.skipped(1, "event", "the server's event stream")
            data = []
            continue
        if line.startswith(":"):
            continue  # a heartbeat
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "id":
            event_id = value
        elif field == "data":
            data.append(value)
