"""A server as the place a command works on: `--remote URL` (or a name from the `[remotes]`
table of the user's config) gives the command this instead of a workspace, and its memory,
conversations and loop, so every handler runs unchanged."""

from __future__ import annotations

import contextlib
import difflib
import os
from dataclasses import dataclass
from typing import Any

from oryxtui.config import load_user_settings
from oryxtui.errors import OryxError, UsageError
from oryxtui.remote.client import Server
from oryxtui.remote.memory import RemoteMemory
from oryxtui.remote.talk import RemoteLoop

KEY_ENV = "ORYXTUI_API_KEY"  # the key when neither --key-env nor [remotes] names a variable


def server_for(target: str, key_env: str | None = None) -> Server:
    """The server `target` names: a name from `[remotes]`, or a URL (with the key the
    table gives it, if it is listed there)."""
    remotes = load_user_settings().remotes
    name, remote = None, remotes.get(target)
    if remote is not None:
        name = target
    else:
        for listed_name, listed in remotes.items():
            if listed.url.rstrip("/") == target.rstrip("/"):
                name, remote = listed_name, listed
    if remote is None and "://" not in target:
        known = f" (listed: {', '.join(sorted(remotes))})" if remotes else ""
        raise UsageError(
            f"{target!r} is neither a server URL nor a name in the [remotes] table of your "
            f"config{known}."
        )
    variable = key_env or (remote.key_env if remote else None)
    key = os.environ.get(variable or KEY_ENV) or None
    if variable and key is None:
        raise UsageError(f"The environment variable {variable} (the key) is not set.")
    url = remote.url if remote else target
    return Server(url, key, name, remote.ca_cert if remote else None)


@dataclass(frozen=True)
class RemoteAgent:
    """What the server's agent list says of an agent (for `agents list` and the sidebar)."""

    description: str
    provider: Any = None
    tools: tuple[str, ...] = ()


class RemoteWorkspace:
    """A server in the place of a workspace."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.root = server.base.removesuffix("/api/v1")  # what messages name as the place
        self.memory = RemoteMemory(server)
        self.loop = RemoteLoop(server, self.memory)
        self._agents: dict[str, RemoteAgent] | None = None

    def hang_up(self) -> None:
        self.server.hang_up()

    def _listed(self, fresh: bool = False) -> dict[str, RemoteAgent]:
        if self._agents is None or fresh:
            rows = self.server.get("/agents")
            agents = {}
            for row in rows if isinstance(rows, list) else []:
                if isinstance(row, dict) and isinstance(row.get("name"), str):
                    agents[row["name"]] = RemoteAgent(
                        str(row.get("description") or ""),
                        tools=tuple(str(t) for t in row.get("tools") or []),
                    )
            self._agents = agents
        return self._agents

    def list_agents(self) -> list[str]:
        with contextlib.suppress(OryxError):  # what this key may do, known before anyone asks
            self.memory.info()
        return sorted(self._listed(fresh=True))

    def memories(self) -> list[str | None]:
        return [None, *self.list_agents()]

    def closest_agents(self, agent: str) -> list[str]:
        agents = list(self._listed())
        return difflib.get_close_matches(agent, agents, n=3, cutoff=0.6)

    def read_agent(self, agent: str) -> RemoteAgent | None:
        return self._listed().get(agent)
