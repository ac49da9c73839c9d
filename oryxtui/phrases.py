"""The phrases every surface says the same way (CLI, dashboard, API messages)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from oryxtui.memory.format import MemoryEntry


def entries(count: int, kind: str = "") -> str:
    """`1 entry`, `2,000 entries`, `3 repeated entries`."""
    return f"{count:,} {kind + ' ' if kind else ''}entr{'y' if count == 1 else 'ies'}"


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """`0 turns`, `1 turn`, `2 turns` (`plural` where adding an s is wrong)."""
    return f"{count:,} {noun if count == 1 else (plural or noun + 's')}"


def were(count: int) -> str:
    """The verb after a count: `1 entry was`, `2 entries were`."""
    return "was" if count == 1 else "were"


def brought_back(done: str, written: Sequence[MemoryEntry]) -> str:
    """What bringing entries back did, and why they may stand after newer ones: they are
    written at the end of their section (the newest place) with their own times."""
    if not written:
        return f"{done} nothing."
    older = f", from {written[0].time}" if len(written) == 1 and written[0].time else ""
    return (
        f"{done} {entries(len(written))}{older}: written at the end of the section with "
        f"{'its' if len(written) == 1 else 'their'} own time, so "
        f"{'it' if len(written) == 1 else 'they'} may stand after newer entries."
    )


def agent_label(agent: str | None) -> str:
    """How a sentence names a memory: "agent ops-bot", "the global memory"."""
    return "the global memory" if agent is None else f"agent {agent}"
