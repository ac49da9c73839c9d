"""What the MCP tests share: a client session over streamable HTTP with a key, the raw
`initialize` a client sends first, and waiting on a condition with a deadline."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.support import bearer


@asynccontextmanager
async def http_session(
    url: str,
    key: str | None,
    agent: str,
    client_info: types.Implementation,
    heard: Callable[[Any], Any] | None = None,
    timeout: float = 30,
    mode: Any = "legacy",  # the SDK's Literal
) -> AsyncIterator[Client]:
    """An MCP client on `url`/mcp/agents/`agent` with `key` as its bearer (None: no key), of
    the 2025 protocol (`legacy`) or the newest both speak (`auto`)."""
    headers = {} if key is None else bearer(key)
    async with (
        httpx.AsyncClient(headers=headers, timeout=timeout) as http,
        Client(
            streamable_http_client(f"{url}/mcp/agents/{agent}", http_client=http),
            mode=mode,
            client_info=client_info,
            message_handler=heard,
        ) as client,
    ):
        yield client


def initialize(client: str, id: int = 1) -> dict[str, Any]:
    """The `initialize` request of a 2025-protocol client called `client`."""
    return {
        "jsonrpc": "2.0",
        "id": id,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": client, "version": "0"},
        },
    }


async def until(condition: Callable[[], object], timeout: float = 15) -> None:
    with anyio.fail_after(timeout):
        while not condition():
            await anyio.sleep(0.02)
