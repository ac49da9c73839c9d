"""The stores behind `MemoryService`, one folder or module each: `markdown` (MEMORY.md files,
the default), `sqlite` (upstream's `memory_entries` table in oryxos.db), `postgres` (the same
table in a shared database, chosen by `[database] url`) and `mem0` (a mem0 server). A new
backend is one more beside them, chosen here."""

from __future__ import annotations

from datetime import datetime

from oryxtui.config import Settings
from oryxtui.errors import ConfigError
from oryxtui.memory.format import Clock
from oryxtui.memory.store import LongTermMemoryStore
from oryxtui.workspace import Workspace


def block_rendering(settings: Settings, shared: bool | None = None) -> str:
    """How a table backend renders the memory block: `[memory] block`, or by default the
    MEMORY.md block on a shared database (what agents moved there from files saw) and
    upstream's rows in oryxos.db (what upstream's sqlite backend injects on the same rows).
    `shared`: on a shared database or not (default: whether `[database] url` is set)."""
    block = settings.memory.block
    if block != "auto":
        return block
    on_shared = bool(settings.database.url) if shared is None else shared
    return "markdown" if on_shared else "rows"


def create_store(
    workspace: Workspace, settings: Settings, clock: Clock = datetime.now
) -> LongTermMemoryStore:
    """The store `memory.backend` names (each is imported only when chosen)."""
    memory = settings.memory
    if memory.backend == "markdown":
        from oryxtui.memory.backends.markdown.store import MarkdownMemoryStore

        return MarkdownMemoryStore(workspace, clock=clock)
    if memory.backend in ("sqlite", "database") and settings.database.url:
        from oryxtui.memory.backends.postgres.store import PostgresMemoryStore
        from oryxtui.postgres import shared

        database = shared(settings.database)
        database.check_schema()
        return PostgresMemoryStore(database, clock, block_rendering(settings, shared=True))
    if memory.backend in ("sqlite", "database"):
        from oryxtui.memory.backends.sqlite import SqliteMemoryStore

        return SqliteMemoryStore(
            workspace, clock=clock, block=block_rendering(settings, shared=False)
        )
    if memory.backend == "mem0":
        from oryxtui.memory.backends.mem0 import Mem0MemoryStore

        return Mem0MemoryStore(memory.mem0)
    raise ConfigError(f"Unknown memory.backend '{memory.backend}'.")
