"""The shared PostgreSQL database (`[database] url`): connections, the schema and its upgrades,
and every failure as one sentence with the password masked.

The schema (`postgres_schema`) is upgraded by explicit, idempotent steps (`oryxtui db upgrade`),
as upstream does; a program that finds the schema missing or older says which command to run.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any

from oryxtui.conninfo import ConnInfo, ConnInfoError, scrubbed
from oryxtui.errors import DatabaseError, Unreachable
from oryxtui.postgres_schema import SCHEMA_VERSION, TABLES, UPGRADES

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

    from oryxtui.config import DatabaseSettings

# The pool's own reports (a connection dropped, a reconnect failed) are not for the terminal:
# what fails reaches the user as one sentence.
logging.getLogger("psycopg").addHandler(logging.NullHandler())

CHANNEL = "oryxtui"  # LISTEN/NOTIFY: payloads name what changed (ids, never rows)
SCHEMA_LOCK = 0x6F7279787475  # the advisory lock an upgrade holds ("oryxtu")


class Postgres:
    """One process's view of the shared database: a small pool of connections opened on first
    use, each in UTC, and every failure one sentence (a DatabaseError)."""

    def __init__(self, settings: DatabaseSettings, environ: Mapping[str, str] = os.environ) -> None:
        from oryxtui.extras import require

        if settings.url is None:
            raise DatabaseError("No database url is configured.")
        require("postgres", "A database url")
        try:
            self.conninfo = ConnInfo.parse(settings.url)
        except ConnInfoError as exc:
            raise DatabaseError(
                f"The database url cannot be read ({exc}); write it as "
                "postgresql://user@host:port/dbname."
            ) from None
        self.shown = self.conninfo.shown
        self.pool_size = settings.pool_size
        self.timeout = settings.connect_timeout_seconds
        self._password = environ.get(settings.password_env) if settings.password_env else None
        if settings.password_env and self._password is None:
            raise DatabaseError(
                f"database.password_env names {settings.password_env}, which is not set; set it "
                "to the database password."
            )
        self._pool: ConnectionPool[Any] | None = None
        self._lock = threading.Lock()
        self._schema_checked = False
        self._identity: str | None = None

    def _secrets(self) -> tuple[str, ...]:
        given = ConnInfo((("password", self._password),)).secrets if self._password else ()
        return tuple(sorted({*self.conninfo.secrets, *given}, key=len, reverse=True))

    def sentence(self, error: BaseException, doing: str = "could not be used") -> DatabaseError:
        """One sentence for a failure, what to do, and no password in it."""
        detail = scrubbed(_reason(error), self._secrets())
        if _unreachable(error):
            return Unreachable(
                f"The database {self.shown} cannot be reached ({detail}); check that it is "
                "running and the url, or unset database.url to use this workspace's oryxos.db."
            )
        return DatabaseError(f"The database {self.shown} {doing} ({detail}).")

    @contextmanager
    def errors(self, doing: str = "could not be used") -> Iterator[None]:
        import psycopg
        from psycopg_pool import PoolTimeout

        try:
            yield
        except (psycopg.Error, PoolTimeout, OSError) as exc:
            raise self.sentence(exc, doing) from None

    def _options(self) -> dict[str, Any]:
        """How every connection is opened, pooled or not: autocommit, in UTC."""
        options: dict[str, Any] = {
            **self.conninfo.connect_params,
            "autocommit": True,
            "connect_timeout": max(1, round(self.timeout)),
            "options": " ".join(filter(None, (self.conninfo.get("options"), "-c TimeZone=UTC"))),
        }
        if self._password is not None:
            options["password"] = self._password
        return options

    def connect(self) -> psycopg.Connection[Any]:
        """A connection of its own (for LISTEN, or a one-off)."""
        import psycopg

        with self.errors():
            return psycopg.connect(**self._options())

    def _the_pool(self) -> ConnectionPool[Any]:
        with self._lock:
            if self._pool is None:
                from psycopg_pool import ConnectionPool

                pool: ConnectionPool[Any] = ConnectionPool(
                    "",
                    min_size=1,
                    max_size=self.pool_size,
                    kwargs=self._options(),
                    timeout=self.timeout,
                    open=False,
                    name="oryxtui",
                    # A connection from before a server restart is found broken when taken,
                    # and replaced, instead of failing the next request.
                    check=ConnectionPool.check_connection,
                )
                with self.errors():
                    # One attempt first: a refused or unknown server is said at once, not
                    # after the pool has retried for the whole timeout.
                    self.connect().close()
                    pool.open(wait=True, timeout=self.timeout)
                self._pool = pool
            return self._pool

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection for the block (a broken one is replaced, never handed out).
        When the pool has none to give — the server was down and the pool is waiting out its
        backoff — one connection is made directly: a server that is back answers at once."""
        from psycopg_pool import PoolTimeout

        pool = self._the_pool()
        try:
            pooled = pool.getconn(timeout=min(self.timeout, 2.0))
        except PoolTimeout:
            direct = self.connect()  # Unreachable, one sentence, if it really is down
            try:
                with self.errors():
                    yield direct
            finally:
                direct.close()
            return
        try:
            with self.errors():
                yield pooled
        finally:
            pool.putconn(pooled)

    @contextmanager
    def transaction(self) -> Iterator[psycopg.Connection[Any]]:
        """A connection inside one transaction: committed at the end of the block, rolled back
        by any exception."""
        with self.connection() as connection, connection.transaction():
            yield connection

    def query(self, sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        with self.connection() as connection:
            return connection.execute(sql, params).fetchall()

    def listen(
        self,
        stop: threading.Event,
        heard: Callable[[dict[str, str] | None], None],
        lost: Callable[[str], None],
        retry_seconds: float = 1.0,
    ) -> None:
        """Until `stop` is set: LISTEN on oryxtui's channel and call `heard(payload)` for each
        notification (a payload that is not a JSON object of strings is skipped), and
        `heard(None)` each time listening (re)starts — the caller reads everything again, so
        nothing changed while it was not listening is missed. A lost connection is `lost(one
        sentence)` once, then retried every `retry_seconds`."""
        import json

        import psycopg

        down = False
        while not stop.is_set():
            try:
                connection = self.connect()
            except DatabaseError as exc:
                if not down:
                    lost(str(exc))
                    down = True
                stop.wait(retry_seconds)
                continue
            try:
                with connection:
                    connection.execute(f"LISTEN {CHANNEL}")
                    down = False
                    heard(None)
                    while not stop.is_set():
                        for note in connection.notifies(timeout=0.25, stop_after=64):
                            try:
                                payload = json.loads(note.payload)
                            except ValueError:
                                continue
                            if isinstance(payload, dict) and all(
                                isinstance(v, str) for v in payload.values()
                            ):
                                heard(payload)
            except (psycopg.Error, OSError) as exc:
                if not down:
                    lost(str(self.sentence(exc)))
                    down = True
                stop.wait(retry_seconds)

    def pool_stats(self) -> dict[str, int] | None:
        """The pool's own figures (psycopg_pool's: pool_size, pool_available, pool_max,
        requests_waiting…), without waiting; None before it is opened."""
        pool = self._pool
        return None if pool is None else dict(pool.get_stats())

    def close(self) -> None:
        with self._lock:
            if self._pool is not None:
                self._pool.close()
                self._pool = None

    def identity(self) -> str:
        """An opaque id of this database (its cluster's system identifier and its name): the
        same for every server on it, and no address or name of it in plain."""
        if self._identity is None:  # it never changes: asked of the server once
            import hashlib

            ((system, name),) = self.query(
                "SELECT system_identifier::text, current_database() FROM pg_control_system()"
            )
            self._identity = hashlib.sha256(f"{system}/{name}".encode()).hexdigest()[:16]
        return self._identity

    # The schema.

    def version(self) -> int:
        """The schema version the database has (0: none yet)."""
        with self.connection() as connection:
            return _version(connection)

    def check_schema(self) -> None:
        """DatabaseError naming the command to run unless the schema is this version's (asked
        of the server once per process: every service and session store opened checks)."""
        if self._schema_checked:
            return
        version = self.version()
        if version < SCHEMA_VERSION:
            raise DatabaseError(
                f"The database {self.shown} has "
                + ("no oryxtui schema" if version == 0 else f"schema version {version}")
                + f" (this oryxtui needs {SCHEMA_VERSION}); run `oryxtui db upgrade` once."
            )
        if version > SCHEMA_VERSION:
            raise DatabaseError(
                f"The database {self.shown} has schema version {version}, newer than this "
                f"oryxtui knows ({SCHEMA_VERSION}); upgrade oryxtui."
            )
        self._schema_checked = True

    def upgrade(self) -> tuple[int, int]:
        """Run the steps the database has not had, in one transaction under an advisory lock
        (two processes upgrading at once: one does it, the other finds it done). Returns the
        versions before and after."""
        with self.errors("could not be upgraded"), self.transaction() as connection:
            connection.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
            before = _version(connection)
            for version in range(before + 1, SCHEMA_VERSION + 1):
                connection.execute(UPGRADES[version - 1].encode())
                connection.execute("INSERT INTO oryxtui_schema (version) VALUES (%s)", (version,))
        return before, max(before, SCHEMA_VERSION)

    def status(self) -> dict[str, object]:
        """What `oryxtui db status` shows: the server, the schema and each table's rows."""
        ((server,),) = self.query("SHOW server_version")
        version = self.version()
        counts: dict[str, int | None] = {}
        for table in TABLES:
            ((there,),) = self.query("SELECT to_regclass(%s) IS NOT NULL", (table,))
            counts[table] = (
                int(self.query(f"SELECT count(*) FROM {table}")[0][0]) if there else None
            )
        vector = self.query("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        offered = self.query("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
        return {
            "url": self.shown,
            "server": str(server),
            "schema_version": version,
            "schema_expected": SCHEMA_VERSION,
            "pgvector": str(vector[0][0]) if vector else None,
            "pgvector_available": bool(vector or offered),  # installed on the server
            "tables": counts,
        }


def _version(connection: psycopg.Connection[Any]) -> int:
    """The schema version on `connection` (0: no oryxtui schema yet)."""
    ((there,),) = connection.execute("SELECT to_regclass('oryxtui_schema') IS NOT NULL").fetchall()
    if not there:
        return 0
    ((version,),) = connection.execute(
        "SELECT coalesce(max(version), 0) FROM oryxtui_schema"
    ).fetchall()
    return int(version)


# What libpq says of a connection that failed, and the same in a few words (libpq's own text
# runs over several lines: "…failed: Connection refused\n\tIs the server running on that…").
_REASONS = (
    ("Connection refused", "connection refused"),
    ("No such file", "no server listens on its socket"),
    ("resolve host", "its host name is unknown"),
    ("translate host name", "its host name is unknown"),
    ("timeout", "no answer in time"),
    ("timed out", "no answer in time"),
    ("password authentication failed", "the password was refused"),
    ("server closed", "the server closed the connection"),
    ("terminating connection", "the server is shutting down"),
)
_UNREACHABLE = (
    "connection failed",
    "could not connect",
    "Connection refused",
    "No such file",
    "resolve host",
    "translate host name",
    "timeout",
    "timed out",
    "server closed",
    "terminating connection",
)
MAX_REASON_CHARS = 160


def _reason(error: BaseException) -> str:
    """Why, in a few words, on one line."""
    text = str(error)
    for said, meaning in _REASONS:
        if said in text:
            return meaning
    first = " ".join((text.strip().splitlines() or [""])[0].split()) or type(error).__name__
    return first if len(first) <= MAX_REASON_CHARS else first[: MAX_REASON_CHARS - 1] + "…"


def _unreachable(error: BaseException) -> bool:
    import psycopg
    from psycopg_pool import PoolTimeout

    if isinstance(error, PoolTimeout | OSError):
        return True
    if isinstance(error, psycopg.OperationalError):
        text = str(error)
        if "password authentication failed" in text:
            return False  # reached, and refused: the password is what to fix
        return any(phrase in text for phrase in _UNREACHABLE)
    return False


_SHARED: dict[tuple[str, str | None], Postgres] = {}
_SHARED_LOCK = threading.Lock()


def close_shared() -> None:
    """Close every shared pool (a test's database is about to go; a process ends)."""
    with _SHARED_LOCK:
        databases = list(_SHARED.values())
        _SHARED.clear()
    for database in databases:
        database.close()


def shared(settings: DatabaseSettings) -> Postgres:
    """The process's one Postgres for these settings (one pool per url)."""
    key = (settings.url or "", settings.password_env)
    with _SHARED_LOCK:
        database = _SHARED.get(key)
        if database is None:
            database = _SHARED[key] = Postgres(settings)
        return database


class PortableConnection:
    """A psycopg connection that takes the SQL oryxtui writes for SQLite where the two agree
    (`?` placeholders, `INSERT … ON CONFLICT`, BEGIN IMMEDIATE meaning BEGIN): the session and
    episode stores run on either unchanged."""

    def __init__(self, connection: psycopg.Connection[Any]) -> None:
        self.raw = connection

    @staticmethod
    def sql(text: str) -> str:
        if text.strip().upper() == "BEGIN IMMEDIATE":
            return "BEGIN"
        return text.replace("?", "%s")

    def execute(self, sql: str, params: Sequence[object] = ()) -> Any:
        return self.raw.execute(self.sql(sql), params)

    def executemany(self, sql: str, rows: Sequence[Sequence[object]]) -> Any:
        cursor = self.raw.cursor()
        cursor.executemany(self.sql(sql), rows)
        return cursor


class PortableDatabase:
    """What the session and episode stores ask of `database.Database`, on the shared database:
    a connection per thread, and every failure one sentence."""

    row_order = "ctid"  # where the row was last written
    ranks_vectors = True  # episode vectors are pgvector's: the database ranks them
    full_text = "tsvector"  # the episodes' terms, by a GIN index

    def __init__(self, database: Postgres) -> None:
        self.database = database
        self.path = database.shown  # what messages name as the place
        self._local = threading.local()

    def errors(self) -> Any:
        return self.database.errors()

    def connection(self) -> PortableConnection:
        connection: PortableConnection | None = getattr(self._local, "connection", None)
        if connection is None or connection.raw.closed:
            connection = PortableConnection(self.database.connect())
            self._local.connection = connection
        return connection

    def query(self, sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        with self.errors():
            return list(self.connection().execute(sql, params).fetchall())

    @staticmethod
    def moment(when: datetime) -> object:
        """A time as the table's TIMESTAMPTZ takes it: the instant."""
        return when.astimezone()
