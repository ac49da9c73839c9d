"""MemoryService: the facade the CLI, the dashboard, the tools and the API all call.

Its parts: `base` (the store, the settings, the memory block), `recalling`, `steering` (edit,
move, delete, restore), `currency` (facts that change: replace, what a save probably replaces,
the memory as of a time), `chronicle` (history, bring back, import), `reviewing` (what
agents wrote that awaits a person's approval) and `consolidating` (digests)."""

from oryxtui.memory.service.base import (
    FROM_CONTEXT,
    AgentArg,
    RecallSetup,
    current_agent,
)
from oryxtui.memory.service.chronicle import Chronicle
from oryxtui.memory.service.consolidating import Consolidating
from oryxtui.memory.service.currency import Currency, Saved, Version, replace_hint
from oryxtui.memory.service.recalling import Recalling
from oryxtui.memory.service.reviewing import Reviewing


class MemoryService(Currency, Recalling, Chronicle, Reviewing, Consolidating):
    """Save, load, recall and list an agent's long-term memory, whatever the backend. The store
    keeps the entries; the service decides what the memory block holds (the window)."""


__all__ = [
    "FROM_CONTEXT",
    "AgentArg",
    "MemoryService",
    "RecallSetup",
    "Saved",
    "Version",
    "current_agent",
    "replace_hint",
]
