"""The phrases every surface says the same way (CLI, dashboard, API messages)."""

from __future__ import annotations


def entries(count: int, kind: str = "") -> str:
    """`1 entry`, `2,000 entries`, `3 repeated entries`."""
    return f"{count:,} {kind + ' ' if kind else ''}entr{'y' if count == 1 else 'ies'}"


def agent_label(agent: str | None) -> str:
    """How a sentence names a memory: "agent ops-bot", "the global memory"."""
    return "the global memory" if agent is None else f"agent {agent}"
