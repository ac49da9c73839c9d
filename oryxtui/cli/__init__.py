"""The `oryxtui` command. Scriptable subcommands never import Textual.

One module per command group, each declaring its commands beside their handlers: `memory`
(one memory now), `memory_facts` (replacing what changed), `memory_history` (its past,
export and import), `agents`, `sessions`,
`chat` (prompt and chat), `serve` (the REST API and the web dashboard), `database` (the
shared PostgreSQL database) and `workspace` (init, demo, the dashboard); `common` holds what
they share."""

from __future__ import annotations

import argparse
import importlib
import io
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from oryxtui import __version__
from oryxtui.cli.common import (
    AGENT_ARGS,
    AGENTS,
    COMMON_ARGS,
    DB,
    EXIT_OK,
    JSON_ARGS,
    KEYS,
    MEMORY,
    REMOTE_ARGS,
    SESSIONS,
    TOP,
    Arg,
    Command,
    Group,
    given_place,
    say,
)
from oryxtui.errors import OryxError
from oryxtui.notices import collecting

# Every command and group, in the order `oryxtui --help` lists them, with the modules that
# declare its commands (`Group.command`): a command imports its own modules only, so
# `oryxtui memory save` never imports the server, the chat loop or the database tools.
# `--help`, and a name no module declares, import all.
DECLARED_IN = {
    "init": ("workspace",),
    "demo": ("workspace",),
    "memory": ("memory", "memory_facts", "memory_history", "review"),
    "agents": ("agents",),
    "sessions": ("sessions",),
    "prompt": ("chat",),
    "chat": ("chat",),
    "attach": ("workspace",),
    "serve": ("serve",),
    "keys": ("keys",),
    "web": ("serve",),
    "mcp": ("mcp_stdio",),
    "db": ("database",),
    "doctor": ("workspace",),
}
LISTED = tuple(DECLARED_IN)


def declare(named: str | None) -> None:
    """Import the modules that declare the command `named` (every module, for None or a name
    none declares): their commands join their groups."""
    every = sorted({module for modules in DECLARED_IN.values() for module in modules})
    for module in DECLARED_IN.get(named or "", every):
        importlib.import_module(f"oryxtui.cli.{module}")


class Deferred(argparse.ArgumentParser):
    """A command's (or group's) parser whose arguments are added when argparse chooses it:
    `oryxtui memory save` builds the parser of one command, not of forty."""

    fill: Callable[[argparse.ArgumentParser, Sequence[str]], None] | None = None

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        if self.fill is not None:
            fill, self.fill = self.fill, None
            fill(self, args or [])
        return super().parse_known_args(args, namespace)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser; given the arguments, of the command they name only (all where they name
    none: `--help`, a misspelt command)."""
    parser = argparse.ArgumentParser(
        prog="oryxtui",
        description="See and steer what an AI agent remembers. Without a command, "
        "opens the dashboard on the workspace.",
    )
    _arguments(parser, COMMON_ARGS)
    parser.add_argument("--version", action="version", version=f"oryxtui {__version__}")
    named = _named(sys.argv[1:] if argv is None else argv)
    declare(named)
    if named is None:  # no command: the dashboard
        from oryxtui.cli.workspace import dashboard

        parser.set_defaults(handler=dashboard)
    top = parser.add_subparsers(title="commands", metavar="COMMAND", parser_class=Deferred)
    parts: dict[str, Command | Group] = {c.name: c for c in TOP.commands}
    parts.update({g.name: g for g in (MEMORY, AGENTS, SESSIONS, DB, KEYS) if g.name})
    if named in parts:
        parts = {named: parts[named]}
    for name in sorted(parts, key=lambda n: LISTED.index(n) if n in LISTED else len(LISTED)):
        entry = parts[name]
        if isinstance(entry, Command):
            _add(entry, top)
        else:
            top.add_parser(name, help=entry.help).fill = _group(name, entry)
    return parser


def _named(argv: Sequence[str]) -> str | None:
    """The command the arguments name: the first that is no option (nor --root's value)."""
    after_root = False
    for word in argv:
        if after_root:
            after_root = False
        elif word == "--root":
            after_root = True
        elif not word.startswith("-"):
            return word
    return None


def _group(name: str, group: Group) -> Callable[[argparse.ArgumentParser, Sequence[str]], None]:
    def fill(parser: argparse.ArgumentParser, argv: Sequence[str]) -> None:
        actions = parser.add_subparsers(
            title=f"{name} commands", metavar="ACTION", required=True, parser_class=Deferred
        )
        named = [c for c in group.commands if c.name == _named(argv)]
        for command in named or group.commands:
            _add(command, actions)

    return fill


def _add(command: Command, actions: argparse._SubParsersAction[Deferred]) -> None:
    parser = actions.add_parser(command.name, help=command.help)
    parser.set_defaults(handler=command.handler)

    def fill(parser: argparse.ArgumentParser, argv: Sequence[str]) -> None:
        _arguments(parser, COMMON_ARGS)
        _arguments(parser, AGENT_ARGS if command.agent else ())
        _arguments(parser, JSON_ARGS if command.json else ())
        _arguments(parser, REMOTE_ARGS if command.remote else ())
        _arguments(parser, command.args)

    parser.fill = fill


def _arguments(parser: argparse.ArgumentParser, arguments: Sequence[Arg]) -> None:
    for argument in arguments:
        parser.add_argument(*argument.names, **argument.options)


def main(argv: Sequence[str] | None = None) -> int:
    # Bytes that are not UTF-8 (standard input, arguments, a model's reply) become U+FFFD
    # instead of a traceback.
    for stream in (sys.stdin, sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="replace")
    args = build_parser(argv).parse_args(argv)
    # --root and --debug are accepted before or after the command; absent means not given.
    args.root = getattr(args, "root", None)
    args.debug = getattr(args, "debug", False)
    remote = getattr(args, "remote", None)
    place = ("--remote", remote) if remote else ("--root", args.root) if args.root else None
    rooted = given_place.set(place)  # the commands its hints suggest work there too
    with collecting() as notices:
        try:
            return _run(args)
        finally:
            for note in notices:
                say(f"oryxtui: warning: {note}")
            given_place.reset(rooted)


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
