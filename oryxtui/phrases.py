"""The phrases every surface says the same way (CLI, dashboard, API messages)."""

from __future__ import annotations


def entries(count: int) -> str:
    """`1 entry`, `2,000 entries`."""
    return f"{count:,} entr{'y' if count == 1 else 'ies'}"


def agent_label(agent: str | None) -> str:
    """How a sentence names a memory: "agent ops-bot", "the global memory"."""
    return "the global memory" if agent is None else f"agent {agent}"
