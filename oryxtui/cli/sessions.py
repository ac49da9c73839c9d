"""`oryxtui sessions list|show|search`: past conversations."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from oryxtui.cli.common import (
    EXIT_OK,
    SESSIONS,
    arg,
    checked_agent,
    open_place,
    print_json,
    say,
    show,
    since,
)
from oryxtui.errors import UsageError
from oryxtui.phrases import agent_label

if TYPE_CHECKING:
    from oryxtui.agent.episodes import Episode
    from oryxtui.places import Episodes, Place


def _episodes(args: argparse.Namespace) -> tuple[Episodes, Place]:
    place = open_place(args)
    return place.episodes, place


@SESSIONS.command(
    "list",
    "an agent's sessions",
    arg("--all", action="store_true", help="every agent's sessions"),
    agent=True,
    json=True,
)
def list_sessions(args: argparse.Namespace) -> int:
    store, workspace = _episodes(args)
    agent = None if args.all else checked_agent(args, workspace)
    found = store.sessions(agent, every_agent=args.all)
    if args.json:
        print_json({"sessions": found})
    elif not found:
        sys.stdout.write("No sessions yet.\n")
    else:
        show(
            "".join(
                f"{s['last_active'] or '?'}  {s['session']}  {s['turns']} turn"
                f"{'' if s['turns'] == 1 else 's'}\n"
                for s in found
            )
        )
    return EXIT_OK


@SESSIONS.command(
    "show",
    "a session's turns; with --turn N --prompt, exactly what the model received in that turn",
    arg("session", metavar="SESSION_ID"),
    arg("--turn", type=int, metavar="N", help="one turn (0: the first)"),
    arg("--prompt", action="store_true", help="the prompt as sent, each call of the turn"),
    json=True,
    remote=True,
)
def show_session(args: argparse.Namespace) -> int:
    if args.prompt:
        return _show_prompt(args)
    store, _ = _episodes(args)
    turns = store.session(args.session)
    if args.json:
        print_json({"session": args.session, "turns": [e.to_json() for e in turns]})
        return EXIT_OK
    if not turns:
        raise UsageError(
            f"No session {args.session!r} with a finished turn; `oryxtui sessions list` names them."
        )
    show("".join(_turn_text(e) for e in turns))
    return EXIT_OK


@SESSIONS.command(
    "search",
    "the agent's earlier turns that best match QUERY",
    arg("query", metavar="QUERY"),
    arg("--since", metavar="ISO-DATE-OR-TIME"),
    arg("--until", metavar="ISO-DATE-OR-TIME"),
    arg("--limit", type=int, default=10),
    agent=True,
    json=True,
)
def search(args: argparse.Namespace) -> int:
    from oryxtui.agent.episodes import REPLY_CHARS

    store, workspace = _episodes(args)
    agent = checked_agent(args, workspace)
    for option, bound in (("--since", args.since), ("--until", args.until)):
        if bound:
            since(bound, option)  # an ISO date or date-time, or a one-sentence refusal
    store.sync(agent)
    found = store.search(agent, args.query, args.since, args.until, args.limit)
    if args.json:
        print_json({"query": args.query, "turns": [e.to_json(REPLY_CHARS) for e in found]})
    elif not found:
        say(f"oryxtui: no conversation of {agent_label(agent)} matches {args.query!r}.")
    else:
        show("".join(_turn_text(e) for e in found))
    return EXIT_OK


def _turn_text(episode: Episode) -> str:
    tools = f"  [tools: {', '.join(episode.tools)}]" if episode.tools else ""

    def indented(text: str) -> str:  # a line break in a message never starts a turn's line
        return text.replace("\n", "\n    ")

    return (
        f"#{episode.turn}  {episode.time or '?'}  {episode.session_id}{tools}\n"
        f"  user: {indented(episode.user)}\n  reply: {indented(episode.reply)}\n"
    )


def _show_prompt(args: argparse.Namespace) -> int:
    if args.turn is None:
        raise UsageError("--prompt shows one turn: add --turn N (0 is the first).")
    view = open_place(args).turn_view(args.session, args.turn)
    if view is None:
        raise UsageError(
            f"No recorded model call for turn {args.turn} of {args.session!r} (turns through "
            "oryxtui's loop are recorded from this version on)."
        )
    if args.json:
        print_json(view)
        return EXIT_OK
    out = []
    for call in view["calls"]:
        out.append(
            f"═══ turn {view['turn']}, call {call['call']} · {call['model']} · "
            f"{call['time'] or '?'}{f' · by {by}' if (by := call.get('by')) else ''} ═══\n"
        )
        for block in call["blocks"]:
            out.append(
                f"── {block['name']} · {block['chars']} chars · ~{block['tokens']} tokens ──\n"
            )
            out.append((block["text"] or "(empty)") + "\n\n")
        if call["recalls"]:
            out.append("── recall results given to the model ──\n")
            out += [f"{recall}\n" for recall in call["recalls"]]
            out.append("\n")
    changed = view["memory_since_previous_turn"]
    if changed is not None:
        out.append("── the memory block against the previous turn's ──\n")
        out += [f"+ {line}\n" for line in changed["added"]]
        out += [f"- {line}\n" for line in changed["removed"]]
        if not changed["added"] and not changed["removed"]:
            out.append("(unchanged)\n")
    show("".join(out))
    return EXIT_OK
