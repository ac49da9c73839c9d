"""`oryxtui memory replace`: facts that change — one entry takes another's place (the old one
leaves the memory and stays in the history, replaced)."""

from __future__ import annotations

import argparse
import sys

from oryxtui.cli.common import (
    EXIT_OK,
    MEMORY,
    arg,
    entry_json,
    memory_service,
    print_json,
    show,
)
from oryxtui.errors import UsageError
from oryxtui.phrases import agent_label


@MEMORY.command(
    "replace",
    "replace an entry by what is true now: a new entry stamped now takes its place (the old "
    "one leaves the memory and stays in the history, replaced); --by names an entry already "
    "there to take its place",
    arg("id", metavar="ID", help="the entry no longer true (memory show --json, recall --json)"),
    arg("text", metavar="TEXT", nargs="?", help="what is true now; '-' reads standard input"),
    arg("--by", metavar="NEW_ID", help="an entry already in the memory that replaces it"),
    agent=True,
    json=True,
)
def replace(args: argparse.Namespace) -> int:
    if (args.text is None) == (args.by is None):
        raise UsageError("Give the text that is true now, or --by the id of an entry that says it.")
    service, agent = memory_service(args)
    if args.by is not None:
        old = service.supersede(agent, args.id, args.by)
        now = service.snapshot(agent)
        new = next((e for e in [*now.core, *now.archival] if e.id == args.by), None)
    else:
        text = sys.stdin.read() if args.text == "-" else args.text
        old, new = service.replace(agent, args.id, text)
    if args.json:
        told = None if new is None else entry_json(new)
        print_json({"agent": agent, "replaced": entry_json(old), "entry": told})
        return EXIT_OK
    where = agent_label(agent)
    show(f"Replaced in {where}: {old.line}\n")
    if new is not None:
        show(f"  by (id {new.id}): {new.line}\n")
    return EXIT_OK
