"""Moving a workspace into the shared database (`oryxtui db migrate`), as its plan says
(`migration_plan`): the tables of its oryxos.db (sessions, tool audits, model calls and their
prompts, memory vectors) and its memory — an agent new to the database with its whole history
(`adopt`), else as an import. Idempotent: a second run adds nothing — rows are keyed (sessions
by id, vectors by hash, the rest through `oryxtui_migrated`, which remembers each source row),
and an import counts the copies already there."""

from __future__ import annotations

import socket
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from oryxtui.config import DEFAULT_MAX_ENTRY_CHARS
from oryxtui.errors import DatabaseError, UsageError
from oryxtui.memory.backends.markdown.store import MarkdownMemoryStore
from oryxtui.memory.backends.postgres.store import PostgresMemoryStore, adopt, stamped
from oryxtui.memory.backends.rows import time_text
from oryxtui.memory.backends.sqlite import SqliteMemoryStore
from oryxtui.memory.format import (
    Clock,
    MemoryEntry,
)
from oryxtui.memory.history import Actor
from oryxtui.memory.migration_plan import AgentPlan, Plan, plan, table_names
from oryxtui.memory.service import MemoryService
from oryxtui.memory.store import Recorded
from oryxtui.postgres import Postgres
from oryxtui.workspace import GLOBAL_AGENT, Workspace

MIGRATION = Actor("cli")
BATCH = 5000


@dataclass
class Migrated:
    """What one run copied (and found there already), table by table."""

    copied: dict[str, int] = field(default_factory=dict)
    already: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)  # rows that were no rows
    verified: dict[str, int] = field(default_factory=dict)  # source rows found in the database
    # Per agent, the memory_entries rows of oryxos.db the import let in (what must be there).
    admitted: dict[str, int] = field(default_factory=dict)
    # Rows that cannot go as they are: (table, the row's key, why), each named in the report.
    refused: list[tuple[str, str, str]] = field(default_factory=list)
    merged: dict[str, AgentPlan] = field(default_factory=dict)  # agents merged into (--merge)
    carried: dict[str, int] = field(default_factory=dict)  # history records moved, per agent

    def refuse(self, table: str, key: str, why: str) -> None:
        self.refused.append((table, key, why))
        self.add(table, 0, 0, 1)

    def add(self, table: str, copied: int, already: int, skipped: int = 0) -> None:
        self.copied[table] = self.copied.get(table, 0) + copied
        self.already[table] = self.already.get(table, 0) + already
        if skipped:
            self.skipped[table] = self.skipped.get(table, 0) + skipped

    def refused_in(self, table: str) -> set[str]:
        """The keys of the rows of `table` left out."""
        return {key for where, key, _ in self.refused if where == table}

    def to_json(self) -> dict[str, object]:
        return {
            "copied": self.copied,
            "already_there": self.already,
            "skipped": self.skipped,
            "verified": self.verified,
            "refused": [
                {"table": table, "row": key, "why": why} for table, key, why in self.refused
            ],
            "merged": {name: agent.others for name, agent in self.merged.items()},
            "history_carried": self.carried,
        }


def source_name(workspace: Workspace) -> str:
    """Which oryxos.db rows came from: this host and the file's path."""
    return f"{socket.gethostname()}:{workspace.db_path.resolve()}"


def migrate(
    workspace: Workspace,
    database: Postgres,
    memory_files: bool,
    clock: Clock = datetime.now,
    max_entry_chars: int = DEFAULT_MAX_ENTRY_CHARS,
    merge: bool = False,
) -> Migrated:
    """Copy the workspace in. Memory goes the one way every entry goes into a memory (an
    import: cleaned, held to `max_entry_chars`) and is recorded in the history as imported;
    an entry that cannot go as it is is left out and named. An agent the database holds
    other memory of is merged into only with `merge` (else nothing is written)."""
    database.upgrade()  # explicit: the command that moves data in also makes the tables
    database.check_schema()
    planned = plan(workspace, database, memory_files, max_entry_chars, clock)
    merges = planned.merges()
    if merges and not merge:
        named = ", ".join(f"{name} ({agent.others} there)" for name, agent in merges.items())
        raise UsageError(
            f"The database already holds other memory of {named}: add --merge to merge this "
            "workspace's entries into it (--dry-run shows the plan); nothing was written."
        )
    done = Migrated(merged=merges)
    for refused in planned.refused:
        done.refuse(*refused)
    if planned.unreadable:
        done.add("memory_entries", 0, 0, planned.unreadable)
    source = (
        sqlite3.connect(f"file:{workspace.db_path}?mode=ro", uri=True)
        if workspace.db_path.exists()
        else None
    )
    try:
        if source is not None:
            _copy_sessions(source, database, done, planned.conflicts)
            _copy_keyed(source, database, done, source_name(workspace))
            _copy_vectors(source, database, done)
        _move_memory(workspace, database, planned, done, clock, max_entry_chars)
        if source is not None:
            _verify(source, database, done, source_name(workspace))
    finally:
        if source is not None:
            source.close()
    return done


def _move_memory(
    workspace: Workspace,
    database: Postgres,
    planned: Plan,
    done: Migrated,
    clock: Clock,
    max_entry_chars: int,
) -> None:
    """Each agent's memory: one new to the database with its history (`adopt`), the others
    through the import."""
    target = PostgresMemoryStore(database, clock)
    memory = MemoryService(target, clock, max_entry_chars, actor=MIGRATION)
    # Where each source's history is: MEMORY.md files' journals, or those of oryxos.db's rows.
    histories: dict[str, Recorded] = {
        "MEMORY.md": MarkdownMemoryStore(workspace, clock=clock),
        "memory_entries": SqliteMemoryStore(workspace, clock=clock),
    }
    for name, agent in planned.agents.items():
        agent_name = None if name == GLOBAL_AGENT else name
        for table, where, entries in agent.sources:
            if table == "memory_entries":
                done.admitted[name] = len(entries)
            if len(agent.sources) == 1 and not agent.there + agent.others:
                # New to the database: moved with its whole history, as it is (a change made
                # outside oryxtui since it last looked is recorded first, as found).
                history = histories[table]
                history.reconcile(agent_name)
                records = history.changes(agent_name).records
                if adopt(target, agent_name, entries, records):
                    done.add(table, len(entries), 0)
                    done.carried[name] = len(records)
                    continue
            _import(memory, agent_name, entries, where, table, done)


def _import(
    memory: MemoryService,
    agent: str | None,
    entries: list[MemoryEntry],
    source: str,
    table: str,
    done: Migrated,
) -> None:
    """`entries` (admitted already) into the agent's memory through the import."""
    written, _ = memory.import_entries(agent, entries, source) if entries else ([], 0)
    done.add(table, len(written), len(entries) - len(written))


def _unmovable(row: tuple[Any, ...]) -> str | None:
    """Why a source row cannot go into PostgreSQL as it is (None: it can)."""
    if any(isinstance(value, str) and "\x00" in value for value in row):
        return "holds a NUL character, which PostgreSQL text cannot hold; left out"
    return None


def _instant(value: object) -> datetime | None:
    """A stored time (text, or epoch milliseconds) as an instant; None if it is none."""
    text = time_text(value) if value is not None else ""
    if not text:
        return None
    try:
        return stamped(text) if len(text) == 19 else datetime.fromisoformat(text).astimezone()
    except ValueError:
        return None


CONFLICT = "held in the database with other messages (another workspace's?); left as it is there"


def _copy_sessions(
    source: sqlite3.Connection, database: Postgres, done: Migrated, conflicts: Sequence[str]
) -> None:
    if "sessions" not in table_names(source):
        return
    rows = source.execute(
        "SELECT session_id, profile_name, channel, user_id, messages_json, status, created_at,"
        " last_active_at, archived_at FROM sessions"
    ).fetchall()
    named = [row for row in rows if isinstance(row[0], str) and row[0]]
    good = []
    for row in named:
        why = CONFLICT if row[0] in conflicts else _unmovable(row)
        if why is None:
            good.append(row)
        else:
            done.refuse("sessions", row[0], why)
    copied = 0
    with database.transaction() as connection:
        for row in good:
            created = _instant(row[6]) or datetime.now().astimezone()
            cursor = connection.execute(
                "INSERT INTO sessions (session_id, profile_name, channel, user_id, messages_json,"
                " status, created_at, last_active_at, archived_at)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (session_id) DO NOTHING",  # never over another's session
                (
                    row[0],
                    str(row[1] or ""),
                    str(row[2] or ""),
                    str(row[3] or ""),
                    row[4],
                    str(row[5] or "ACTIVE"),
                    created,
                    _instant(row[7]),
                    _instant(row[8]),
                ),
            )
            copied += cursor.rowcount
    done.add("sessions", copied, len(good) - copied, len(rows) - len(named))


# Tables without a natural key: each source row is remembered by its id in oryxtui_migrated,
# so a second run copies nothing twice. (table, columns; `created_at` last, an instant.)
BY_SOURCE_ID = (
    (
        "tool_invocations",
        "session_id, tool_name, input_json, result_json, success, error_message, duration_ms",
    ),
    (
        "llm_calls",
        "session_id, provider, model, prompt_tokens, completion_tokens, total_tokens,"
        " cost_micros, profile_name, trace_id, success, error_message, duration_ms",
    ),
    (
        "oryxtui_model_calls",
        "session_id, agent_name, turn, call, provider, model, messages, tools, estimated_tokens,"
        " actor",
    ),
)
BOOLEAN_COLUMNS = ("success",)


def _copy_keyed(
    source: sqlite3.Connection, database: Postgres, done: Migrated, origin: str
) -> None:
    """The tables of BY_SOURCE_ID (tool audits, model calls, recorded prompts), and the prompt
    parts the recorded prompts are made of (keyed by their hash)."""
    tables = table_names(source)
    for table, columns in BY_SOURCE_ID:
        if table in tables:
            _copy_rows(source, database, done, origin, table, columns)
    if "oryxtui_prompt_parts" in tables:
        rows = source.execute("SELECT hash, text, base FROM oryxtui_prompt_parts").fetchall()
        copied = 0
        with database.transaction() as connection:
            for row in rows:
                if (why := _unmovable(row)) is not None:
                    done.refuse("oryxtui_prompt_parts", str(row[0]), why)
                    continue
                copied += connection.execute(
                    "INSERT INTO oryxtui_prompt_parts (hash, text, base) VALUES (%s, %s, %s)"
                    " ON CONFLICT (hash) DO NOTHING",
                    row,
                ).rowcount
        done.add("oryxtui_prompt_parts", copied, len(rows) - copied)


def _copy_rows(
    source: sqlite3.Connection,
    database: Postgres,
    done: Migrated,
    origin: str,
    table: str,
    columns: str,
) -> None:
    names = [name.strip() for name in columns.split(",")]
    have = {row[1] for row in source.execute(f"PRAGMA table_info({table})")}
    chosen = [name for name in names if name in have]  # an older oryxos.db lacks some
    rows = source.execute(
        f"SELECT id, {', '.join(chosen)}, created_at FROM {table} ORDER BY id"
    ).fetchall()
    copied = refused = 0
    insert = (
        f"INSERT INTO {table} ({', '.join(chosen)}, created_at)"
        f" VALUES ({', '.join(['%s'] * (len(chosen) + 1))})"
    )
    with database.transaction() as connection:
        for row in rows:
            if (why := _unmovable(row)) is not None:
                done.refuse(table, f"#{row[0]}", why)
                refused += 1
                continue
            claimed = connection.execute(
                "INSERT INTO oryxtui_migrated (origin, source_table, source_id)"
                " VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                (origin, table, row[0]),
            ).rowcount
            if not claimed:
                continue
            values = [
                bool(value) if name in BOOLEAN_COLUMNS else value
                for name, value in zip(chosen, row[1:-1], strict=True)
            ]
            created = _instant(row[-1]) or datetime.now().astimezone()
            connection.execute(insert, (*values, created))
            copied += 1
    done.add(table, copied, len(rows) - copied - refused)


def _copy_vectors(source: sqlite3.Connection, database: Postgres, done: Migrated) -> None:
    if "memory_vectors" not in table_names(source):
        return
    total = copied = skipped = 0
    cursor = source.execute(
        "SELECT entry_hash, agent_name, content, embedding, dim, embedding_model, entry_time,"
        " created_at FROM memory_vectors ORDER BY id"
    )
    while batch := cursor.fetchmany(BATCH):
        good: list[tuple[Any, ...]] = []
        for row in batch:
            if not isinstance(row[3], bytes) or not isinstance(row[4], int):
                skipped += 1
                continue
            why = _unmovable(row)
            if why is not None:
                done.refuse("memory_vectors", f"{row[1]}/{row[0]}", why)
                continue
            good.append(
                (
                    str(row[0]),
                    str(row[1]),
                    str(row[2]),
                    row[3],
                    row[4],
                    str(row[5]),
                    _instant(row[6]),
                    _instant(row[7]) or datetime.now().astimezone(),
                )
            )
        total += len(good)
        with database.transaction() as connection, connection.cursor() as writer:
            for values in good:
                writer.execute(
                    "INSERT INTO memory_vectors (entry_hash, agent_name, content, embedding, dim,"
                    " embedding_model, entry_time, created_at)"
                    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
                    " ON CONFLICT (agent_name, entry_hash) DO NOTHING",
                    values,
                )
                copied += writer.rowcount
    done.add("memory_vectors", copied, total - copied, skipped)


def _verify(source: sqlite3.Connection, database: Postgres, done: Migrated, origin: str) -> None:
    """Every source row is in the database now (counted by key); else nothing is claimed."""
    tables = table_names(source)
    checks: list[tuple[str, int, int]] = []
    if "sessions" in tables:
        left_out = done.refused_in("sessions")
        ids = [
            str(r[0])
            for r in source.execute("SELECT session_id FROM sessions")
            if r[0] and str(r[0]) not in left_out
        ]
        ((there,),) = database.query(
            "SELECT count(*) FROM sessions WHERE session_id = ANY(%s)", (ids,)
        )
        checks.append(("sessions", len(ids), int(there)))
    if "tool_invocations" in tables:
        ((count,),) = source.execute("SELECT count(*) FROM tool_invocations").fetchall()
        ((there,),) = database.query(
            "SELECT count(*) FROM oryxtui_migrated WHERE origin = %s"
            " AND source_table = 'tool_invocations'",
            (origin,),
        )
        refused = len(done.refused_in("tool_invocations"))
        checks.append(("tool_invocations", int(count) - refused, int(there)))
    if "memory_vectors" in tables:
        by_agent: dict[str, set[str]] = {}
        for agent, hash_ in source.execute("SELECT agent_name, entry_hash FROM memory_vectors"):
            by_agent.setdefault(str(agent), set()).add(str(hash_))
        found = 0
        for agent, hashes in by_agent.items():
            ((there,),) = database.query(
                "SELECT count(*) FROM memory_vectors WHERE agent_name = %s"
                " AND entry_hash = ANY(%s)",
                (agent, list(hashes)),
            )
            found += int(there)
        pairs = sum(len(hashes) for hashes in by_agent.values())
        checks.append(("memory_vectors", pairs - done.skipped.get("memory_vectors", 0), found))
    if done.admitted:
        expected = found = 0
        for agent, count in done.admitted.items():
            ((there,),) = database.query(
                "SELECT count(*) FROM memory_entries WHERE agent_name = %s", (agent,)
            )
            expected += count
            found += min(count, int(there))  # an agent may have more there (its own)
        checks.append(("memory_entries", expected, found))
    for table, expected, found in checks:
        if found < expected:
            raise DatabaseError(
                f"Copying {table} into {database.shown} did not take: {expected} rows here, "
                f"{found} of them there; nothing else is claimed — run `oryxtui db migrate` "
                "again, or look at the database's log."
            )
        done.verified[table] = found
