"""`oryxtui keys create|list|revoke`: the per-user keys `serve` accepts, kept (hashed) in the
workspace's database — oryxos.db, or the shared database every server on it reads."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from oryxtui.cli.common import EXIT_OK, KEYS, arg, hint, print_json, show, warn
from oryxtui.errors import NotFound
from oryxtui.places import workspace_place

if TYPE_CHECKING:
    from oryxtui.api.keys import KeyStore

SCOPES = (
    "metrics",
    "read",
    "write",
    "admin",
)  # `Scope`'s labels (a test holds them so): no import to list


def _store(args: argparse.Namespace) -> KeyStore:
    from oryxtui.api.keys import KeyStore

    return KeyStore(workspace_place(args.root).database)


@KEYS.command(
    "create",
    "make a key (shown once; only its hash is kept)",
    arg("name", metavar="NAME", help="who it is for; recorded as the actor of its changes"),
    arg("--scope", required=True, choices=SCOPES, help="what it may do"),
    arg("--agents", metavar="PATTERN", help="only these agents: globs, comma-separated"),
    json=True,
)
def create(args: argparse.Namespace) -> int:
    from oryxtui.api.keys import Scope, parse_agents

    agents = parse_agents(args.agents)
    scope = Scope.parse(args.scope)
    key = _store(args).create(args.name, scope, agents)
    if args.json:
        print_json({"name": args.name, "scope": scope.label, "key": key})
        return EXIT_OK
    reach = f" for agents {', '.join(agents)}" if agents else ""
    sys.stderr.write(
        f"Key {args.name!r} ({scope.label}{reach}) made. It is shown this once; "
        "keep it in a secret store (clients read it from an environment variable).\n"
    )
    sys.stdout.write(key + "\n")
    return EXIT_OK


@KEYS.command("list", "every key: its scope, agents, when made, last used, revoked", json=True)
def list_keys(args: argparse.Namespace) -> int:
    keys = _store(args).list()
    if args.json:
        print_json({"keys": [key.to_json() for key in keys]})
        return EXIT_OK
    if not keys:
        hint("No keys yet; `oryxtui keys create NAME --scope read` makes one.")
        return EXIT_OK
    width = max(len(key.name) for key in keys)
    lines = []
    for key in keys:
        state = (
            f"revoked {_shown_time(key.revoked_at)}"
            if key.revoked_at
            else (
                f"last used {_shown_time(key.last_used_at)}" if key.last_used_at else "never used"
            )
        )
        agents = ",".join(key.agents) if key.agents else "all agents"
        made = (
            f"made {_shown_time(key.created_at)}" if key.created_at else "made at an unknown time"
        )
        lines.append(f"{key.name.ljust(width)}  {key.scope:<5}  {agents}  {made}, {state}\n")
    show("".join(lines))
    return EXIT_OK


def _shown_time(moment: str) -> str:
    """A stored moment as the other lists show times: `2026-12-04 19:40`."""
    return moment.replace("T", " ")[:16]


@KEYS.command("revoke", "refuse a key from now on", arg("name", metavar="NAME"), json=True)
def revoke(args: argparse.Namespace) -> int:
    store = _store(args)
    if not store.revoke(args.name):
        raise NotFound(f"No live key named {args.name!r}; `oryxtui keys list` lists them.")
    last = not store.any_live()
    if args.json:
        print_json({"name": args.name, "revoked": True, "live_keys": not last})
    else:
        sys.stderr.write(f"Key {args.name!r} revoked; requests with it are refused.\n")
    if last:
        warn(
            "that was the last live key. Every server on this workspace now refuses every "
            "request until an admin makes a new one (`oryxtui keys create`); none of them "
            "opens."
        )
    return EXIT_OK
