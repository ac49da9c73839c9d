"""What every command shares: the command declarations, the shared options, how output is
written, and how a command finds its workspace, its service and its agent."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

from oryxtui.errors import OryxError, UsageError
from oryxtui.terminal import is_terminal, json_text, neutralize
from oryxtui.workspace import Workspace, find_workspace, is_remote, is_valid_agent_name

if TYPE_CHECKING:
    from oryxtui.config import Settings
    from oryxtui.memory.format import MemoryEntry
    from oryxtui.memory.service import MemoryService

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
    """A line to standard error (progress, "nothing found"), neutralised on a terminal."""
    sys.stderr.write((neutralize(line) if is_terminal(sys.stderr) else line) + "\n")


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
    """The workspace a command works on — or, with `--remote`, the server in its place (with
    the same methods: the handler runs unchanged, its output and exit codes the same)."""
    if getattr(args, "remote", None):
        from oryxtui.config import Settings
        from oryxtui.remote.place import RemoteWorkspace, server_for

        place = RemoteWorkspace(server_for(args.remote, args.key_env))
        return cast("Workspace", place), Settings()
    workspace = find_workspace(args.root)
    return workspace, settings_of(workspace)


def service_of(workspace: Workspace, settings: Settings) -> MemoryService:
    from oryxtui.memory.service import MemoryService

    if is_remote(workspace):
        return cast("MemoryService", workspace.memory)  # type: ignore[attr-defined]
    return MemoryService.open(workspace, settings)


def memory_service(args: argparse.Namespace) -> tuple[MemoryService, str | None]:
    """The service and the agent for a `memory` command (an unknown agent refused)."""
    workspace, settings = open_workspace(args)
    return service_of(workspace, settings), checked_agent(args, workspace)


def memories_of(args: argparse.Namespace, workspace: Workspace) -> list[str | None]:
    """Every memory with --all, else the one --agent names (checked)."""
    return workspace.memories() if args.all else [checked_agent(args, workspace)]


def checked_agent(
    args: argparse.Namespace, workspace: Workspace, saving: bool = False
) -> str | None:
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
    if agent in workspace.list_agents() or agent in _stored_agents(workspace):
        return agent
    if is_remote(workspace):
        _within_reach(workspace, agent)
    if saving and getattr(args, "create", False):
        workspace.create_agent(agent)  # an agent, AGENT.md and all: listed from now on
        return agent
    if saving:
        also = "to start a new agent's memory, add --create"
    else:
        also = "`oryxtui agents list` lists them, `oryxtui agents new NAME` makes one"
    close = workspace.closest_agents(agent)
    did_you_mean = f" (did you mean {' or '.join(close)}?)" if close else ""
    raise UsageError(f"No agent named {agent!r} in {workspace.root}{did_you_mean}; {also}.")


def _within_reach(workspace: Workspace, agent: str) -> None:
    """On a server with a key limited to some agents: one outside them is said to be out of
    the key's reach (not advised to be made, which the key could not do either)."""
    from fnmatch import fnmatchcase

    try:
        patterns = workspace.memory.info().get("agents")  # type: ignore[attr-defined]
    except OryxError:
        return  # not known now: the server says so when asked
    if isinstance(patterns, list) and not any(fnmatchcase(agent, str(p)) for p in patterns):
        raise UsageError(
            f"The agent {agent!r} is not within this key's reach (it reaches "
            f"{', '.join(map(str, patterns))} only); ask for a key that reaches it."
        )


def _stored_agents(workspace: Workspace) -> list[str]:
    """Agents a shared database has memory of (none without one)."""
    if is_remote(workspace):
        return []  # the server lists them with its agents
    settings = settings_of(workspace)
    if settings.database.url is None:
        return []
    return service_of(workspace, settings).stored_agents()


def since(text: str, option: str = "--since") -> datetime:
    try:
        return datetime.fromisoformat(text.strip())
    except ValueError:
        raise UsageError(
            f"{option} takes an ISO date or date-time, like 2026-12-01 or 2026-12-01T09:30, "
            f"not {text!r}."
        ) from None


def origins_of(
    workspace: Workspace, settings: Settings, service: MemoryService, agent: str | None
) -> dict[str, dict[str, Any]]:
    """Where each entry of the agent's memory came from, by entry id (see `agent.provenance`);
    a server says it for its own."""
    if is_remote(workspace):
        return workspace.memory.entry_origins(agent)  # type: ignore[attr-defined]
    from oryxtui.agent.provenance import Provenance
    from oryxtui.agent.sessions import open_conversations

    snapshot = service.snapshot(agent)
    entries = [*snapshot.core, *snapshot.archival]
    return Provenance(service, open_conversations(workspace, settings)).origins(agent, entries)
