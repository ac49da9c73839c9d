"""What every part of the memory service stands on: the store, the settings, which agent a call
is for, the memory block (the window) and the snapshot."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, replace
from datetime import datetime
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TYPE_CHECKING, Final, Self

from oryxtui.config import (
    DEFAULT_ARCHIVAL_MAX_CHARS,
    DEFAULT_MAX_ENTRY_CHARS,
    ConsolidateSettings,
    EmbeddingSettings,
    RecallSettings,
    ReviewSettings,
    Settings,
)
from oryxtui.errors import ConfigError, OryxError, UsageError
from oryxtui.memory.admission import Admission
from oryxtui.memory.backends import create_store
from oryxtui.memory.format import (
    TIME_FORMAT,
    Clock,
    MemoryEntry,
    Scope,
    entry_from_line,
    entry_line,
    parse_scope,
)
from oryxtui.memory.history import CLI, Actor, change, current_actor, is_mcp
from oryxtui.memory.history.timeline import Timeline
from oryxtui.memory.snapshot import MemoryRead, MemorySnapshot
from oryxtui.memory.store import (
    Editable,
    LongTermMemoryStore,
    Rankable,
    Recorded,
    Shared,
    Watch,
)
from oryxtui.memory.updates import Subjects
from oryxtui.memory.window import InjectedWindow, injected_window, render_context
from oryxtui.workspace import AgentName, Workspace, is_valid_agent_name

if TYPE_CHECKING:
    from oryxtui.memory.recall.engine import RecallEngine
    from oryxtui.memory.recall.pgvector import PgVectorTable
    from oryxtui.memory.recall.vectors import VectorTable


class _FromContext:
    def __repr__(self) -> str:
        return "FROM_CONTEXT"


FROM_CONTEXT: Final = _FromContext()
AgentArg = AgentName | _FromContext  # a name, the global memory, or the tool call's agent

BLOCK_WHOLE_BYTES = 16 << 20

# The agent a tool call runs for; set by the tool executor, read when no agent is passed.
current_agent: ContextVar[str | None] = ContextVar("oryxtui_current_agent", default=None)


@dataclass(frozen=True)
class RecallSetup:
    """How recall ranks: the settings, the embedder's, and the database the index lives in."""

    settings: RecallSettings
    embedding: EmbeddingSettings
    db_path: Path

    @property
    def ranks(self) -> bool:
        """False: upstream's keyword recall (every hit, oldest first)."""
        mode = self.settings.mode
        if mode == "auto" and self.settings.profile == "upstream":
            return self.embedding.provider is not None
        return mode != "keyword"


class ServiceBase:
    """The store behind the service and what the memory block holds; the parts of
    `MemoryService` (recall, steering, history) build on it."""

    def __init__(
        self,
        store: LongTermMemoryStore,
        clock: Clock = datetime.now,
        max_entry_chars: int = DEFAULT_MAX_ENTRY_CHARS,
        archival_max_chars: int = DEFAULT_ARCHIVAL_MAX_CHARS,
        recall_setup: RecallSetup | None = None,
        actor: Actor = CLI,
        consolidate: ConsolidateSettings | None = None,
        review: ReviewSettings | None = None,
        hold_mcp: bool = True,
    ) -> None:
        self.store = store
        self.hold_mcp = hold_mcp  # [mcp] hold: MCP clients' saves wait for a person
        self.consolidation = consolidate or ConsolidateSettings()
        self.review = review or ReviewSettings()
        self.actor = actor  # who changes memory through this service, unless a tool call says
        self.recall_setup = recall_setup
        self._engine: RecallEngine | None = None
        self._engine_lock = threading.Lock()
        # The check's index of each memory: (its version, the index, how many of its entries
        # the term index kept beside the memory holds — None: none of these entries).
        self._subjects: dict[str | None, tuple[Hashable, Subjects, int | None]] = {}
        self._subjects_lock = threading.Lock()
        self._timelines: dict[str | None, Timeline] = {}  # each history replayed (as of)
        self.checks_updates = True  # [memory] may_update
        # Which agent a name really is, links followed (the workspace's one answer to it)
        self.real_agent: Callable[[str], str | None] = lambda name: name
        self.clock = clock
        self.max_entry_chars = max_entry_chars
        self.archival_max_chars = archival_max_chars
        # Memory bigger than `block_whole_bytes` is never read whole for the block: about
        # `block_read_bytes` of its newest part (a few times the window) hold the window.
        self.block_whole_bytes = BLOCK_WHOLE_BYTES
        self.block_read_bytes = max(1 << 16, 16 * archival_max_chars)

    @classmethod
    def open(
        cls,
        workspace: Workspace,
        settings: Settings,
        clock: Clock = datetime.now,
        actor: Actor = CLI,
    ) -> Self:
        memory = settings.memory
        if memory.backend == "mem0" and (memory.review.hold or memory.review.hold_agents):
            raise ConfigError(
                f"Invalid setting 'memory.review' in {workspace.config_path}: holding saves for "
                "review needs a backend with a history (markdown, sqlite, database); mem0 "
                "keeps none."
            )
        store = create_store(workspace, settings, clock)
        setup = RecallSetup(memory.recall, settings.embedding, workspace.db_path)
        service = cls(
            store,
            clock,
            memory.max_entry_chars,
            memory.archival_max_chars,
            setup,
            actor,
            memory.consolidate,
            memory.review,
            settings.mcp.hold,
        )
        service.checks_updates = memory.may_update
        service.real_agent = workspace.real_agent
        return service

    @property
    def by(self) -> Actor:
        """Who is changing memory now: an agent's tool call, else this service's actor."""
        return current_actor.get() or self.actor

    @property
    def backend(self) -> str:
        return self.store.name

    @property
    def watch(self) -> Watch:
        """How a viewer learns that memory changed (files, the database, or by asking)."""
        return self.store.watch

    def refusal(self, agent: str | None, doing: str) -> str | None:
        """Why `doing` (saving, editing, …) cannot be done to the agent's memory here, said
        before anyone types (None: it can). A workspace's own memory: always can."""
        return None

    def stored_agents(self) -> list[str]:
        """Agents whose memory is in the store though this workspace may have no folder for
        them (a shared database); none for stores kept per workspace."""
        return self.store.agents() if isinstance(self.store, Shared) else []

    @property
    def ranked(self) -> bool:
        """Recall answers most relevant first (else: oldest first); known without loading."""
        setup = self.recall_setup
        hybrid = setup is not None and setup.ranks and isinstance(self.store, Rankable)
        return self.store.ranked or hybrid

    @property
    def embedder_model(self) -> str | None:
        """The embedder's model as configured (its provider's name when it names none)."""
        setup = self.recall_setup
        if setup is None or setup.embedding.provider is None:
            return None
        return setup.embedding.model or setup.embedding.provider

    @property
    def embeds(self) -> bool:
        """Recall ranks by meaning here (an embedder is configured), known without loading it."""
        setup = self.recall_setup
        return (
            setup is not None
            and setup.ranks
            and setup.embedding.provider is not None
            and isinstance(self.store, Rankable)
        )

    @property
    def engine(self) -> RecallEngine | None:
        """The ranking engine, when recall ranks here (None: upstream's keyword recall, or a
        store that ranks itself). NumPy and the embedder are loaded on first use."""
        setup = self.recall_setup
        store = self.store
        if setup is None or not setup.ranks or not isinstance(store, Rankable):
            return None
        with self._engine_lock:
            if self._engine is None:
                from oryxtui.memory.recall.embedders import create_embedder
                from oryxtui.memory.recall.engine import RecallEngine

                embedder = create_embedder(setup.embedding)
                self._engine = RecallEngine(
                    store, vector_table(store, setup), setup.settings, embedder
                )
            return self._engine

    @staticmethod
    def resolve_agent(agent: AgentArg = FROM_CONTEXT) -> str | None:
        """The agent a call is for; an unsafe name means the global memory (upstream's rule)."""
        name = current_agent.get() if isinstance(agent, _FromContext) else agent
        return name if is_valid_agent_name(name) else None

    # The memory block --------------------------------------------------------------------------

    def window(self, read: MemoryRead) -> InjectedWindow:
        """Which archival entries of a read are injected, and their text in the block."""
        block = read.archival_block
        if self.store.windowed:
            window = injected_window(block.lines, self.archival_max_chars, block.gaps)
        else:
            window = InjectedWindow(0, tuple(block.lines))
        older = len(read.archival) - len(block.lines)  # the block shows the newest entries
        return replace(window, start=window.start + older) if older else window

    def build_context(self, agent: AgentArg = FROM_CONTEXT) -> str:
        """The memory block exactly as injected: core in full, archival windowed."""
        name = self.resolve_agent(agent)
        read = self.store.read(name, self.block_read_bytes, self.block_whole_bytes)
        window = self.window(read)
        if read.partial is not None and window.start == 0:
            read = self.store.read(name)  # the part read may hold less than the window takes
            window = self.window(read)
        return render_context(read.core_block.lines, window, read.core_block.gaps)

    @property
    def admission(self) -> Admission:
        """The one way in: what every entry must be before it changes a memory."""
        return Admission(self.max_entry_chars)

    def save(
        self,
        agent: AgentArg,
        content: str,
        scope: str | Scope | None = Scope.ARCHIVAL,
        op: str = "save",
        may_update: Sequence[MemoryEntry] = (),
    ) -> MemoryEntry:
        """One new entry, stamped now (`op` "digest" for a digest oryxtui wrote), with the
        entries it probably replaces (`may_update`, recorded for review)."""
        parsed_scope = parse_scope(scope)
        clean = self.admission.text(content)
        stamp = self.clock().strftime(TIME_FORMAT)
        name = self.resolve_agent(agent)
        by = self.by
        store = self.store
        suggested = tuple((entry.scope, entry.line) for entry in may_update)
        if self.holds_change(by, name):
            # Strict review: the entry waits outside the memory until a person approves it.
            held = entry_from_line(entry_line(stamp, clean), parsed_scope)
            hold = replace(change("hold", by, after=[held]), may_update=suggested)
            self._held_store().note(name, hold)
            return held
        entry = store.append(name, stamp, clean, parsed_scope, by, op, suggested)
        self._saw_saved(name, entry)
        return entry

    def _saw_saved(self, name: str | None, entry: MemoryEntry) -> None:
        """The subjects of the memory (the check of what a save replaces) follow a save made
        here, rather than being read again."""
        store, cache = self.store, self._subjects
        if name in cache and entry.scope is Scope.ARCHIVAL and isinstance(store, Rankable):
            with self._subjects_lock:
                _, subjects, on_disk = cache[name]
                subjects.add(entry)
                cache[name] = (store.corpus_version(name), subjects, on_disk)

    def _recorded(self, so: str = " oryxtui can read; its server has its own") -> Recorded:
        """The store, when it keeps a history; mem0 does not (one sentence, `so` its end)."""
        store = self.store
        if not isinstance(store, Recorded):
            raise UsageError(f"The {self.backend} backend keeps no history{so}.")
        return store

    def _held_store(self) -> Recorded:
        """Where a held change waits: the history (a store without one refuses it)."""
        return self._recorded(
            ", so this change cannot wait for review; nothing was changed — set [mcp] hold = "
            "false to trust the client"
        )

    def _editable(self) -> Editable:
        """The store, when it can change single entries; mem0 cannot (one sentence)."""
        store = self.store
        if not isinstance(store, Editable):
            raise UsageError(
                f"The {self.backend} backend cannot change single entries; use its own tools."
            )
        return store

    def holds_change(self, by: Actor, agent: AgentArg = FROM_CONTEXT) -> bool:
        """Whether a change by `by` — a save, edit, move or delete — waits for review: an
        agent's per `[memory.review]`, an MCP client's per `[mcp] hold` (or
        `[memory.review]`)."""
        if is_mcp(by.kind):
            return self.hold_mcp or self.holds(agent)
        return by.kind == "agent" and self.holds(agent)

    def holds(self, agent: AgentArg = FROM_CONTEXT) -> bool:
        """Whether an agent's saves into this memory are held for review (`[memory.review]`)."""
        name = self.resolve_agent(agent)
        if self.review.hold:
            return True
        if name is None:
            return False
        # The agent whatever link it was opened through: its own folder's name decides, and
        # the link's name too (a hold is never lifted by the road taken to the agent).
        names = {name, self.real_agent(name)}
        return any(fnmatchcase(n, p) for n in names if n for p in self.review.hold_agents)

    def snapshot(
        self, agent: AgentArg = FROM_CONTEXT, newest_bytes: int | None = None
    ) -> MemorySnapshot:
        """Every entry; with `newest_bytes`, a big file gives only its newest (see `partial`)."""
        name = self.resolve_agent(agent)
        return self._snapshot(name, self.store.read(name, newest_bytes))

    def _snapshot(self, name: str | None, read: MemoryRead) -> MemorySnapshot:
        return MemorySnapshot(
            digest_lines=self._digest_lines(name),
            agent=name,
            backend=self.backend,
            core=read.core,
            archival=read.archival,
            window=self.window(read),
            memory_file=read.memory_file,
            warning=read.warning,
            blank_file=read.blank_file,
            partial=read.partial,
        )

    def _digest_lines(self, name: str | None) -> frozenset[str]:
        """The digests oryxtui wrote into this memory, by its history (none it cannot read)."""
        store = self.store
        if not isinstance(store, Recorded):
            return frozenset()
        try:
            return frozenset(store.changes(name).replay.digests)
        except OryxError:
            return frozenset()

    def count_archival(self, agent: AgentArg = FROM_CONTEXT) -> int:
        return self.store.count_archival(self.resolve_agent(agent))


def vector_table(store: object, setup: RecallSetup) -> VectorTable | PgVectorTable:
    """Where the index of a store's entries lives: beside them in a shared database
    (pgvector), else in the workspace's oryxos.db."""
    from oryxtui.database import Database
    from oryxtui.memory.backends.postgres.store import PostgresMemoryStore
    from oryxtui.memory.recall.pgvector import PgVectorTable
    from oryxtui.memory.recall.vectors import VectorTable

    if isinstance(store, PostgresMemoryStore):
        return PgVectorTable(store.database)
    return VectorTable(Database(setup.db_path))
