"""The one place that knows the SQLite schema of `oryxos.db` and how connections are opened."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import overload

from oryxtui.errors import DatabaseError
from oryxtui.privacy import made_private

BUSY_TIMEOUT_MS = 10_000

SCHEMA = """
CREATE TABLE IF NOT EXISTS memory_entries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    agent_name VARCHAR(128) NOT NULL DEFAULT '__global__',
    scope VARCHAR(16) NOT NULL,
    content TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_memory_entries_agent_scope
    ON memory_entries (agent_name, scope, id);
CREATE TABLE IF NOT EXISTS sessions (
    session_id VARCHAR(255) PRIMARY KEY,
    profile_name VARCHAR(128),
    channel VARCHAR(64),
    user_id VARCHAR(128),
    messages_json TEXT NOT NULL DEFAULT '[]',
    status VARCHAR(16) NOT NULL DEFAULT 'ACTIVE',
    created_at TIMESTAMP NOT NULL,
    last_active_at TIMESTAMP NOT NULL,
    archived_at TIMESTAMP
);
CREATE TABLE IF NOT EXISTS tool_invocations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id VARCHAR(255),
    tool_name VARCHAR(128) NOT NULL,
    input_json TEXT,
    result_json TEXT,
    success BOOLEAN NOT NULL,
    error_message TEXT,
    duration_ms INTEGER,
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_tool_invocations_session ON tool_invocations (session_id, id);
CREATE TABLE IF NOT EXISTS memory_vectors (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    entry_hash VARCHAR(64) NOT NULL,
    agent_name VARCHAR(128) NOT NULL,
    content TEXT NOT NULL,
    embedding BLOB NOT NULL,
    dim INTEGER NOT NULL,
    embedding_model VARCHAR(128) NOT NULL,
    entry_time TIMESTAMP,
    created_at TIMESTAMP NOT NULL,
    UNIQUE (agent_name, entry_hash)
);
CREATE INDEX IF NOT EXISTS idx_memvec_agent ON memory_vectors (agent_name);
CREATE TABLE IF NOT EXISTS episodes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id VARCHAR(255) NOT NULL,
    turn INTEGER NOT NULL,
    agent_name VARCHAR(128) NOT NULL,
    channel VARCHAR(64),
    user_text TEXT NOT NULL,
    reply TEXT NOT NULL,
    tools TEXT NOT NULL DEFAULT '',
    turn_time TIMESTAMP,
    UNIQUE (session_id, turn)
);
CREATE INDEX IF NOT EXISTS idx_episodes_agent ON episodes (agent_name, id);
CREATE TABLE IF NOT EXISTS episode_vectors (
    episode_id INTEGER PRIMARY KEY,
    embedding_model VARCHAR(128) NOT NULL,
    dim INTEGER NOT NULL,
    embedding BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS episode_sources (
    session_id VARCHAR(255) PRIMARY KEY,
    last_active TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS oryxtui_api_keys (
    name VARCHAR(64) PRIMARY KEY,
    key_prefix VARCHAR(16) NOT NULL UNIQUE,
    key_hash VARCHAR(64) NOT NULL,
    scope VARCHAR(8) NOT NULL,
    agents TEXT,
    created_at TIMESTAMP NOT NULL,
    last_used_at TIMESTAMP,
    revoked_at TIMESTAMP
);
CREATE TABLE IF NOT EXISTS oryxtui_prompt_parts (
    hash VARCHAR(64) PRIMARY KEY,
    text TEXT NOT NULL,
    base VARCHAR(64)
);
CREATE TABLE IF NOT EXISTS oryxtui_model_calls (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id VARCHAR(255) NOT NULL,
    agent_name VARCHAR(128),
    turn INTEGER NOT NULL,
    call INTEGER NOT NULL,
    provider VARCHAR(64) NOT NULL,
    model VARCHAR(128) NOT NULL,
    messages TEXT NOT NULL,
    tools VARCHAR(64) NOT NULL,
    estimated_tokens INTEGER,
    created_at TIMESTAMP NOT NULL,
    actor VARCHAR(80)
);
CREATE INDEX IF NOT EXISTS idx_model_calls_turn ON oryxtui_model_calls (session_id, turn, call);
CREATE TABLE IF NOT EXISTS llm_calls (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id VARCHAR(255) NOT NULL,
    provider VARCHAR(64) NOT NULL,
    model VARCHAR(128) NOT NULL,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    total_tokens INTEGER,
    cost_micros BIGINT,
    profile_name VARCHAR(255),
    trace_id VARCHAR(64),
    success BOOLEAN NOT NULL,
    error_message TEXT,
    duration_ms BIGINT NOT NULL,
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_llm_calls_session ON llm_calls (session_id);
"""


class Database:
    """`oryxos.db` as one program uses it: a connection per thread, opened on first use, and
    every failure one sentence (a DatabaseError), never a raw sqlite3 error."""

    row_order = "rowid"  # rows in the order they were written
    ranks_vectors = False  # vectors are BLOBs: the process ranks them

    def __init__(self, path: Path, busy_timeout_ms: int = BUSY_TIMEOUT_MS) -> None:
        self.path = path
        self.busy_timeout_ms = busy_timeout_ms
        self._local = threading.local()

    @contextmanager
    def errors(self) -> Iterator[None]:
        """Turn a sqlite3 error raised inside into this database's one-sentence failure."""
        try:
            yield
        except sqlite3.Error as exc:
            raise failure(self.path, exc) from None

    def connection(self) -> sqlite3.Connection:
        """This thread's connection (SQLite connections must not cross threads)."""
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is None:
            with self.errors():
                connection = connect(self.path, self.busy_timeout_ms)
            self._local.connection = connection
        return connection

    def query(self, sql: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
        with self.errors():
            return self.connection().execute(sql, params).fetchall()

    @property
    def full_text(self) -> str | None:
        """The episodes' full-text index: FTS5, or None where this SQLite has no FTS5."""
        with self.errors():
            return "fts5" if has_table(self.connection(), "episode_words") else None

    @staticmethod
    def moment(when: datetime) -> object:
        """A time as oryxos.db stores it: local time text."""
        return when.strftime("%Y-%m-%d %H:%M:%S")


def connect(path: Path, busy_timeout_ms: int = BUSY_TIMEOUT_MS) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit), WAL, with a busy timeout.
    A database it creates is its owner's alone (0600; SQLite gives its WAL the same mode)."""
    with contextlib.suppress(OSError):  # (SQLite says why it cannot make it, if it cannot)
        made_private(path)
    connection = sqlite3.connect(path, isolation_level=None, timeout=busy_timeout_ms / 1000)
    connection.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
    _enable_wal(connection, busy_timeout_ms)
    connection.execute("PRAGMA synchronous = NORMAL")
    # Unicode lower-casing for recall; SQLite's own lower() only folds ASCII.
    connection.create_function("unicode_lower", 1, str.lower, deterministic=True)
    with write_transaction(connection):
        upgrade_memory_entries(connection)
        for statement in SCHEMA.split(";"):
            if statement.strip():
                connection.execute(statement)
        _add_columns(connection, "oryxtui_prompt_parts", {"base": "VARCHAR(64)"})
        _add_columns(connection, "oryxtui_model_calls", {"actor": "VARCHAR(80)"})
        _add_columns(connection, "episodes", {"terms": "TEXT", "term_count": "INTEGER"})
        for index in EPISODE_INDEXES:
            connection.execute(index)
        _add_full_text(connection)
    return connection


# What the episodes' search asks of the tables: how many an agent has, of how many terms, which
# have no terms yet (stored by an earlier oryxtui), and which sessions moved.
EPISODE_INDEXES = (
    "CREATE INDEX IF NOT EXISTS idx_episodes_agent_terms ON episodes (agent_name, term_count)",
    "CREATE INDEX IF NOT EXISTS idx_episodes_unfilled ON episodes (agent_name) WHERE terms IS NULL",
    # which of an agent's sessions moved since their episodes were taken, without reading them
    "CREATE INDEX IF NOT EXISTS idx_oryxtui_sessions_active"
    " ON sessions (profile_name, last_active_at, channel)",
)
# The episodes' full-text index (FTS5, over `episodes.terms`), kept by triggers whoever writes.
EPISODE_WORDS = (
    """CREATE VIRTUAL TABLE episode_words USING fts5(terms, content='episodes',
    content_rowid='id', tokenize="unicode61 remove_diacritics 0 tokenchars '_'")""",
    """CREATE TRIGGER IF NOT EXISTS episode_words_insert AFTER INSERT ON episodes BEGIN
    INSERT INTO episode_words (rowid, terms) VALUES (new.id, new.terms); END""",
    """CREATE TRIGGER IF NOT EXISTS episode_words_delete AFTER DELETE ON episodes BEGIN
    INSERT INTO episode_words (episode_words, rowid, terms) VALUES ('delete', old.id, old.terms);
    END""",
    """CREATE TRIGGER IF NOT EXISTS episode_words_update AFTER UPDATE OF terms ON episodes BEGIN
    INSERT INTO episode_words (episode_words, rowid, terms) VALUES ('delete', old.id, old.terms);
    INSERT INTO episode_words (rowid, terms) VALUES (new.id, new.terms); END""",
    "INSERT INTO episode_words (episode_words) VALUES ('rebuild')",  # the rows already there
)


def _add_full_text(connection: sqlite3.Connection) -> None:
    """The episodes' FTS5 index, made once (with the episodes stored before it); a SQLite
    built without FTS5 goes without (the episodes' search then reads their terms)."""
    if has_table(connection, "episode_words"):
        return
    try:
        for statement in EPISODE_WORDS:
            connection.execute(statement)
    except sqlite3.OperationalError as exc:
        if "fts5" not in str(exc):
            raise


def has_table(connection: sqlite3.Connection, name: str) -> bool:
    row = connection.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
    ).fetchone()
    return row is not None


def _add_columns(connection: sqlite3.Connection, table: str, columns: dict[str, str]) -> None:
    """Columns a table made by an earlier oryxtui lacks, added (idempotent)."""
    have = {row[1] for row in connection.execute(f"PRAGMA table_info({table})")}
    for name, kind in columns.items():
        if name not in have:
            connection.execute(f"ALTER TABLE {table} ADD COLUMN {name} {kind}")


def upgrade_memory_entries(connection: sqlite3.Connection) -> bool:
    """Upstream's MemorySchemaUpgrade: a `memory_entries` table from before per-agent memory
    gets its `agent_name` column, old rows going to the global memory, and upstream's index.
    True when it upgraded the table."""
    columns = {row[1] for row in connection.execute("PRAGMA table_info(memory_entries)")}
    if not columns or "agent_name" in columns:
        return False
    connection.execute(
        "ALTER TABLE memory_entries"
        " ADD COLUMN agent_name VARCHAR(128) NOT NULL DEFAULT '__global__'"
    )
    connection.execute(
        "CREATE INDEX IF NOT EXISTS idx_memory_agent ON memory_entries (agent_name, scope)"
    )
    return True


def _enable_wal(connection: sqlite3.Connection, busy_timeout_ms: int) -> None:
    """Switching a new database to WAL answers "locked" at once, whatever the busy timeout,
    while another connection is doing the same; so retry until the timeout."""
    deadline = time.monotonic() + busy_timeout_ms / 1000
    while True:
        try:
            connection.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.005)


@contextmanager
def write_transaction(connection: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """BEGIN IMMEDIATE: take the write lock up front, so the busy timeout applies."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield connection
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")


@overload
def storable(text: str) -> str: ...
@overload
def storable(text: None) -> None: ...
def storable(text: str | None) -> str | None:
    """`text` as SQLite can store it: a lone surrogate (from bytes that were not UTF-8, in an
    argument or a model's reply) becomes U+FFFD instead of an encoding error."""
    if text is None:
        return None
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def failure(path: Path, error: sqlite3.Error) -> DatabaseError:
    """One sentence for a database failure: what happened to `path` and what to do."""
    detail = str(error)
    if "locked" in detail or "busy" in detail:
        problem = "stayed locked by another program; try again when it is free"
    elif "malformed" in detail or "not a database" in detail or "corrupt" in detail:
        problem = (
            "is damaged; restore it from a backup, or move it aside and oryxtui starts a new one"
        )
    elif "readonly" in detail or "read-only" in detail or "disk" in detail or "full" in detail:
        problem = "cannot be written; check the disk and the file's permissions"
    else:
        problem = "could not be used; check the file"
    return DatabaseError(f"The database {path} {problem} ({detail}).")
