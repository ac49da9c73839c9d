"""`oryxtui agents list|new`: the workspace's agents."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from oryxtui.cli.common import AGENTS, EXIT_OK, arg, hint, open_place, print_json, show
from oryxtui.errors import OryxError
from oryxtui.workspace import find_workspace


@AGENTS.command(
    "list", "every agent: its core·archival counts and description", json=True, remote=True
)
def list_agents(args: argparse.Namespace) -> int:
    place = open_place(args)
    service = place.memory
    rows = []
    for name in sorted(place.known_agents()):
        row: dict[str, Any] = {"name": name, "description": "", "has_agent_md": True}
        try:
            definition = place.read_agent(name)
        except OryxError as exc:
            row["error"] = str(exc)
        else:
            row["has_agent_md"] = definition is not None
            row["description"] = definition.description if definition else ""
        try:
            snapshot = service.snapshot(name)
            row.update(core=len(snapshot.core), archival=len(snapshot.archival))
        except OryxError as exc:
            row.update(core=None, archival=None, error=row.get("error") or str(exc))
        rows.append(row)
    if args.json:
        print_json({"agents": rows})
        return EXIT_OK
    if not rows:
        hint(f"No agents in {place.root}; `oryxtui agents new NAME` makes one.")
        return EXIT_OK
    width = max(len(row["name"]) for row in rows)
    out = []
    for row in rows:
        counts = f"{row['core']}·{row['archival']}" if row["core"] is not None else "?"
        note = (
            row.get("error")
            or row["description"]
            or ("" if row["has_agent_md"] else "(no AGENT.md: memory only)")
        )
        out.append(f"{row['name'].ljust(width)}  {counts.rjust(9)}  {note}\n")
    show("".join(out))
    return EXIT_OK


@AGENTS.command(
    "new",
    "make an agent: its folder and an AGENT.md",
    arg("name", metavar="NAME", help="letters, digits, '_' and '-'"),
    arg("--description", metavar="TEXT", help="what the agent is for"),
)
def new_agent(args: argparse.Namespace) -> int:
    workspace = find_workspace(args.root)
    path = workspace.create_agent(args.name, args.description or "")
    sys.stdout.write(f"Created agent {args.name}: {path} (edit it to give the agent its role).\n")
    return EXIT_OK
