"""MemoryService: the facade the CLI, the dashboard, the tools and the API all call."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, replace
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Final

from oryxtui.config import (
    DEFAULT_ARCHIVAL_MAX_CHARS,
    DEFAULT_MAX_ENTRY_CHARS,
    ConsolidateSettings,
    EmbeddingSettings,
    RecallSettings,
    Settings,
)
from oryxtui.errors import ConfigError, MemoryWriteError, OryxError, UsageError
from oryxtui.memory.admission import Admission
from oryxtui.memory.digest import EXTRACTIVE, Digest, Summariser, plan
from oryxtui.memory.format import (
    TIME_FORMAT,
    InjectedWindow,
    MemoryEntry,
    Scope,
    entry_from_line,
    entry_line,
    injected_window,
    render_context,
)
from oryxtui.memory.history import CLI, Actor, Record, cleaned, current_actor, memory_at
from oryxtui.memory.markdown_store import MarkdownMemoryStore
from oryxtui.memory.sqlite_store import SqliteMemoryStore
from oryxtui.memory.store import (
    Change,
    Editable,
    LongTermMemoryStore,
    MemoryRead,
    MemorySnapshot,
    Rankable,
    Recorded,
    Restorable,
    Watch,
)
from oryxtui.phrases import agent_label
from oryxtui.workspace import Workspace, is_valid_agent_name

if TYPE_CHECKING:
    from oryxtui.memory.recall.engine import RecallEngine
    from oryxtui.memory.recall.results import IndexStatus, Recall

Clock = Callable[[], datetime]


class _FromContext:
    def __repr__(self) -> str:
        return "FROM_CONTEXT"


FROM_CONTEXT: Final = _FromContext()
AgentArg = str | None | _FromContext

BLOCK_WHOLE_BYTES = 16 << 20

# The agent a tool call runs for; set by the tool executor, read when no agent is passed.
current_agent: ContextVar[str | None] = ContextVar("oryxtui_current_agent", default=None)


def create_store(
    workspace: Workspace, settings: Settings, clock: Clock = datetime.now
) -> LongTermMemoryStore:
    memory = settings.memory
    if memory.backend == "markdown":
        return MarkdownMemoryStore(workspace, clock=clock)
    if memory.backend == "sqlite":
        return SqliteMemoryStore(workspace, clock=clock)
    if memory.backend == "mem0":
        from oryxtui.memory.mem0_store import Mem0MemoryStore

        return Mem0MemoryStore(memory.mem0)
    raise ConfigError(f"Unknown memory.backend '{memory.backend}'.")


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
        return mode == "hybrid" or (mode == "auto" and self.embedding.provider is not None)


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
    """Save, load, recall and list an agent's long-term memory, whatever the backend. The store
    keeps the entries; the service decides what the memory block holds (the window)."""

    def __init__(
        self,
        store: LongTermMemoryStore,
        clock: Clock = datetime.now,
        max_entry_chars: int = DEFAULT_MAX_ENTRY_CHARS,
        archival_max_chars: int = DEFAULT_ARCHIVAL_MAX_CHARS,
        recall_setup: RecallSetup | None = None,
        actor: Actor = CLI,
        consolidate: ConsolidateSettings | None = None,
    ) -> None:
        self.store = store
        self.consolidation = consolidate or ConsolidateSettings()
        self.actor = actor  # who changes memory through this service, unless a tool call says
        self.recall_setup = recall_setup
        self._engine: RecallEngine | None = None
        self._engine_lock = threading.Lock()
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
    ) -> MemoryService:
        memory = settings.memory
        store = create_store(workspace, settings, clock)
        setup = RecallSetup(memory.recall, settings.embedding, workspace.db_path)
        return cls(
            store,
            clock,
            memory.max_entry_chars,
            memory.archival_max_chars,
            setup,
            actor,
            memory.consolidate,
        )

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

    @property
    def ranked(self) -> bool:
        """Recall answers most relevant first (else: oldest first); known without loading."""
        setup = self.recall_setup
        hybrid = setup is not None and setup.ranks and isinstance(self.store, Rankable)
        return self.store.ranked or hybrid

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
                from oryxtui.database import Database
                from oryxtui.memory.recall.embedders import create_embedder
                from oryxtui.memory.recall.engine import RecallEngine

                embedder = create_embedder(setup.embedding)
                database = Database(setup.db_path)
                self._engine = RecallEngine(store, database, setup.settings, embedder)
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
    ) -> MemoryEntry:
        """One new entry, stamped now (`op` "digest" for a digest oryxtui wrote)."""
        parsed_scope = parse_scope(scope)
        clean = self.admission.text(content)
        stamp = self.clock().strftime(TIME_FORMAT)
        name = self.resolve_agent(agent)
        return self.store.append(name, stamp, clean, parsed_scope, self.by, op)

    def recall(self, agent: AgentArg, keyword: str, semantic: bool = True) -> Recall:
        """Archival entries for `keyword`: ranked (hybrid), by the store (mem0), or upstream's
        keyword recall. `semantic=False` skips the semantic route (answers as you type)."""
        from oryxtui.memory.recall.results import Hit, Recall

        if not keyword.strip():
            raise UsageError("Nothing to recall: the keyword is empty.")
        name = self.resolve_agent(agent)
        engine = self.engine
        if engine is not None:
            return engine.recall(name, keyword, semantic)
        found = self.store.search(name, keyword)
        mode = "delegated" if self.store.ranked else "keyword"
        return Recall(keyword, mode, [Hit(entry) for entry in found])

    def find_core(self, agent: AgentArg, query: str) -> list[MemoryEntry]:
        """Core entries holding `query` (any case), or all its words in any order: what the
        dashboard's recall shows beside the archival hits. (Recall itself, the agent's tool,
        never searches core, as upstream: core is always in the prompt.)"""
        from oryxtui.memory.recall.tokens import tokens

        needle, words = query.strip().lower(), set(tokens(query))
        if not needle:
            return []
        return [
            entry
            for entry in self.snapshot(self.resolve_agent(agent)).core
            if needle in entry.content.lower() or (words and words <= set(tokens(entry.content)))
        ]

    def recall_across(
        self, agents: Sequence[str | None], keyword: str, semantic: bool = True
    ) -> Recall:
        """Recall from each of `agents` (None: the global memory), every hit labelled with its
        agent: ranked recall merges them best first, keyword recall gives them agent by agent.
        An agent whose memory cannot be read is left out (its notice says why)."""
        from oryxtui.memory.recall.results import Recall

        found: list[Recall] = []
        problems = []
        for agent in agents:
            try:
                recall = self.recall(agent, keyword, semantic)
            except OryxError as exc:
                if isinstance(exc, UsageError):
                    raise
                problems.append(str(exc))
                continue
            found.append(replace(recall, hits=[replace(h, agent=agent) for h in recall.hits]))
        hits = [hit for recall in found for hit in recall.hits]
        mode = found[0].mode if found else "keyword"
        if mode != "keyword":
            hits.sort(key=lambda hit: -(hit.score or 0.0))
            if self.recall_setup is not None:
                hits = hits[: self.recall_setup.settings.top_k]
        notices = [recall.notice for recall in found if recall.notice] + problems
        semantic_state = next((r.semantic for r in found if r.semantic != "off"), "off")
        problem = next((r.problem for r in found if r.problem), None)
        return Recall(keyword, mode, hits, semantic_state, notices[0] if notices else None, problem)

    # Consolidation ----------------------------------------------------------------------------

    def consolidate(
        self,
        agent: AgentArg,
        dry_run: bool = False,
        summarise: Summariser | None = None,
        method: str = EXTRACTIVE,
        min_entries: int = 1,
    ) -> Digest | None:
        """The next digest (see `digest.plan`): written as the newest archival entry unless
        `dry_run`; None when fewer than `min_entries` entries outside the window are uncovered.
        Nothing is deleted: the covered entries stay, and stay recallable."""
        store = self.store
        if not isinstance(store, Recorded):
            raise UsageError(f"The {self.backend} backend keeps its own memory: no digests.")
        name = self.resolve_agent(agent)
        snapshot = self.snapshot(name)
        core, lines = [e.line for e in snapshot.core], list(snapshot.archival_lines())

        def window_with(line: str) -> int:
            read = store.memory_read({Scope.CORE: core, Scope.ARCHIVAL: [*lines, line]})
            return self.window(read).start

        stamp = self.clock().strftime(TIME_FORMAT)
        digest = plan(
            snapshot.archival,
            snapshot.coverage,
            snapshot.window_start,
            window_with,
            stamp,
            self.consolidation.max_chars,
            summarise,
            method,
            min_entries,
        )
        if digest is not None and not dry_run:
            self.save(name, digest.content, Scope.ARCHIVAL, op="digest")
        return digest

    def uncovered(self, agent: AgentArg = FROM_CONTEXT) -> int:
        """How many archival entries outside the injected window no digest covers."""
        snapshot = self.snapshot(self.resolve_agent(agent))
        return len(snapshot.coverage.uncovered(len(snapshot.archival), snapshot.window_start))

    # Steering: edit, move, delete -------------------------------------------------------------

    def edit(self, agent: AgentArg, entry_id: str, content: str) -> MemoryEntry:
        """The entry's text replaced (its time and scope kept); returns the entry now."""
        clean = self.admission.text(content)
        entry_id = entry_id.strip()

        def edited(old: MemoryEntry) -> MemoryEntry:
            line = entry_line(old.time, clean) if old.time else f"- {clean}"
            return entry_from_line(line, old.scope)

        new = self._replace(agent, entry_id, edited, "edit")[1]
        assert new is not None
        return new

    def move(self, agent: AgentArg, entry_id: str, scope: str | Scope) -> MemoryEntry:
        """The entry moved to the end of the other section, its line (and time) kept."""
        target = parse_scope(scope)

        def moved(old: MemoryEntry) -> MemoryEntry:
            if old.scope is target:
                raise UsageError(f"The entry is already in {target.value}; nothing was changed.")
            return entry_from_line(old.line, target)

        new = self._replace(agent, entry_id.strip(), moved, "move")[1]
        assert new is not None
        return new

    def change(
        self,
        agent: AgentArg,
        entry_id: str,
        content: str | None = None,
        scope: str | Scope | None = None,
    ) -> MemoryEntry:
        """The entry's text replaced and/or the entry moved to `scope`, in one write (its time
        kept); the whole request is checked before anything changes. Returns the entry now."""
        clean = None if content is None else self.admission.text(content)
        target = None if scope is None else parse_scope(scope)
        if clean is None and target is None:
            raise UsageError("Nothing to change: give the new text, the scope, or both.")

        def changed(old: MemoryEntry) -> MemoryEntry:
            to = target or old.scope
            if clean is None and to is old.scope:
                raise UsageError(f"The entry is already in {to.value}; nothing was changed.")
            text = old.content if clean is None else clean
            line = (
                old.line
                if clean is None
                else (entry_line(old.time, text) if old.time else f"- {text}")
            )
            return entry_from_line(line, to)

        new = self._replace(agent, entry_id.strip(), changed, "edit")[1]
        assert new is not None
        return new

    def delete(self, agent: AgentArg, entry_id: str) -> MemoryEntry:
        """The entry removed; returns it as it was."""
        return self._replace(agent, entry_id.strip(), lambda old: None, "delete")[0]

    def remove_duplicates(self, agent: AgentArg) -> list[MemoryEntry]:
        """Entries that repeat an earlier one of their section (same words, any case or
        spacing) removed, the oldest kept; returns the removed ones."""
        return self._editable().remove_duplicates(self.resolve_agent(agent), self.by)

    def _replace(
        self, agent: AgentArg, entry_id: str, change: Change, op: str
    ) -> tuple[MemoryEntry, MemoryEntry | None]:
        name = self.resolve_agent(agent)
        return self._editable().replace(name, entry_id, change, op, self.by)

    def _editable(self) -> Editable:
        """The store, when it can change single entries; mem0 cannot (one sentence)."""
        store = self.store
        if not isinstance(store, Editable):
            raise UsageError(
                f"The {self.backend} backend cannot change single entries; use its own tools."
            )
        return store

    def index_status(self, agent: AgentArg = FROM_CONTEXT) -> IndexStatus | None:
        """How much of the agent's archival memory has vectors (None: no embedder here)."""
        engine = self.engine
        return engine.status(self.resolve_agent(agent)) if engine is not None else None

    def sync_index(
        self,
        agent: AgentArg = FROM_CONTEXT,
        rebuild: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> IndexStatus | None:
        """Embed the entries the index lacks and drop the rows of removed ones."""
        engine = self.engine
        if engine is None:
            return None
        return engine.sync(self.resolve_agent(agent), rebuild, progress)

    def lost(self, agent: AgentArg = FROM_CONTEXT) -> list[MemoryEntry]:
        """Entries oryxtui saved that an outside edit removed (only files have outside editors)."""
        store = self.store
        return store.lost(self.resolve_agent(agent)) if isinstance(store, Restorable) else []

    def restore(self, agent: AgentArg = FROM_CONTEXT) -> list[MemoryEntry]:
        """Save the lost entries again, with their original times; returns what was restored."""
        store = self.store
        if not isinstance(store, Restorable):
            return []
        what = "the entries to restore"
        admit = partial(self.admission.entries, what=what)
        return store.restore(self.resolve_agent(agent), admit, self.by)

    def accept(self, agent: AgentArg = FROM_CONTEXT) -> list[MemoryEntry]:
        """Accept an outside removal: the lost entries are forgotten, not restored."""
        store = self.store
        if not isinstance(store, Restorable):
            return []
        return store.accept(self.resolve_agent(agent), self.by)

    # History ----------------------------------------------------------------------------------

    def _recorded(self) -> Recorded:
        """The store, when it keeps a history; mem0 does not (one sentence)."""
        store = self.store
        if not isinstance(store, Recorded):
            raise UsageError(
                f"The {self.backend} backend keeps no history oryxtui can read; its server "
                "has its own."
            )
        return store

    def reconcile(self, agent: AgentArg = FROM_CONTEXT) -> list[Record]:
        """Record what another program changed since oryxtui last looked (the watcher calls
        this); returns the records written."""
        store = self.store
        if not isinstance(store, Recorded):
            return []
        return store.reconcile(self.resolve_agent(agent))

    def history(
        self, agent: AgentArg = FROM_CONTEXT, since: datetime | None = None
    ) -> list[Record]:
        """Every change to the agent's memory, newest first (outside changes recorded first);
        with `since`, only those made then or later."""
        store = self._recorded()
        name = self.resolve_agent(agent)
        # A workspace oryxtui may not write to still has a history to read (up to its last
        # record: what changed since cannot be recorded there).
        with contextlib.suppress(MemoryWriteError):
            store.reconcile(name)
        shown = [record for record in store.changes(name).records if record.shown]
        if since is not None:
            floor = since.isoformat(timespec="seconds")
            shown = [r for r in shown if r.time is not None and r.time >= floor]
        return shown[::-1]

    def as_of(self, agent: AgentArg, n: int) -> tuple[MemorySnapshot, str] | None:
        """The memory right after change `n`, and the memory block it injected (None: from
        before the history knew the memory)."""
        store = self._recorded()
        name = self.resolve_agent(agent)
        lines = memory_at(store.changes(name).records, n)
        if lines is None:
            return None
        read = store.memory_read(lines)
        window = self.window(read)
        return self._snapshot(name, read), render_context(read.core_block.lines, window)

    def change_record(self, agent: AgentArg, n: int) -> Record:
        """Change `n` of the agent's history (the number `memory log` shows)."""
        name = self.resolve_agent(agent)
        found = next((r for r in self.history(name) if r.n == n), None)
        if found is None:
            raise UsageError(
                f"No change #{n} in the history of {agent_label(name)}; `oryxtui memory log` "
                "lists them."
            )
        return found

    def bring_back(self, agent: AgentArg, record: Record | int) -> list[MemoryEntry]:
        """The entries change `record` removed (or edited away), written again with their
        times, unless they are there; returns those written."""
        store = self._recorded()
        name = self.resolve_agent(agent)
        if isinstance(record, int):
            record = self.change_record(name, record)
        snapshot = self.snapshot(name)
        present = {entry.line for entry in [*snapshot.core, *snapshot.archival]}
        # A moved entry is still there, in its other section: nothing to bring back.
        entries = [cleaned(key) for key in record.before if key[1] not in present]
        admitted = self.admission.entries(entries, f"change #{record.n}")
        return store.bring_back(name, admitted, self.by) if admitted else []

    def import_entries(
        self, agent: AgentArg, entries: Sequence[MemoryEntry], source: str = "the import"
    ) -> tuple[list[MemoryEntry], int]:
        """Entries written into the memory with their scopes and times, in one write, but for
        as many copies of each as are there already (same time and text, either section);
        returns what was written and how many were skipped. One entry the admission refuses
        refuses them all, before anything is written."""
        store = self.store
        if not isinstance(store, Recorded):
            raise UsageError(
                f"The {self.backend} backend cannot take entries with their times; import into "
                "a workspace with the markdown or sqlite backend."
            )
        admitted = self.admission.entries(entries, source)
        name = self.resolve_agent(agent)
        written = store.bring_back(name, admitted, self.by, "import") if admitted else []
        return written, len(entries) - len(written)

    def history_problems(self, agent: AgentArg = FROM_CONTEXT) -> str | None:
        """A sentence about unreadable lines in the history `lost` and `restore` rely on."""
        store = self.store
        if not isinstance(store, Recorded):
            return None
        return store.history_problems(self.resolve_agent(agent))

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
