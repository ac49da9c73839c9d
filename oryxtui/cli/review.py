"""`oryxtui memory review [approve|reject] [ID…]`: what agents wrote that awaits a person's
approval, and acting on it (for scripts, and CI of agent configurations)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from oryxtui.cli.common import (
    EXIT_OK,
    MEMORY,
    arg,
    checked_agent,
    entry_json,
    memories_of,
    open_workspace,
    print_json,
    service_of,
    show,
)
from oryxtui.errors import OryxError, UsageError
from oryxtui.phrases import agent_label, entries
from oryxtui.workspace import is_remote

if TYPE_CHECKING:
    from oryxtui.memory.service.reviewing import Awaiting

TURN_CHARS = 200


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
    workspace, settings = open_workspace(args)
    if is_remote(workspace):
        raise UsageError("Review runs on the server's host for now: run it there.")
    service = service_of(workspace, settings)
    if args.action != "list":
        if args.all:
            raise UsageError("Approve or reject one agent's entries at a time (--agent NAME).")
        agent = checked_agent(args, workspace)
        if args.action == "approve":
            done = service.approve(agent, args.ids or None)
        else:
            done = service.reject(agent, args.ids)
        verb = "Approved" if args.action == "approve" else "Rejected"
        if args.json:
            print_json({"agent": agent, args.action + "d": [entry_json(e) for e in done]})
        else:
            sys.stdout.write(f"{verb} {entries(len(done))} of {agent_label(agent)}.\n")
        return EXIT_OK
    turns = _turns(workspace, settings)
    found = [(agent, service.awaiting_review(agent)) for agent in memories_of(args, workspace)]
    if args.json:
        print_json(
            {
                "awaiting": [
                    {**item.to_json(agent), "turn_text": turns(item)}
                    for agent, items in found
                    for item in items
                ]
            }
        )
        return EXIT_OK
    waiting = [(agent, items) for agent, items in found if items]
    if not waiting:
        sys.stdout.write("Nothing awaits review.\n")
        return EXIT_OK
    lines = []
    for agent, items in waiting:
        lines.append(f"{agent_label(agent)} — {entries(len(items))} awaiting review\n")
        for item in items:
            mark = "held " if item.held else "     "
            entry = item.entry
            lines.append(
                f"  {mark}{entry.id}  {entry.time or '?'}  {entry.scope.value:<8}  "
                f"{entry.content}\n"
            )
            record = item.record
            where = f" (session {record.session}, turn {record.turn})" if record.session else ""
            lines.append(f"       {record.op} by {record.actor}{where}\n")
            turn = turns(item)
            if turn:
                lines.append(f"       user: {turn['user']}\n       reply: {turn['reply']}\n")
    show("".join(lines))
    return EXIT_OK


def _turns(workspace: Any, settings: Any) -> Any:
    """The user's message and the reply of the turn that wrote an entry (None: not known)."""
    from oryxtui.agent.episodes import episode_store
    from oryxtui.agent.sessions import conversations

    store = episode_store(conversations(workspace, settings), settings)
    sessions: dict[str, list[Any]] = {}

    def turn_of(item: Awaiting) -> dict[str, str] | None:
        record = item.record
        if not record.session or record.turn is None:
            return None
        if record.session not in sessions:
            try:
                sessions[record.session] = store.session(record.session)
            except OryxError:
                sessions[record.session] = []
        for episode in sessions[record.session]:
            if episode.turn == record.turn:
                return {
                    "user": _clip(episode.user),
                    "reply": _clip(episode.reply),
                }
        return None

    return turn_of


def _clip(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= TURN_CHARS else flat[:TURN_CHARS] + "…"
