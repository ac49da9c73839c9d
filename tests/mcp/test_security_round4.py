"""Security round 4 (issue 43), items 7–9, against the real `oryxtui serve` over HTTP, through
the official SDK client and raw requests: streams of both protocols end when their key is
revoked, a listen stream for another agent's resource is refused, sessions and streams are
counted per key, and a session answers only the key that opened it."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import mcp_types as types
import pytest
from mcp.client.subscriptions import SubscriptionLost
from mcp.shared.exceptions import MCPError

from oryxtui.mcp.server import memory_uri
from oryxtui.workspace import Workspace, init_workspace
from tests.mcp_support import http_session, initialize
from tests.serve_process import ServeProcess
from tests.support import agents_with_notes, bearer, cli, make_key

CLIENT = types.Implementation(name="probe", version="1")
LIMITS = {
    "ORYXTUI_API__STREAMS_PER_KEY": "3",
    "ORYXTUI_MCP__SESSIONS_PER_KEY": "4",
    "ORYXTUI_API__HEARTBEAT_SECONDS": "1",
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


# One worker for the module: its tests share one server.
pytestmark = pytest.mark.xdist_group("mcp-round4")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Workspace, str]]:
    workspace = init_workspace(tmp_path_factory.mktemp("mcp4") / "project")
    agents_with_notes(workspace, "ops", "atlas")
    make_key(workspace, "admin", "admin")
    with ServeProcess(workspace.root, env=LIMITS) as server:
        yield workspace, server.url


def opened(url: str, key: str, agent: str = "atlas") -> tuple[httpx.Response, str | None]:
    """A raw `initialize`: the answer and the session it opened."""
    answer = httpx.post(
        f"{url}/mcp/agents/{agent}",
        json=initialize("raw"),
        headers={**ACCEPT, **bearer(key)},
        timeout=30,
    )
    return answer, answer.headers.get("mcp-session-id")


def on_session(url: str, key: str, session: str, message: dict[str, Any]) -> httpx.Response:
    headers = {**ACCEPT, **bearer(key), "mcp-session-id": session}
    return httpx.post(f"{url}/mcp/agents/atlas", json=message, headers=headers, timeout=30)


def revoke(workspace: Workspace, name: str) -> None:
    assert cli("keys", "revoke", name, "--root", str(workspace.root)).code == 0


async def test_a_listen_stream_ends_when_its_key_is_revoked(served: tuple[Workspace, str]) -> None:
    workspace, url = served
    key = make_key(workspace, "lena", "read")
    heard: list[str] = []
    async with http_session(url, key, "atlas", CLIENT, mode="auto") as client:
        assert client.protocol_version >= "2026"
        async with client.listen(resource_subscriptions=[memory_uri("atlas")]) as listening:
            root = ("--root", str(workspace.root))
            assert cli("memory", "save", "--agent", "atlas", *root, "heard").code == 0
            with anyio.fail_after(15):
                async for event in listening:
                    heard.append(str(event.uri))  # type: ignore[union-attr]
                    break
            revoke(workspace, "lena")
            with anyio.fail_after(15), pytest.raises(SubscriptionLost):
                async for event in listening:  # cut, as the REST stream is: the client is told
                    heard.append(str(event.uri))  # type: ignore[union-attr]
                    assert cli("memory", "save", "--agent", "atlas", *root, "after").code == 0
    assert heard[:1] == [memory_uri("atlas")] and len(heard) == 1


async def test_listening_to_another_agents_resource_is_refused(
    served: tuple[Workspace, str],
) -> None:
    workspace, url = served
    key = make_key(workspace, "otto", "read", "atlas")
    async with http_session(url, key, "atlas", CLIENT, mode="auto") as client:
        with pytest.raises(MCPError, match="No resource 'oryx://agents/ops/memory' here"):
            async with client.listen(resource_subscriptions=[memory_uri("ops")]):
                pass


def test_a_2025_session_stream_ends_when_its_key_is_revoked(
    served: tuple[Workspace, str],
) -> None:
    workspace, url = served
    key = make_key(workspace, "gus", "read")
    answer, session = opened(url, key)
    assert answer.status_code == 200 and session
    notice = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert on_session(url, key, session, notice).status_code == 202
    headers = {"Accept": "text/event-stream", **bearer(key), "mcp-session-id": session}
    with httpx.stream(
        "GET", f"{url}/mcp/agents/atlas", headers=headers, timeout=httpx.Timeout(30, read=20)
    ) as stream:
        assert stream.status_code == 200
        revoke(workspace, "gus")
        ended = time.monotonic() + 15
        with contextlib.suppress(httpx.RemoteProtocolError):  # ended, or cut mid-body
            for _ in stream.iter_raw():  # (silence past the read timeout fails the test)
                assert time.monotonic() < ended, "the stream outlived its key"


def test_sessions_and_streams_are_counted_per_key(served: tuple[Workspace, str]) -> None:
    workspace, url = served
    key, other = make_key(workspace, "hana", "read"), make_key(workspace, "ivo", "read")
    sessions = []
    for _ in range(4):
        answer, session = opened(url, key)
        assert answer.status_code == 200 and session
        sessions.append(session)
    refused, none = opened(url, key)
    assert refused.status_code == 429 and none is None
    said = refused.json()["error"]["message"]
    assert said.startswith("api:hana has 4 MCP sessions open already, the most a key may")
    assert opened(url, other)[0].status_code == 200  # another key is not held back
    deleted = httpx.delete(
        f"{url}/mcp/agents/atlas",
        headers={**bearer(key), "mcp-session-id": sessions.pop()},
        timeout=30,
    )
    assert deleted.status_code < 300
    assert opened(url, key)[0].status_code == 200  # one ended: one may open
    # Streams: the REST event stream and the MCP streams count against one per-key cap.
    with httpx.Client(base_url=url, headers=bearer(key), timeout=30) as http:
        held = []
        for n in range(3):
            path = "/api/v1/events" if n == 0 else "/mcp/agents/atlas"
            extra = {} if n == 0 else {"Accept": "text/event-stream", "mcp-session-id": sessions[n]}
            stream = http.stream("GET", path, headers=extra)
            response = stream.__enter__()
            assert response.status_code == 200, response.read()
            held.append(stream)
        extra = {"Accept": "text/event-stream", "mcp-session-id": sessions[0]}
        with http.stream("GET", "/mcp/agents/atlas", headers=extra) as fourth:
            assert fourth.status_code == 429
            assert "event streams open already" in json.loads(fourth.read())["error"]["message"]
        for stream in held:
            stream.__exit__(None, None, None)


def test_a_session_answers_only_the_key_that_opened_it(served: tuple[Workspace, str]) -> None:
    workspace, url = served
    owner, other = make_key(workspace, "jo", "write"), make_key(workspace, "kai", "write")
    _, session = opened(url, owner)
    assert session
    notice = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert on_session(url, owner, session, notice).status_code == 202
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    assert on_session(url, other, session, listing).status_code == 404  # as if none
    taken = httpx.delete(
        f"{url}/mcp/agents/atlas", headers={**bearer(other), "mcp-session-id": session}
    )
    assert taken.status_code == 404
    assert on_session(url, owner, session, listing).status_code == 200  # still the owner's
