"""`oryxtui memory review [approve|reject] [ID…]`: what agents wrote that awaits a person's
approval, and acting on it (for scripts, and CI of agent configurations)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from oryxtui.cli.common import (
    EXIT_OK,
    MEMORY,
    arg,
    checked_agent,
    entry_json,
    memories_of,
    open_place,
    print_json,
    say,
    show,
)
from oryxtui.cli.memory import replace_command
from oryxtui.errors import UsageError
from oryxtui.memory.history.records import OP_LABELS
from oryxtui.memory.service.reviewing import Approved
from oryxtui.phrases import agent_label, entries

if TYPE_CHECKING:
    from oryxtui.memory.format import MemoryEntry
    from oryxtui.places import Memory, Place


@MEMORY.command(
    "review",
    "what agents wrote that awaits your approval; `approve [ID…]` or `reject ID…` acts on it",
    arg("action", nargs="?", choices=["list", "approve", "reject"], default="list"),
    arg("ids", nargs="*", metavar="ID", help="entries to act on (approve alone: all of them)"),
    arg("--all", action="store_true", help="every agent's and the global memory's (list only)"),
    agent=True,
    json=True,
)
def review(args: argparse.Namespace) -> int:
    place = open_place(args)
    service = place.memory
    if args.action != "list":
        return _decide(args, place)
    agents = memories_of(args, place)
    found = [(agent, place.awaiting(agent)) for agent in agents]
    hints = [(agent, _suggestions(service, agent)) for agent in agents]
    if args.json:
        may_replace = [
            {"agent": agent, "old": entry_json(old), "new": entry_json(new), "change": n}
            for agent, items in hints
            for old, new, n in items
        ]
        print_json(
            {"awaiting": [item for _, items in found for item in items], "may_replace": may_replace}
        )
        return EXIT_OK
    waiting = [(agent, items) for agent, items in found if items]
    if not waiting and not any(items for _, items in hints):
        sys.stdout.write("Nothing awaits review.\n")
        return EXIT_OK
    lines = _may_replace(hints)
    for agent, items in waiting:
        lines.append(f"{agent_label(agent)} — {entries(len(items))} awaiting review\n")
        for item in items:
            mark = "held " if item["held"] else "     "
            proposes = item.get("proposes", "save")
            lines.append(
                f"  {mark}{item['id']}  {item['time'] or '?'}  {item['scope']:<8}  "
                f"{'(delete) ' if proposes == 'delete' else ''}{item['content']}\n"
            )
            was = item.get("was")
            if was and proposes != "delete":
                lines.append(f"       was: {was['scope']:<8}  {was['content']}\n")
            where = f" (session {item['session']}, turn {item['turn']})" if item["session"] else ""
            # the phrases of `memory log` and the dashboard: "saved by", "held for review by"
            what = (
                f"{proposes} held for review"
                if item["held"]
                else OP_LABELS.get(item["op"], item["op"])
            )
            lines.append(f"       {what} by {item['by']}{where}\n")
            turn = item.get("turn_text")
            if turn:
                lines.append(f"       user: {turn['user']}\n       reply: {turn['reply']}\n")
    show("".join(lines))
    return EXIT_OK


Suggested = list[tuple["MemoryEntry", "MemoryEntry", int]]  # (older, newer, the save's change)


def _suggestions(service: Memory, agent: str | None) -> Suggested:
    """What saves probably replace in the agent's memory (none where no history is kept)."""
    try:
        return service.suggestions(agent)
    except UsageError:
        return []


def _may_replace(
    hints: list[tuple[str | None, list[tuple[MemoryEntry, MemoryEntry, int]]]],
) -> list[str]:
    lines = []
    for agent, items in hints:
        if not items:
            continue
        lines.append(f"{agent_label(agent)} — {len(items)} may replace an older entry\n")
        for old, new, _ in items:
            lines.append(f"       {new.id}  {new.time or '?'}  {new.content}\n")
            lines.append(f"       may replace {old.id}  {old.time or '?'}  {old.content}\n")
            lines.append(f"       {replace_command(agent, old.id, new.id)}\n")
    return lines


def _decide(args: argparse.Namespace, place: Place) -> int:
    """`approve` or `reject`: what was done (and, approving, what could not be)."""
    if args.all:
        raise UsageError("Approve or reject one agent's entries at a time (--agent NAME).")
    agent = checked_agent(args, place)
    service = place.memory
    if args.action == "approve":
        done = service.approve(agent, args.ids or None)
    else:
        done = Approved(service.reject(agent, args.ids))
    if args.json:
        told = {"agent": agent, args.action + "d": [entry_json(e) for e in done]}
        if args.action == "approve":
            told["not_approved"] = done.not_made_json()
        print_json(told)
        return EXIT_OK
    verb = "Approved" if args.action == "approve" else "Rejected"
    sys.stdout.write(f"{verb} {entries(len(done))} of {agent_label(agent)}.\n")
    for _, why in done.not_made:
        say(f"oryxtui: not approved: {why}")
    return EXIT_OK
