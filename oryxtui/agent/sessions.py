"""Session memory in `oryxos.db`: upstream's `sessions` table, saved compare-and-set."""

from __future__ import annotations

import json
import threading
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from oryxtui import database, notices
from oryxtui.agent.messages import Message, parse_messages
from oryxtui.errors import DatabaseError, SessionConflict
from oryxtui.memory.format import Clock
from oryxtui.workspace import GLOBAL_AGENT

if TYPE_CHECKING:
    from oryxtui.config import Settings
    from oryxtui.workspace import Workspace

GLOBAL_PROFILE = GLOBAL_AGENT  # a session of the global memory


def session_id_for(channel: str, user: str, agent: str | None) -> str:
    return f"{channel}:{user}:{agent or GLOBAL_PROFILE}"


def os_user() -> str:
    """Who is at the keyboard, for session ids; "user" where the system cannot say."""
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "user"


@dataclass
class Session:
    session_id: str
    profile_name: str
    channel: str
    user_id: str
    messages: list[Message] = field(default_factory=list)
    stored_json: str | None = None  # messages_json as last read or written; None: not stored yet

    def messages_json(self) -> str:
        return database.storable(
            json.dumps([m.to_json() for m in self.messages], ensure_ascii=False)
        )


class Conversations(Protocol):
    """Where sessions and episodes are kept: oryxos.db (`database.Database`), or the shared
    database (`postgres.PortableDatabase`); the SQL is written for both."""

    path: Any
    row_order: str  # the column that orders rows as written (rowid, ctid)
    ranks_vectors: bool  # the database ranks episode vectors itself (pgvector)

    @property
    def full_text(self) -> str | None: ...  # the episodes' index: "fts5", "tsvector" or None

    def errors(self) -> AbstractContextManager[None]: ...
    def connection(self) -> Any: ...
    def query(self, sql: str, params: tuple[object, ...] = ()) -> list[tuple[Any, ...]]: ...
    def moment(self, when: datetime) -> object: ...


def conversations(workspace: Workspace, settings: Settings) -> Path | Conversations:
    """The workspace's oryxos.db, or the shared database when one is configured."""
    if settings.database.url is None:
        return workspace.db_path
    from oryxtui.postgres import PortableDatabase, shared

    database = shared(settings.database)
    database.check_schema()
    return PortableDatabase(database)


def open_conversations(workspace: Workspace, settings: Settings) -> Conversations:
    """Where conversations (and the tables beside them) are, opened: oryxos.db or the shared
    database."""
    found = conversations(workspace, settings)
    return database.Database(found) if isinstance(found, Path) else found


class SessionStore:
    """One connection per thread; every write is a short BEGIN IMMEDIATE transaction. Every
    database failure is a DatabaseError with one sentence, never a raw sqlite3 error."""

    def __init__(
        self,
        db: Path | Conversations,
        clock: Clock = datetime.now,
        busy_timeout_ms: int = database.BUSY_TIMEOUT_MS,
    ) -> None:
        self.database: Conversations = (
            database.Database(db, busy_timeout_ms) if isinstance(db, Path) else db
        )
        self.db_path = self.database.path  # what messages name as the place
        self.clock = clock
        # Audit rows of tools that ran while the database failed, written once it works again.
        self._pending: list[tuple[object, ...]] = []
        self._pending_lock = threading.Lock()

    def load(
        self, session_id: str, agent: str | None, channel: str, user: str, to_write: bool = True
    ) -> Session:
        """The session (empty when it has none yet). A message that cannot be read refuses a
        load `to_write` to it (writing back would drop it); a load only to look (a prompt
        preview, the chat's history) skips it and says how many."""
        with self.database.errors():
            row = (
                self.database.connection()
                .execute("SELECT messages_json FROM sessions WHERE session_id = ?", (session_id,))
                .fetchone()
            )
        session = Session(session_id, agent or GLOBAL_PROFILE, channel, user)
        if row is not None:
            session.stored_json = row[0]
            session.messages, skipped = parse_messages(row[0])
            if skipped and not to_write:
                notices.skipped(skipped, "message", f"session {session_id}")
            elif skipped:
                # Going on would write the session back without what could not be read.
                raise DatabaseError(
                    f"Session {session_id} in {self.db_path} holds messages oryxtui cannot "
                    f"read ({skipped:,}); it is left as it is — repair or delete that row, or "
                    "talk in another session."
                )
        return session

    def save(self, session: Session) -> None:
        """Write only if nobody changed the row since we read it; else raise SessionConflict."""
        with self.database.errors():
            self._save(session)

    def _save(self, session: Session) -> None:
        now = self.database.moment(self.clock())
        new_json = session.messages_json()
        connection = self.database.connection()
        with database.write_transaction(connection):
            if session.stored_json is None:
                cursor = connection.execute(
                    "INSERT INTO sessions (session_id, profile_name, channel, user_id,"
                    " messages_json, status, created_at, last_active_at)"
                    " VALUES (?, ?, ?, ?, ?, 'ACTIVE', ?, ?) ON CONFLICT DO NOTHING",
                    (
                        session.session_id,
                        session.profile_name,
                        session.channel,
                        session.user_id,
                        new_json,
                        now,
                        now,
                    ),
                )
            else:
                cursor = connection.execute(
                    "UPDATE sessions SET messages_json = ?, last_active_at = ?"
                    " WHERE session_id = ? AND messages_json = ?",
                    (new_json, now, session.session_id, session.stored_json),
                )
        if cursor.rowcount != 1:
            raise SessionConflict(f"Session {session.session_id} was changed by another process.")
        session.stored_json = new_json

    def append(self, session: Session, *messages: Message) -> None:
        """Add messages and save; on a conflict, reload the other writer's version and add to it."""
        for _ in range(20):
            candidate = list(session.messages) + list(messages)
            previous = session.messages
            session.messages = candidate
            try:
                self.save(session)
                return
            except SessionConflict:
                session.messages = previous
                fresh = self.load(
                    session.session_id, session.profile_name, session.channel, session.user_id
                )
                session.messages, session.stored_json = fresh.messages, fresh.stored_json
        raise SessionConflict(f"Session {session.session_id} kept changing; try again.")

    def record_tool_call(
        self,
        session_id: str | None,
        tool_name: str,
        input_json: str,
        result_json: str | None,
        success: bool,
        error_message: str | None,
        duration_ms: int,
    ) -> None:
        """Audit one tool call. If the database fails, the row is kept and written by the next
        call or `flush_tool_calls` (the tool did run), and the failure is raised."""
        row = (
            database.storable(session_id),
            database.storable(tool_name),
            database.storable(input_json),
            database.storable(result_json),
            success,
            database.storable(error_message),
            duration_ms,
            self.database.moment(self.clock()),
        )
        with self._pending_lock:
            self._pending.append(row)
        self.flush_tool_calls()

    def flush_tool_calls(self) -> None:
        """Write the audit rows a failing database kept back; raises DatabaseError if it still
        fails (the rows stay pending)."""
        with self._pending_lock:
            if not self._pending:
                return
            with self.database.errors():
                connection = self.database.connection()
                with database.write_transaction(connection):
                    connection.executemany(
                        "INSERT INTO tool_invocations (session_id, tool_name, input_json,"
                        " result_json, success, error_message, duration_ms, created_at)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        self._pending,
                    )
            self._pending.clear()
