"""MCP over streamable HTTP at /mcp of the real `oryxtui serve` (its own process, 127.0.0.1),
with per-user keys: what each scope may do, agent patterns, a revoked key refused at once,
the guard in front, malformed requests answered and the server serving on."""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from oryxtui.config import Settings
from oryxtui.mcp.server import memory_uri
from oryxtui.memory import MemoryService
from oryxtui.workspace import Workspace, init_workspace
from tests.mcp_support import http_session, until
from tests.serve_process import ServeProcess
from tests.support import agents_with_notes, bearer, cli, make_key

CURSOR = types.Implementation(name="cursor", version="1.0")


# One worker for the module: its tests share one server.
pytestmark = pytest.mark.xdist_group("mcp-http")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Workspace, str]]:
    workspace = init_workspace(tmp_path_factory.mktemp("mcp") / "project")
    agents_with_notes(workspace, "ops", "ops-eu", "atlas")
    make_key(workspace, "admin", "admin")  # from now on every request needs a key
    with ServeProcess(workspace.root) as server:
        yield workspace, server.url


def session(url: str, key: str | None, agent: str = "ops", heard: Any = None) -> Any:
    return http_session(url, key, agent, CURSOR, heard)


async def call(client: Client, name: str, arguments: dict[str, Any]) -> tuple[bool, str]:
    result = await client.call_tool(name, arguments)
    text = result.content[0]
    assert isinstance(text, types.TextContent)
    return bool(result.is_error), text.text


async def refusal(url: str, key: str | None, agent: str = "ops") -> str:
    """The sentence a client is refused with before any tool runs."""
    with pytest.raises(BaseException) as refused:  # the SDK's task group wraps its MCPError
        async with session(url, key, agent) as client:
            await client.list_tools()
    found: BaseException = refused.value
    while isinstance(found, BaseExceptionGroup):
        found = found.exceptions[0]
    assert isinstance(found, MCPError), repr(found)
    return str(found)


def memory_of(workspace: Workspace) -> MemoryService:
    return MemoryService.open(workspace, Settings())


async def test_a_write_key_saves_as_the_client_via_its_key(served: tuple[Workspace, str]) -> None:
    workspace, url = served
    key = make_key(workspace, "alice", "write", "ops*")
    async with session(url, key) as client:
        failed, answer = await call(client, "save_memory", {"content": "rotate the TLS certs"})
        assert not failed and json.loads(answer)["held"] is True
        failed, found = await call(client, "recall_memory", {"query": "note"})
        assert not failed and "note of ops" in found
    [held] = [i for i in memory_of(workspace).held("ops") if "TLS" in i.entry.content]
    assert (held.record.actor, held.record.via) == ("mcp:cursor", "api:alice")
    async with session(url, key, "ops-eu") as client:  # the pattern reaches ops-eu too
        failed, _ = await call(client, "show_memory", {})
        assert not failed
    said = await refusal(url, key, "atlas")
    assert "does not reach agent 'atlas'" in said and "ops*" in said


async def test_a_read_key_recalls_and_shows_but_cannot_save(served: tuple[Workspace, str]) -> None:
    workspace, url = served
    key = make_key(workspace, "reader", "read")
    before = workspace.memory_file("atlas").read_bytes()
    async with session(url, key, "atlas") as client:
        # Offered only what it may call (issue 46): no save or replace in its list …
        listed = {tool.name for tool in (await client.list_tools()).tools}
        assert listed == {"recall_memory", "search_conversations", "show_memory"}
        failed, shown = await call(client, "show_memory", {})
        assert not failed and "core of atlas" in shown
        failed, found = await call(client, "recall_memory", {"query": "atlas"})
        assert not failed and "note of atlas" in found
        failed, said = await call(client, "save_memory", {"content": "not allowed"})  # … nor runs
        assert failed and "has the read scope; saving to memory needs write" in said
        failed, said = await call(client, "search_conversations", {"query": "deploy"})
        assert not failed and json.loads(said)["count"] == 0
    assert workspace.memory_file("atlas").read_bytes() == before
    assert memory_of(workspace).held("atlas") == []


async def test_a_revoked_key_is_refused_at_once(served: tuple[Workspace, str]) -> None:
    workspace, url = served
    key = make_key(workspace, "carol", "write")
    async with session(url, key) as client:
        failed, _ = await call(client, "show_memory", {})
        assert not failed
        assert cli("keys", "revoke", "carol", "--root", str(workspace.root)).code == 0
        with pytest.raises(MCPError, match="revoked"):
            await client.call_tool("save_memory", {"content": "after revocation"})
    assert not any("after revocation" in i.entry.content for i in memory_of(workspace).held("ops"))
    assert "revoked" in await refusal(url, key)


async def test_no_key_or_a_wrong_one_is_refused_in_one_sentence(
    served: tuple[Workspace, str],
) -> None:
    _, url = served
    assert "Missing key" in await refusal(url, None)
    assert "Wrong token or key" in await refusal(url, "not-a-key")
    said = await refusal(url, "oryx_abc_def")
    assert "\n" not in said and said.endswith(".")


async def test_the_guard_and_bad_requests_are_json_rpc_errors(
    served: tuple[Workspace, str],
) -> None:
    workspace, url = served
    key = make_key(workspace, "dave", "write")
    headers = {
        **bearer(key),
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    with httpx.Client(timeout=30) as http:
        cases = [
            ({"Host": "evil.example"}, "/mcp/agents/ops", b"{}", 403, "host name"),
            ({"Origin": "http://evil.example"}, "/mcp/agents/ops", b"{}", 403, "origin"),
            ({}, "/mcp/elsewhere", b"{}", 404, "/mcp/agents/NAME"),
            ({}, "/mcp/agents/a b", b"{}", 404, "not an agent name"),
            ({}, "/mcp/agents/nobody", b"{}", 404, "no agent 'nobody'"),
            ({}, "/mcp/agents/ops", b"x" * 40_000, 413, "over 32 KB"),
        ]
        for extra, path, body, status, said in cases:
            answer = http.post(url + path, headers={**headers, **extra}, content=body)
            assert answer.status_code == status, (path, answer.text)
            error = answer.json()["error"]
            assert said in error["message"] and answer.json()["jsonrpc"] == "2.0"
        for body, code in (
            (b"{not json", -32700),
            (b'{"jsonrpc": "2.0", "id": 1, "method": 7}', -32600),
            (b"[]", -32600),
            (b'{"jsonrpc": "1.0", "id": 1, "method": "tools/list"}', -32600),
        ):
            answer = http.post(url + "/mcp/agents/ops", headers=headers, content=body)
            assert answer.status_code == 400, answer.text
            error = answer.json()["error"]
            assert error["code"] == code and error["message"].count(". ") == 0, error
            assert error["message"].endswith(".") and "pydantic" not in error["message"]
    async with session(url, key) as client:  # and it serves on
        failed, _ = await call(client, "recall_memory", {"query": "note"})
        assert not failed


def test_without_the_extra_mcp_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fastapi.testclient import TestClient

    from oryxtui import extras
    from oryxtui.api.app import create_api
    from oryxtui.cli.serve import _serve_mcp

    real = extras.missing
    monkeypatch.setattr(extras, "missing", lambda extra: ["mcp"] if extra == "mcp" else real(extra))
    workspace = agents_with_notes(init_workspace(tmp_path / "bare"), "ops")
    api = create_api(workspace, Settings())
    assert _serve_mcp(api) is False
    with TestClient(api, base_url="http://127.0.0.1") as client:
        answer = client.post("/mcp/agents/ops", json={})
    assert answer.status_code == 501
    assert "needs the mcp extra on the server: pip install" in answer.json()["error"]["message"]
    stdio = cli("mcp", "--agent", "ops", "--root", str(workspace.root))
    assert stdio.code == 2 and "needs the mcp extra" in stdio.stderr.splitlines()[-1]


async def test_subscribers_hear_changes_until_their_key_is_revoked(
    served: tuple[Workspace, str],
) -> None:
    workspace, url = served
    keep, lose = make_key(workspace, "erin", "read"), make_key(workspace, "frank", "read")
    told: dict[str, list[str]] = {"erin": [], "frank": []}

    def listener(name: str) -> Any:
        async def heard(message: Any) -> None:
            if isinstance(message, types.ResourceUpdatedNotification):
                told[name].append(message.params.uri)

        return heard

    async with (
        session(url, keep, "atlas", listener("erin")) as erin,
        session(url, lose, "atlas", listener("frank")) as frank,
    ):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the 2025 protocol's subscribe
            await erin.session.subscribe_resource(memory_uri("atlas"))
            await frank.session.subscribe_resource(memory_uri("atlas"))
        root = ("--root", str(workspace.root))
        assert cli("memory", "save", "--agent", "atlas", *root, "first change").code == 0
        await until(lambda: told["erin"] and told["frank"])
        assert cli("keys", "revoke", "frank", *root).code == 0
        told = {"erin": [], "frank": []}
        assert cli("memory", "save", "--agent", "atlas", *root, "second change").code == 0
        await until(lambda: told["erin"])
        await anyio.sleep(0.5)  # (nothing to wait for: what must not come)
        assert told["frank"] == []


async def test_clients_gone_mid_call_leave_the_server_serving(
    served: tuple[Workspace, str],
) -> None:
    workspace, url = served
    key = make_key(workspace, "gina", "write")
    for n in range(5):
        with anyio.move_on_after(0.05 * (n + 1)):  # cut off at another moment each time
            async with session(url, key) as client:
                for m in range(50):
                    await client.call_tool("save_memory", {"content": f"cut {n}-{m}"})
    async with session(url, key) as client:
        failed, _ = await call(client, "recall_memory", {"query": "note"})
        assert not failed
    held = [i.entry.content for i in memory_of(workspace).held("ops") if "cut " in i.entry.content]
    assert len(held) == len(set(held)) and all(c.count("-") == 1 for c in held)
