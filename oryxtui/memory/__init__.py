"""Long-term memory: the MEMORY.md format, the stores behind one interface, and MemoryService."""

from oryxtui.memory.format import MemoryEntry, Scope
from oryxtui.memory.service import MemoryService, current_agent
from oryxtui.memory.snapshot import MemorySnapshot
from oryxtui.memory.store import LongTermMemoryStore

__all__ = [
    "LongTermMemoryStore",
    "MemoryEntry",
    "MemoryService",
    "MemorySnapshot",
    "Scope",
    "current_agent",
]
