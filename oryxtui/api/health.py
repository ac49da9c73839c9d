"""`GET /healthz` and `GET /readyz`, for systemd, Kubernetes and load balancers.

`/healthz` says the process answers (no key, no detail). `/readyz` says whether it can do its
work: the database reachable, its schema this oryxtui's, the workspace watched, the index
keeper alive (with an embedder) and the shared database's announcements heard. Anyone gets
the status (200 or 503); a caller with a key (or on an open loopback server) also gets one
sentence per failing check — a database's address and reason only go to the log."""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from oryxtui.api.keys import Caller
from oryxtui.errors import OryxError

if TYPE_CHECKING:
    from oryxtui.api.feed import EventFeed
    from oryxtui.config import Settings
    from oryxtui.workspace import Workspace

log = logging.getLogger("oryxtui.api")
router = APIRouter(include_in_schema=False)
PUBLIC = frozenset({"/healthz", "/readyz"})  # answered without a key


@dataclass(frozen=True)
class Check:
    part: str  # database, schema, watch, index_keeper, listen
    ok: bool
    sentence: str = ""  # what is wrong, and what to do (only when not ok)


class Health:
    """The checks of one server."""

    def __init__(
        self, workspace: Workspace, settings: Settings, feed: EventFeed, fresh_for: float = 1.0
    ) -> None:
        self.workspace = workspace
        self.settings = settings
        self.feed = feed
        self.fresh_for = fresh_for  # a flood of probes asks the database at most once a second
        self._last: tuple[float, list[Check]] | None = None
        self._lock = threading.Lock()

    def checks(self) -> list[Check]:
        with self._lock:
            now = time.monotonic()
            if self._last is None or now - self._last[0] >= self.fresh_for:
                self._last = (now, self._checked())
            return self._last[1]

    def _checked(self) -> list[Check]:
        feed = self.feed
        return [
            *self._database(),
            *_part(
                "watch",
                feed.watching(),
                "The workspace is not being watched: changes made outside this server are not "
                "seen; restart the server (its log says why).",
            ),
            *_part(
                "index_keeper",
                feed.keeping_index(),
                "The index keeper has stopped: new entries are not embedded, so recall by "
                "meaning misses them; restart the server.",
            ),
            *_part(
                "listen",
                feed.listening(),
                "The shared database's announcements are not heard (the connection is lost): "
                "other hosts' changes arrive late; it reconnects by itself once the database "
                "answers.",
            ),
        ]

    def _database(self) -> list[Check]:
        try:
            version, expected = self._schema()
        except OryxError as exc:
            log.warning("readiness: the database cannot be used: %s", exc)
            return [
                Check(
                    "database",
                    False,
                    "The database cannot be reached or read (the server's log says why); "
                    "memory in it cannot be read or written until it answers.",
                ),
                Check(
                    "schema", False, "The schema is not known while the database is out of reach."
                ),
            ]
        database = Check("database", True)
        if version == expected:
            return [database, Check("schema", True)]
        advice = (
            "run `oryxtui db upgrade` once"
            if version < expected
            else "this server's oryxtui is older than the database: upgrade it"
        )
        return [
            database,
            Check(
                "schema",
                False,
                f"The database has schema version {version}, this server "
                f"needs {expected}: {advice}.",
            ),
        ]

    def _schema(self) -> tuple[int, int]:
        """(the schema version the database has, the one this oryxtui needs)."""
        if self.settings.database.url:
            from oryxtui.postgres import shared
            from oryxtui.postgres_schema import SCHEMA_VERSION

            return shared(self.settings.database).version(), SCHEMA_VERSION
        from oryxtui.database import Database

        (tables,) = Database(self.workspace.db_path).query(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'sessions'"
        )
        return (1 if tables[0] else 0), 1  # oryxos.db's schema is made when it is opened

    def pool(self) -> dict[str, Any] | None:
        """The shared database's pool figures (None: no shared database, or not opened yet)."""
        if not self.settings.database.url:
            return None
        from oryxtui.postgres import shared

        return shared(self.settings.database).pool_stats()


def _part(part: str, ok: bool | None, trouble: str) -> list[Check]:
    """A part's check (none for a part this server has not: ok is None); `trouble` is what
    a failing one says."""
    return [] if ok is None else [Check(part, ok, "" if ok else trouble)]


def health_of(request: Request) -> Health:
    health = request.app.state.health
    assert isinstance(health, Health), "the app was not made by create_api"
    return health


@router.get("/healthz")
async def healthz() -> JSONResponse:
    """The process answers: 200, nothing else said."""
    return JSONResponse({"status": "ok"})


@router.get("/readyz")
async def readyz(request: Request) -> JSONResponse:
    """200 when every check passes, else 503; with a key, a sentence per failing check."""
    import anyio.to_thread

    checks = await anyio.to_thread.run_sync(health_of(request).checks)
    ready = all(check.ok for check in checks)
    body: dict[str, Any] = {"status": "ready" if ready else "not ready"}
    if isinstance(getattr(request.state, "caller", None), Caller):
        body["checks"] = {check.part: check.ok for check in checks}
        failing = [check.sentence for check in checks if not check.ok]
        if failing:
            body["problems"] = failing
    return JSONResponse(body, status_code=200 if ready else 503)
