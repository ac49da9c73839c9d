"""The phrases every surface says the same way (CLI, dashboard, API messages)."""

from __future__ import annotations


def entries(count: int, kind: str = "") -> str:
    """`1 entry`, `2,000 entries`, `3 repeated entries`."""
    return f"{count:,} {kind + ' ' if kind else ''}entr{'y' if count == 1 else 'ies'}"


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """`0 turns`, `1 turn`, `2 turns` (`plural` where adding an s is wrong)."""
    return f"{count:,} {noun if count == 1 else (plural or noun + 's')}"


def were(count: int) -> str:
    """The verb after a count: `1 entry was`, `2 entries were`."""
    return "was" if count == 1 else "were"


def agent_label(agent: str | None) -> str:
    """How a sentence names a memory: "agent ops-bot", "the global memory"."""
    return "the global memory" if agent is None else f"agent {agent}"
