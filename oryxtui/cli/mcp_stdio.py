"""`oryxtui mcp --agent NAME`: the agent's memory as an MCP server on stdio, for Claude Code,
Cursor, Codex and any client that launches a local server (`/mcp` of `oryxtui serve` is the
same over HTTP)."""

from __future__ import annotations

import argparse

from oryxtui.cli.common import EXIT_OK, TOP, checked_agent
from oryxtui.extras import require
from oryxtui.places import workspace_place


@TOP.command(
    "mcp",
    "the agent's memory as an MCP server on stdio (needs the mcp extra)",
    agent=True,
)
def mcp(args: argparse.Namespace) -> int:
    require("mcp", "The MCP server")
    place = workspace_place(args.root)
    agent = checked_agent(args, place)
    from oryxtui.mcp.stdio import serve_stdio

    serve_stdio(place, agent)
    return EXIT_OK
