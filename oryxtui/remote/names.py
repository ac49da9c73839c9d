"""Agents of attached servers by one name: `agent@server` (`@server` is that server's global
memory)."""

from __future__ import annotations

from oryxtui.errors import UsageError

SEP = "@"


def qualified(server: str, agent: str | None) -> str:
    return f"{agent or ''}{SEP}{server}"


def split(name: str | None) -> tuple[str, str | None]:
    """`agent@server` → (server, agent); `@server` → (server, None)."""
    if name is None or SEP not in name:
        raise UsageError(f"{name!r} names no agent of an attached server.")
    agent, _, server = name.rpartition(SEP)
    return server, agent or None
