"""`oryxtui db status|upgrade|migrate`: the shared PostgreSQL database (`[database] url`)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from oryxtui.cli.common import DB, EXIT_OK, arg, open_workspace, print_json, say, show
from oryxtui.errors import UsageError

if TYPE_CHECKING:
    from oryxtui.config import DatabaseSettings, Settings
    from oryxtui.postgres import Postgres


def _database(
    settings: Settings, url: str | None = None, password_env: str | None = None
) -> Postgres:
    from oryxtui.conninfo import has_password
    from oryxtui.postgres import Postgres

    chosen: DatabaseSettings = settings.database
    if url is not None:
        if has_password(url):
            raise UsageError(
                "The url given to --to holds a password, which anyone on this machine can "
                "read in the process list: take it out, and set PGPASSWORD or name the "
                "variable that holds it with --password-env."
            )
        update = {"url": type(chosen).model_validate({"url": url}).url}
        if password_env is not None:
            update["password_env"] = password_env
        chosen = chosen.model_copy(update=update)
    if chosen.url is None:
        raise UsageError(
            "No shared database is configured: set [database] url in the workspace's "
            "config.toml or ORYXTUI_DATABASE_URL (every table is in oryxos.db until then)."
        )
    return Postgres(chosen)


@DB.command("status", "the database's server, schema version, tables and row counts", json=True)
def status(args: argparse.Namespace) -> int:
    workspace, settings = open_workspace(args)
    if settings.database.url is None:
        if args.json:
            print_json({"url": None, "sqlite": str(workspace.db_path)})
        else:
            show(
                f"No shared database: every table is in {workspace.db_path} "
                "([database] url in config.toml moves them to PostgreSQL).\n"
            )
        return EXIT_OK
    database = _database(settings)
    found = database.status()
    if args.json:
        print_json(found)
        return EXIT_OK
    lines = [
        f"{found['url']} — PostgreSQL {found['server']}, pgvector {found['pgvector'] or 'absent'}",
        f"schema version {found['schema_version']} (this oryxtui: {found['schema_expected']})",
    ]
    tables = found["tables"]
    assert isinstance(tables, dict)
    width = max(len(name) for name in tables)
    for name, count in tables.items():
        lines.append(f"  {name.ljust(width)}  {'absent' if count is None else count:>10}")
    show("\n".join(lines) + "\n")
    if found["schema_version"] != found["schema_expected"]:
        say("oryxtui: `oryxtui db upgrade` brings the schema to this oryxtui's version.")
    return EXIT_OK


@DB.command("upgrade", "create or upgrade oryxtui's tables (idempotent)", json=True)
def upgrade(args: argparse.Namespace) -> int:
    _, settings = open_workspace(args)
    database = _database(settings)
    before, after = database.upgrade()
    if args.json:
        print_json({"url": database.shown, "from": before, "to": after})
    elif before == after:
        show(f"{database.shown} is at schema version {after} already.\n")
    else:
        show(f"{database.shown}: schema version {before} → {after}.\n")
    return EXIT_OK


@DB.command(
    "migrate",
    "copy this workspace's oryxos.db (and MEMORY.md files) into the shared database",
    arg("--to", metavar="URL", help="the database (default: [database] url); no password in it"),
    arg(
        "--password-env",
        metavar="NAME",
        help="the environment variable holding --to's password (default: libpq's PGPASSWORD)",
    ),
    arg("--memory", action="store_true", help="also copy every MEMORY.md into memory_entries"),
    json=True,
)
def migrate(args: argparse.Namespace) -> int:
    from oryxtui.memory.migration import migrate as run

    workspace, settings = open_workspace(args)
    database = _database(settings, args.to, args.password_env)
    done = run(workspace, database, args.memory, max_entry_chars=settings.memory.max_entry_chars)
    if args.json:
        print_json({"url": database.shown, **done.to_json()})
        return EXIT_OK
    lines = [f"Into {database.shown}:"]
    for table in sorted(set(done.copied) | set(done.skipped)):
        copied, there = done.copied.get(table, 0), done.already.get(table, 0)
        line = f"  {table}: {copied} copied, {there} there already"
        if done.skipped.get(table):
            line += f", {done.skipped[table]} unreadable and skipped"
        lines.append(line)
    if len(lines) == 1:
        lines.append("  nothing to copy.")
    for table, key, why in done.refused:
        lines.append(f"  left out: {table} {key}: {why}")
    if done.verified:
        lines.append(f"Checked: every other row of {', '.join(sorted(done.verified))} is there.")
    show("\n".join(lines) + "\n")
    return EXIT_OK
