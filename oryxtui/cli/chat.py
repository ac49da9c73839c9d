"""`oryxtui prompt` and `oryxtui chat`: what the agent would receive, and a turn of the loop."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from oryxtui.cli.common import (
    CLI_CHANNEL,
    EXIT_FAILURE,
    EXIT_OK,
    TOP,
    arg,
    checked_agent,
    open_place,
    print_json,
    say,
    show,
    warn,
)
from oryxtui.errors import UsageError
from oryxtui.phrases import agent_label

if TYPE_CHECKING:
    from oryxtui.places import Loop


def _loop_for(args: argparse.Namespace) -> tuple[Loop, str | None]:
    place = open_place(args)
    agent = checked_agent(args, place)
    return place.loop(), agent


@TOP.command(
    "prompt", "print the prompt the agent would receive now, block by block", agent=True, json=True
)
def prompt(args: argparse.Namespace) -> int:
    from oryxtui.agent.sessions import os_user, session_id_for

    loop, agent = _loop_for(args)
    built = loop.prompt(agent, session_id_for(CLI_CHANNEL, os_user(), agent))
    for warning in built.warnings:
        warn(warning)
    if args.json:
        print_json(built.to_json())
        return EXIT_OK
    for block in built.blocks:
        show(f"── {block.name} · {block.chars} chars · ~{block.tokens} tokens ──\n")
        show((block.text or "(empty)") + "\n\n")
    return EXIT_OK


@TOP.command(
    "chat",
    "one turn through the memory-aware loop (without MESSAGE: line by line)",
    arg("message", metavar="MESSAGE", nargs="?"),
    agent=True,
    json=True,
)
def chat(args: argparse.Namespace) -> int:
    from oryxtui.agent.sessions import os_user

    loop, agent = _loop_for(args)
    user = os_user()
    model = loop.provider(agent).label  # a configuration problem is exit 2, before any turn
    if args.message is not None:
        return _turn(loop, agent, user, args.message, args.json)
    sys.stderr.write(
        f"Chatting with {agent or agent_label(None)} ({model}); an empty line or ctrl+d ends.\n"
    )
    status = EXIT_OK
    for line in sys.stdin:
        if not line.strip():
            break
        status = _turn(loop, agent, user, line.rstrip("\n"), args.json)
    return status


def _turn(loop: Loop, agent: str | None, user: str, message: str, as_json: bool) -> int:
    from oryxtui.agent.sessions import session_id_for

    if not message.strip():
        raise UsageError("Nothing to say: the message is empty.")
    events = []
    failed = False
    for event in loop.run(agent, message, CLI_CHANNEL, user):
        events.append(event)
        if as_json:
            continue
        if event.kind == "text":
            show(event.text)
            sys.stdout.flush()
        elif event.kind == "tool_call":
            show(f"\n→ {event.tool}({event.arguments})\n")
        elif event.kind == "tool_result":
            show(f"{'✓' if event.success else '✗'} {event.text}\n")
        elif event.kind == "error":
            failed = True
            say(f"oryxtui: error: {event.text}")
        elif event.kind == "warning":
            warn(event.text)
        elif event.kind == "final":
            sys.stdout.write("\n")
    failed = failed or not any(event.kind == "final" for event in events)
    if as_json:
        reply = next((e.text for e in reversed(events) if e.kind == "final"), None)
        print_json(
            {
                "session_id": session_id_for(CLI_CHANNEL, user, agent),
                "model": loop.provider(agent).label,
                "reply": reply,
                "events": [event.to_json() for event in events],
            }
        )
    return EXIT_FAILURE if failed else EXIT_OK
