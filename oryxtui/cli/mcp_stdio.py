"""`oryxtui mcp --agent NAME`: the agent's memory as an MCP server on stdio, for Claude Code,
Cursor, Codex and any client that launches a local server (`/mcp` of `oryxtui serve` is the
same over HTTP); `oryxtui mcp config CLIENT` prints the set-up for a client, as pasted."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

from oryxtui.cli.common import EXIT_OK, TOP, arg, checked_agent, say
from oryxtui.errors import UsageError
from oryxtui.extras import install_command, missing, require
from oryxtui.places import workspace_place

# Where each client keeps its servers: what to do with what `mcp config` prints.
CLIENTS = {
    "claude-code": "Run it in a shell: it adds the server to Claude Code.",
    "claude-desktop": "Paste it into claude_desktop_config.json (~/Library/Application "
    "Support/Claude/ on macOS, %APPDATA%\\Claude\\ on Windows), then restart Claude.",
    "cursor": "Paste it into ~/.cursor/mcp.json (every project) or .cursor/mcp.json (this one).",
    "windsurf": "Paste it into ~/.codeium/windsurf/mcp_config.json.",
    "vscode": "Paste it into .vscode/mcp.json of the project.",
    "codex": "Paste it into ~/.codex/config.toml.",
}


@TOP.command(
    "mcp",
    "the agent's memory as an MCP server on stdio (needs the mcp extra); `mcp config CLIENT` "
    "prints what to paste into a client (" + ", ".join(CLIENTS) + ")",
    arg("action", nargs="?", choices=["config"], help="config: print a client's set-up"),
    arg("client", nargs="?", choices=list(CLIENTS), help="the client to set up"),
    agent=True,
)
def mcp(args: argparse.Namespace) -> int:
    place = workspace_place(args.root)
    agent = checked_agent(args, place)
    if args.action == "config":
        if args.client is None:
            raise UsageError(f"Name the client to set up: {', '.join(CLIENTS)}.")
        root = place.watched()
        assert root is not None  # a workspace here (servers have /mcp of `oryxtui serve`)
        sys.stdout.write(snippet(args.client, launch_args(agent, root.root)))
        say(f"oryxtui: {CLIENTS[args.client]}")
        if missing("mcp"):
            say(f"oryxtui: the server needs the mcp extra first: {install_command('mcp')}")
        return EXIT_OK
    require("mcp", "The MCP server")
    from oryxtui.mcp.stdio import serve_stdio

    serve_stdio(place, agent)
    return EXIT_OK


def launch_args(agent: str | None, root: Path) -> list[str]:
    """The command a client runs, by absolute paths: this oryxtui (its script, or this Python
    running it as a module) on this workspace."""
    script = Path(sys.argv[0])
    if script.name == "oryxtui" and script.exists():
        command = [str(script.absolute())]
    else:
        command = [sys.executable, "-m", "oryxtui"]
    return [*command, "mcp", *(["--agent", agent] if agent else []), "--root", str(root)]


def snippet(client: str, argv: list[str]) -> str:
    """What to paste for `client`, running `argv`."""
    command, args = argv[0], argv[1:]
    if client == "claude-code":
        return f"claude mcp add oryx -- {shlex.join(argv)}\n"
    if client == "codex":
        return f"[mcp_servers.oryx]\ncommand = {json.dumps(command)}\nargs = {json.dumps(args)}\n"
    server: dict[str, object] = {"command": command, "args": args}
    if client == "vscode":
        return json.dumps({"servers": {"oryx": {"type": "stdio", **server}}}, indent=2) + "\n"
    return json.dumps({"mcpServers": {"oryx": server}}, indent=2) + "\n"
