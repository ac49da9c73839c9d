"""What a move into the shared database would do (`oryxtui db migrate --dry-run`, and the plan
`migrate` follows): per agent the entries to copy, those a run before put there, and what the
database holds of the agent from elsewhere (a merge); sessions new, there, or in conflict; and
what cannot go as it is. Read only: nothing is written."""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from oryxtui.config import DEFAULT_MAX_ENTRY_CHARS
from oryxtui.errors import UsageError
from oryxtui.memory.admission import Admission
from oryxtui.memory.backends.markdown.store import MarkdownMemoryStore
from oryxtui.memory.backends.postgres.store import PostgresMemoryStore
from oryxtui.memory.backends.rows import SCOPE_OF, time_text
from oryxtui.memory.format import Clock, MemoryEntry, entry_from_line, entry_line, sanitize_content
from oryxtui.postgres import Postgres
from oryxtui.workspace import GLOBAL_AGENT, Workspace, is_valid_agent_name


@dataclass
class AgentPlan:
    """One agent's memory in the move: what goes in, what a run before put there already,
    and what the database held of the agent from elsewhere (then the move is a merge)."""

    sources: list[tuple[str, str, list[MemoryEntry]]] = field(default_factory=list)
    new: int = 0
    there: int = 0
    others: int = 0

    @property
    def entries(self) -> int:
        return sum(len(entries) for _, _, entries in self.sources)


@dataclass
class Plan:
    """What a move would do, read without writing anything (`db migrate --dry-run`)."""

    agents: dict[str, AgentPlan] = field(default_factory=dict)
    sessions: dict[str, int] = field(default_factory=lambda: {"new": 0, "there": 0})
    conflicts: list[str] = field(default_factory=list)  # session ids held with other messages
    rows: dict[str, int] = field(default_factory=dict)  # tool_invocations, memory_vectors
    refused: list[tuple[str, str, str]] = field(default_factory=list)
    unreadable: int = 0  # rows of memory_entries that are no entries (no scope, no agent)

    def merges(self) -> dict[str, AgentPlan]:
        return {name: agent for name, agent in self.agents.items() if agent.others}

    def to_json(self) -> dict[str, object]:
        return {
            "agents": {
                name: {
                    "entries": agent.entries,
                    "new": agent.new,
                    "already_there": agent.there,
                    "merged_into": agent.others,
                }
                for name, agent in self.agents.items()
            },
            "sessions": self.sessions,
            "session_conflicts": self.conflicts,
            "rows": self.rows,
            "refused": [{"table": t, "row": key, "why": why} for t, key, why in self.refused],
        }


def plan(
    workspace: Workspace,
    database: Postgres,
    memory_files: bool,
    max_entry_chars: int = DEFAULT_MAX_ENTRY_CHARS,
    clock: Clock = datetime.now,
) -> Plan:
    """What `migrate` would copy, and what it would merge or leave (nothing is written; a
    database without oryxtui's tables counts as empty)."""
    found = Plan()
    admission = Admission(max_entry_chars)
    if workspace.db_path.exists():
        source = sqlite3.connect(f"file:{workspace.db_path}?mode=ro", uri=True)
        try:
            tables = table_names(source)
            _plan_sessions(source, database, found)
            for table in ("tool_invocations", "llm_calls", "oryxtui_model_calls", "memory_vectors"):
                if table in tables:
                    ((count,),) = source.execute(f"SELECT count(*) FROM {table}").fetchall()
                    found.rows[table] = int(count)
            by_agent, found.unreadable = memory_rows(source)
            for owner, entries in by_agent.items():
                where = f"{owner}'s rows of memory_entries"
                _plan_agent(found, owner, "memory_entries", where, entries, admission)
        finally:
            source.close()
    if memory_files:
        markdown = MarkdownMemoryStore(workspace, clock=clock)
        for folder in workspace.memories():
            if not workspace.memory_file(folder).exists():
                continue
            read = markdown.read(folder)
            name = folder or GLOBAL_AGENT
            where = f"{workspace.memory_file(folder).name} of {name}"
            entries = [*read.core, *read.archival]
            _plan_agent(found, name, "MEMORY.md", where, entries, admission)
    store = PostgresMemoryStore(database, clock) if database.version() else None
    for name, agent in found.agents.items():
        if store is None:  # no tables yet: nothing there
            agent.new = agent.entries
            continue
        # The database's own rows, to tell a repeat of this move from a merge.
        held = store.read(None if name == GLOBAL_AGENT else name)
        coming = [e for _, _, group in agent.sources for e in group]
        agent.there, agent.others = _overlap(coming, [*held.core, *held.archival])
        agent.new = agent.entries - agent.there
    return found


def _overlap(coming: Sequence[MemoryEntry], held: Sequence[MemoryEntry]) -> tuple[int, int]:
    """How many of `coming` the database holds already, and how many entries it holds besides
    them. An entry without a time was stamped when it went in: its text alone matches; one
    to the minute went in with :00 seconds."""
    there = Counter((_seconds(e.time), e.content) for e in held)
    dated: Counter[tuple[str | None, str]] = Counter(
        (_seconds(e.time), e.content) for e in coming if e.time
    )
    found = dated & there
    rest = Counter(content for (_, content), count in (there - found).items() for _ in range(count))
    timeless = Counter(e.content for e in coming if not e.time)
    matched = sum(found.values()) + sum((timeless & rest).values())
    return matched, len(held) - matched


def _seconds(time: str | None) -> str | None:
    """A time to the second (`2026-07-01 09:30` → `2026-07-01 09:30:00`)."""
    return f"{time}:00" if time is not None and len(time) == 16 else time


def _plan_agent(
    found: Plan,
    agent: str,
    table: str,
    where: str,
    entries: Sequence[MemoryEntry],
    admission: Admission,
) -> None:
    """The agent's entries from one source, each as the import takes it; one that cannot go
    (too long, an impossible time) is left out and named, never the whole agent."""
    admitted: list[MemoryEntry] = []
    for number, entry in enumerate(entries, 1):
        if not sanitize_content(entry.content):
            continue
        why = _unfit_time(entry.time)
        if why is None:
            try:
                admitted.append(admission.entry(entry))
                continue
            except UsageError as exc:
                why = str(exc)
        found.refused.append((table, f"{agent} entry {number}", why))
    if not admitted:
        return  # an empty memory (a file with only its headers) brings nothing
    found.agents.setdefault(agent, AgentPlan()).sources.append((table, where, admitted))


def _unfit_time(time: str | None) -> str | None:
    """Why an entry's time cannot be kept (None: it can, or it has none)."""
    if not time:
        return None
    try:
        datetime.strptime(time[:19], "%Y-%m-%d %H:%M:%S" if len(time) > 16 else "%Y-%m-%d %H:%M")
    except ValueError:
        return f"its time [{time}] is no real date; left out"
    return None


def table_names(source: sqlite3.Connection) -> set[str]:
    return {row[0] for row in source.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def _plan_sessions(source: sqlite3.Connection, database: Postgres, found: Plan) -> None:
    """Sessions new to the database, there already as they are here, or held there with
    other messages (a conflict: another workspace's session of that id, never overwritten)."""
    if "sessions" not in table_names(source):
        return
    rows = [
        (str(key), messages)
        for key, messages in source.execute("SELECT session_id, messages_json FROM sessions")
        if isinstance(key, str) and key
    ]
    held: dict[str, object] = {}
    if rows and database.version():
        held = dict(
            database.query(
                "SELECT session_id, messages_json FROM sessions WHERE session_id = ANY(%s)",
                ([key for key, _ in rows],),
            )
        )
    for key, messages in rows:
        if key not in held:
            found.sessions["new"] += 1
        elif held[key] == messages:
            found.sessions["there"] += 1
        else:
            found.conflicts.append(key)


def memory_rows(source: sqlite3.Connection) -> tuple[dict[str, list[MemoryEntry]], int]:
    """The entries of oryxos.db's memory_entries by agent, and how many rows were none."""
    if "memory_entries" not in table_names(source):
        return {}, 0
    columns = {row[1] for row in source.execute("PRAGMA table_info(memory_entries)")}
    agent_column = "agent_name" if "agent_name" in columns else f"'{GLOBAL_AGENT}'"
    rows = source.execute(
        f"SELECT {agent_column}, scope, content, created_at FROM memory_entries ORDER BY id"
    ).fetchall()
    by_agent: dict[str, list[MemoryEntry]] = {}
    skipped = 0
    for agent, scope, content, created in rows:
        valid = agent == GLOBAL_AGENT or is_valid_agent_name(str(agent))
        if str(scope) not in SCOPE_OF or not isinstance(content, str) or not valid:
            skipped += 1
            continue
        line = entry_line(time_text(created), content)
        by_agent.setdefault(str(agent), []).append(entry_from_line(line, SCOPE_OF[str(scope)]))
    return by_agent, skipped
