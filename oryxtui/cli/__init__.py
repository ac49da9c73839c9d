"""The `oryxtui` command. Scriptable subcommands never import Textual.

One module per command group, each declaring its commands beside their handlers: `memory`
(one memory now), `memory_history` (its past, export and import), `agents`, `sessions`,
`chat` (prompt and chat), `serve` (the REST API and the web dashboard), `database` (the
shared PostgreSQL database) and `workspace` (init, demo, the dashboard); `common` holds what
they share."""

from __future__ import annotations

import argparse
import io
import os
import sys
from collections.abc import Sequence

from oryxtui import __version__
from oryxtui.cli import (
    agents,
    chat,
    database,
    keys,
    memory,
    memory_history,
    review,
    serve,
    sessions,
    workspace,
)
from oryxtui.cli.common import (
    AGENTS,
    DB,
    EXIT_OK,
    KEYS,
    MEMORY,
    SESSIONS,
    TOP,
    Command,
    Group,
    say,
    shared_options,
)
from oryxtui.errors import OryxError
from oryxtui.notices import collecting

# Imported for the commands they declare (see `Group.command`).
_DECLARING = (
    agents,
    chat,
    database,
    keys,
    memory,
    memory_history,
    review,
    serve,
    sessions,
    workspace,
)


# How `oryxtui --help` lists the commands and groups (any not named here come last).
LISTED = (
    "init",
    "demo",
    "memory",
    "agents",
    "sessions",
    "prompt",
    "chat",
    "attach",
    "serve",
    "keys",
    "web",
    "db",
)


def build_parser() -> argparse.ArgumentParser:
    shared = shared_options()
    parser = argparse.ArgumentParser(
        prog="oryxtui",
        description="See and steer what an AI agent remembers. Without a command, "
        "opens the dashboard on the workspace.",
        parents=[shared[0]],
    )
    parser.add_argument("--version", action="version", version=f"oryxtui {__version__}")
    parser.set_defaults(handler=workspace.dashboard)
    top = parser.add_subparsers(title="commands", metavar="COMMAND")
    parts: dict[str, Command | Group] = {c.name: c for c in TOP.commands}
    parts.update({g.name: g for g in (MEMORY, AGENTS, SESSIONS, DB, KEYS) if g.name})
    for name in sorted(parts, key=lambda n: LISTED.index(n) if n in LISTED else len(LISTED)):
        entry = parts[name]
        if isinstance(entry, Command):
            _add(entry, top, shared)
            continue
        group = top.add_parser(name, help=entry.help)
        actions = group.add_subparsers(title=f"{name} commands", metavar="ACTION", required=True)
        for command in entry.commands:
            _add(command, actions, shared)
    return parser


def _add(
    command: Command,
    actions: argparse._SubParsersAction[argparse.ArgumentParser],
    shared: tuple[argparse.ArgumentParser, ...],
) -> None:
    common, agent, as_json, remote = shared
    parents = [common]
    parents += [agent] if command.agent else []
    parents += [as_json] if command.json else []
    parents += [remote] if command.remote else []
    parser = actions.add_parser(command.name, parents=parents, help=command.help)
    for argument in command.args:
        parser.add_argument(*argument.names, **argument.options)
    parser.set_defaults(handler=command.handler)


def main(argv: Sequence[str] | None = None) -> int:
    # Bytes that are not UTF-8 (standard input, arguments, a model's reply) become U+FFFD
    # instead of a traceback.
    for stream in (sys.stdin, sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="replace")
    args = build_parser().parse_args(argv)
    # --root and --debug are accepted before or after the command; absent means not given.
    args.root = getattr(args, "root", None)
    args.debug = getattr(args, "debug", False)
    with collecting() as notices:
        try:
            return _run(args)
        finally:
            for note in notices:
                say(f"oryxtui: warning: {note}")


def _run(args: argparse.Namespace) -> int:
    try:
        return int(args.handler(args))
    except OryxError as exc:
        if args.debug:
            raise
        say(f"oryxtui: error: {exc}")
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): not an error worth a traceback.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK


__all__ = ["build_parser", "main"]
