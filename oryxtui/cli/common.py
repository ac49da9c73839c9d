"""What every command shares: the command declarations, the shared options, how output is
written, and how a command finds its workspace, its service and its agent."""

from __future__ import annotations

import argparse
import functools
import os
import re
import shlex
import shutil
import sys
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from oryxtui.errors import UsageError
from oryxtui.moments import moment_of
from oryxtui.places import Here, Place, here_only, server_place, workspace_place
from oryxtui.terminal import is_terminal, json_text, neutralize
from oryxtui.workspace import Workspace, find_workspace, is_valid_agent_name

if TYPE_CHECKING:
    from oryxtui.config import Settings
    from oryxtui.memory.format import MemoryEntry
    from oryxtui.places import Memory

EXIT_OK, EXIT_FAILURE = 0, 1
CLI_CHANNEL = "cli"

Handler = Callable[[argparse.Namespace], int]


# Declaring commands ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Arg:
    """One argument or option, as `ArgumentParser.add_argument` takes it."""

    names: tuple[str, ...]
    options: dict[str, Any]


def arg(*names: str, **options: Any) -> Arg:
    return Arg(names, options)


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    args: tuple[Arg, ...]
    handler: Handler
    agent: bool  # takes --agent
    json: bool  # takes --json
    remote: bool  # takes --remote and --key-env (every command with --agent does)


@dataclass
class Group:
    """A set of commands (`memory …`), or the top level (no name): each command declared with
    its arguments directly above its handler, as a decorator."""

    name: str | None = None
    help: str = ""
    commands: list[Command] = field(default_factory=list)

    def command(
        self,
        name: str,
        help: str,
        *args: Arg,
        agent: bool = False,
        json: bool = False,
        remote: bool = False,
    ) -> Callable[[Handler], Handler]:
        def declared(handler: Handler) -> Handler:
            self.commands.append(Command(name, help, args, handler, agent, json, remote or agent))
            return handler

        return declared


TOP = Group()
MEMORY = Group("memory", "show, save and recall long-term memory")
AGENTS = Group("agents", "the workspace's agents: list them, make one")
SESSIONS = Group("sessions", "past conversations: list, show, search")
DB = Group("db", "the shared PostgreSQL database: status, upgrade, migrate, local")
KEYS = Group("keys", "per-user keys for `serve`: create, list, revoke")


# The options many commands take: --root and --debug (all), --agent, --json, --remote.
COMMON_ARGS = (
    arg(
        "--root",
        metavar="PATH",
        default=argparse.SUPPRESS,
        help="the .oryxos workspace, or a folder containing one (default: $ORYXOS_ROOT, "
        "else the nearest .oryxos at or above the current folder)",
    ),
    arg("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks"),
)
AGENT_ARGS = (arg("--agent", metavar="NAME", help="the agent (default: the global memory)"),)
JSON_ARGS = (arg("--json", action="store_true", help="print JSON"),)
REMOTE_ARGS = (
    arg(
        "--remote",
        metavar="URL",
        help="work on an oryxtui server instead of a workspace (a URL, or a name from the "
        "[remotes] table of ~/.config/oryxtui/config.toml)",
    ),
    arg(
        "--key-env",
        metavar="NAME",
        help="the environment variable holding the server's key (default: the [remotes] "
        "entry's, else ORYXTUI_API_KEY)",
    ),
)


# Output ----------------------------------------------------------------------------------------


def print_json(value: Any) -> None:
    sys.stdout.write(json_text(value) + "\n")


def show(text: str) -> None:
    """Text that came from memory, a file or a model: on a terminal its escape sequences are
    shown, never obeyed; piped, it is written exactly."""
    sys.stdout.write(neutralize(text) if is_terminal(sys.stdout) else text)


def say(line: str) -> None:
    """A line to standard error (progress, "nothing found", an error and what to do),
    neutralised on a terminal; the commands it suggests run as this oryxtui was run."""
    line = runnable(line)
    sys.stderr.write((neutralize(line) if is_terminal(sys.stderr) else line) + "\n")


def hint(line: str) -> None:
    """A line to standard output that suggests a command: runnable as this oryxtui was run."""
    sys.stdout.write(runnable(line) + "\n")


# Where a command was told to work (`--root PATH` or `--remote URL`), for the commands its
# hints suggest.
given_place: ContextVar[tuple[str, str] | None] = ContextVar("oryxtui_given_place", default=None)
_SUGGESTED = re.compile(r"`oryxtui ([^`]*)`")
_ELSEWHERE = re.compile(r"(^| )--(root|remote)( |=|$)")
_NO_WORKSPACE = ("init", "demo", "--help", "--version")


def runnable(text: str) -> str:
    """`text` with each suggested command (`` `oryxtui …` ``) as it works pasted where it was
    printed: as this oryxtui is run (`.venv/bin/oryxtui …` when it was started by that path
    and is not the `oryxtui` on PATH), and with the `--root` or `--remote` this command was
    given."""
    command, place = this_oryxtui(), given_place.get()

    def pasted(found: re.Match[str]) -> str:
        words = found.group(1)
        first = words.split(" ", 1)[0]
        if place is not None and first not in _NO_WORKSPACE and not _ELSEWHERE.search(words):
            words += f" {place[0]} {shlex.quote(place[1])}"
        return f"`{command} {words}`"

    return _SUGGESTED.sub(pasted, text)


@functools.cache
def this_oryxtui() -> str:
    """How a person runs this oryxtui again in the folder it runs in: `oryxtui` when that is
    the one on PATH, else the path it was started by (or `python -m oryxtui`)."""
    started = sys.argv[0] if sys.argv else ""
    if os.path.basename(started) == "__main__.py" and "oryxtui" in started:
        return f"{shlex.quote(sys.executable)} -m oryxtui"
    if os.path.basename(started) != "oryxtui" or os.sep not in started:
        return "oryxtui"  # found on PATH, or not the executable at all (a test, an embedder)
    on_path = shutil.which("oryxtui")
    if on_path and os.path.realpath(on_path) == os.path.realpath(started):
        return "oryxtui"
    return shlex.quote(started)


def warn(message: str) -> None:
    say(f"oryxtui: warning: {message}")


def entry_json(entry: MemoryEntry) -> dict[str, Any]:
    """An entry with its section, as the JSON of every command shows it."""
    return {"scope": entry.scope.value, **entry.to_json()}


# Finding what a command works on ---------------------------------------------------------------


def settings_of(workspace: Workspace) -> Settings:
    from oryxtui.config import load_settings  # pydantic: only for commands that read settings

    return load_settings(workspace.config_path)


def open_workspace(args: argparse.Namespace) -> tuple[Workspace, Settings]:
    """The workspace a command that works on this machine only works on, and its settings."""
    workspace = find_workspace(args.root)
    return workspace, settings_of(workspace)


def open_place(args: argparse.Namespace) -> Place:
    """Where a command works: the workspace — or, with `--remote`, the server in its place
    (the handler runs unchanged, its output and exit codes the same)."""
    if getattr(args, "remote", None):
        return server_place(args.remote, args.key_env)
    return workspace_place(args.root)


def open_here(args: argparse.Namespace, refusal: str) -> Here:
    """The workspace, for what is done on this machine only; on a server, `refusal`."""
    return here_only(open_place(args), refusal)


def memory_service(args: argparse.Namespace) -> tuple[Memory, str | None]:
    """The memory and the agent for a `memory` command (an unknown agent refused)."""
    place = open_place(args)
    return place.memory, checked_agent(args, place)


def memories_of(args: argparse.Namespace, place: Place) -> list[str | None]:
    """Every memory with --all, else the one --agent names (checked)."""
    return place.memories() if args.all else [checked_agent(args, place)]


def checked_agent(args: argparse.Namespace, place: Place, saving: bool = False) -> str | None:
    """The agent a command is for (None: the global memory). A name that is not valid, or of
    no agent here, is refused (exit 2), naming the closest agents, and nothing is created:
    a typo never starts a memory or a session nobody looks at. Saving with `--create` makes
    the agent. (The agent-facing tools keep upstream's rule: an unsafe name is the global
    memory.)"""
    agent = args.agent
    if agent is None:
        return None
    if not is_valid_agent_name(agent):
        raise UsageError(
            f"{agent!r} is not a valid agent name: letters, digits, '_' and '-', at most 128 "
            "characters, and not '__global__' (leave --agent out for the global memory)."
        )
    if agent in place.known_agents():
        return agent
    place.within_reach(agent)
    if saving and getattr(args, "create", False):
        place.create_agent(agent)  # an agent, AGENT.md and all: listed from now on
        return agent
    if saving:
        also = "to start a new agent's memory, add --create"
    else:
        also = "`oryxtui agents list` lists them, `oryxtui agents new NAME` makes one"
    close = place.closest_agents(agent)
    did_you_mean = f" (did you mean {' or '.join(close)}?)" if close else ""
    raise UsageError(f"No agent named {agent!r} in {place.root}{did_you_mean}; {also}.")


def since(text: str, option: str = "--since") -> datetime:
    """The moment an option names (a date alone: its start), read as every typed moment is."""
    try:
        return moment_of(text, end_of_day=False)
    except UsageError as problem:
        raise UsageError(f"{option}: {problem}") from None
