"""MemoryService: the facade the CLI, the dashboard, the tools and the API all call."""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from datetime import datetime
from typing import Final

from oryxtui.config import DEFAULT_MAX_ENTRY_CHARS, Settings
from oryxtui.errors import ConfigError, UsageError
from oryxtui.memory.format import TIME_FORMAT, MemoryEntry, Scope, sanitize_content
from oryxtui.memory.markdown_store import MarkdownMemoryStore
from oryxtui.memory.sqlite_store import SqliteMemoryStore
from oryxtui.memory.store import LongTermMemoryStore, MemorySnapshot, Watch
from oryxtui.workspace import Workspace, is_valid_agent_name

Clock = Callable[[], datetime]


class _FromContext:
    def __repr__(self) -> str:
        return "FROM_CONTEXT"


FROM_CONTEXT: Final = _FromContext()
AgentArg = str | None | _FromContext

# The agent a tool call runs for; set by the tool executor, read when no agent is passed.
current_agent: ContextVar[str | None] = ContextVar("oryxtui_current_agent", default=None)


def create_store(workspace: Workspace, settings: Settings) -> LongTermMemoryStore:
    memory = settings.memory
    if memory.backend == "markdown":
        return MarkdownMemoryStore(workspace, memory.archival_max_chars)
    if memory.backend == "sqlite":
        return SqliteMemoryStore(workspace)
    if memory.backend == "mem0":
        from oryxtui.memory.mem0_store import Mem0MemoryStore

        return Mem0MemoryStore(memory.mem0, memory.archival_max_chars)
    raise ConfigError(f"Unknown memory.backend '{memory.backend}'.")


def parse_scope(scope: str | Scope | None) -> Scope:
    """The one rule for a scope, wherever it comes from (CLI, REST, a tool call), as upstream
    reads it: any case, blank or missing means archival."""
    if scope is None or not str(scope).strip():
        return Scope.ARCHIVAL
    try:
        return Scope(str(scope).strip().lower())
    except ValueError:
        raise UsageError(f"Unknown scope {str(scope)!r}: use 'core' or 'archival'.") from None


class MemoryService:
    """Save, load, recall and list an agent's long-term memory, whatever the backend."""

    def __init__(
        self,
        store: LongTermMemoryStore,
        clock: Clock = datetime.now,
        max_entry_chars: int = DEFAULT_MAX_ENTRY_CHARS,
    ) -> None:
        self.store = store
        self.clock = clock
        self.max_entry_chars = max_entry_chars

    @classmethod
    def open(
        cls, workspace: Workspace, settings: Settings, clock: Clock = datetime.now
    ) -> MemoryService:
        return cls(create_store(workspace, settings), clock, settings.memory.max_entry_chars)

    @property
    def backend(self) -> str:
        return self.store.name

    @property
    def watch(self) -> Watch:
        """How a viewer learns that memory changed (files, the database, or by asking)."""
        return self.store.watch

    @staticmethod
    def resolve_agent(agent: AgentArg = FROM_CONTEXT) -> str | None:
        """The agent a call is for; an unsafe name means the global memory (upstream's rule)."""
        name = current_agent.get() if isinstance(agent, _FromContext) else agent
        return name if is_valid_agent_name(name) else None

    def build_context(self, agent: AgentArg = FROM_CONTEXT) -> str:
        return self.store.load(self.resolve_agent(agent))

    def save(
        self, agent: AgentArg, content: str, scope: str | Scope | None = Scope.ARCHIVAL
    ) -> MemoryEntry:
        parsed_scope = parse_scope(scope)
        clean = sanitize_content(content)
        if not clean:
            raise UsageError("Nothing to save: the content is empty.")
        if len(clean) > self.max_entry_chars:
            # One pasted document would fill the injected window and push every other
            # archival entry out of the prompt.
            raise UsageError(
                f"The entry is {len(clean):,} characters, over the limit of "
                f"{self.max_entry_chars:,} (memory.max_entry_chars); shorten it or save it "
                "as several entries."
            )
        stamp = self.clock().strftime(TIME_FORMAT)
        return self.store.append(self.resolve_agent(agent), stamp, clean, parsed_scope)

    def recall(self, agent: AgentArg, keyword: str) -> list[MemoryEntry]:
        if not keyword.strip():
            raise UsageError("Nothing to recall: the keyword is empty.")
        return self.store.recall(self.resolve_agent(agent), keyword)

    def lost(self, agent: AgentArg = FROM_CONTEXT) -> list[MemoryEntry]:
        """Entries oryxtui saved that an outside edit removed (only files have outside editors)."""
        return self.store.lost(self.resolve_agent(agent))

    def restore(self, agent: AgentArg = FROM_CONTEXT) -> list[MemoryEntry]:
        """Save the lost entries again, with their original times; returns what was restored."""
        return self.store.restore(self.resolve_agent(agent))

    def journal_problems(self, agent: AgentArg = FROM_CONTEXT) -> str | None:
        """A sentence about unreadable records in the journal `lost` and `restore` rely on."""
        return self.store.journal_problems(self.resolve_agent(agent))

    def snapshot(
        self, agent: AgentArg = FROM_CONTEXT, newest_bytes: int | None = None
    ) -> MemorySnapshot:
        """Every entry; with `newest_bytes`, a big file gives only its newest (see `partial`)."""
        return self.store.entries(self.resolve_agent(agent), newest_bytes)

    def count_archival(self, agent: AgentArg = FROM_CONTEXT) -> int:
        return self.store.count_archival(self.resolve_agent(agent))
