"""The memory backends a test runs against: MEMORY.md files, upstream's table in oryxos.db,
and the same table in a real shared PostgreSQL (the `database_url` fixture)."""

from __future__ import annotations

import sqlite3

import pytest

from oryxtui.config import Settings
from oryxtui.workspace import Workspace

BACKENDS = ["markdown", "sqlite", "postgres"]
TABLES = ("sqlite", "postgres")  # upstream's memory_entries, in oryxos.db or a shared database


def backend_settings(request: pytest.FixtureRequest, backend: str) -> Settings:
    if backend == "postgres":
        url = request.getfixturevalue("database_url")
        return Settings.model_validate({"memory": {"backend": "sqlite"}, "database": {"url": url}})
    return Settings.model_validate({"memory": {"backend": backend}})


def on_database(url: str) -> dict[str, str]:
    """The environment of an oryxtui process on the shared database at `url`."""
    return {"ORYXTUI_DATABASE_URL": url, "ORYXTUI_MEMORY__BACKEND": "database"}


def outside_sql(
    request: pytest.FixtureRequest, workspace: Workspace, backend: str, sql: str
) -> None:
    """`sql` run by another program (upstream OryxOS, say) on the backend's database."""
    if backend == "postgres":
        import psycopg

        with psycopg.connect(request.getfixturevalue("database_url"), autocommit=True) as db:
            db.execute(sql.encode())
    else:
        with sqlite3.connect(workspace.db_path) as db:
            db.execute(sql)
