"""`oryxtui mcp`: one agent's memory served over stdio to the client that launched it. Standard
output carries only the protocol; anything said besides goes to standard error. The process
watches the workspace (and listens to a shared database) as the server does, so a change by
any writer reaches the client's subscriptions."""

from __future__ import annotations

import anyio

from oryxtui.mcp.server import MemoryServer
from oryxtui.places import Here


def serve_stdio(place: Here, agent: str | None) -> None:
    """Serve until the client closes standard input."""
    server = MemoryServer(place, agent)

    async def main() -> None:
        async with server.following():
            await server.run_stdio()

    anyio.run(main)
