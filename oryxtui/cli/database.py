"""`oryxtui db status|upgrade|migrate`: the shared PostgreSQL database (`[database] url`)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from oryxtui.cli.common import DB, EXIT_OK, arg, open_workspace, print_json, say, show
from oryxtui.errors import UsageError
from oryxtui.phrases import counted

if TYPE_CHECKING:
    from oryxtui.config import DatabaseSettings, Settings
    from oryxtui.memory.migration_plan import Plan
    from oryxtui.postgres import Postgres


# What each rendering of the memory block (`[memory] block`) gives the agents.
BLOCKS = {
    "markdown": "as from MEMORY.md files (`- [time] content`, the newest whole entries within "
    "archival_max_chars)",
    "rows": "upstream's rows (`- content`, the newest 100 archival rows; [memory] block)",
}


def _block(settings: Settings) -> str:
    """The memory block the agents get on the shared database."""
    from oryxtui.memory.backends import block_rendering

    return block_rendering(settings, shared=True)


def _database(
    settings: Settings, url: str | None = None, password_env: str | None = None
) -> Postgres:
    from oryxtui.addresses import AddressError, database_url
    from oryxtui.postgres import Postgres

    chosen: DatabaseSettings = settings.database
    if url is not None:
        try:
            address = database_url(url)
        except AddressError as exc:
            raise UsageError(f"--to: {exc}.") from None
        if address.has_password:
            raise UsageError(
                "The url given to --to holds a password, which anyone on this machine can "
                "read in the process list: take it out, and set PGPASSWORD or name the "
                "variable that holds it with --password-env."
            )
        update = {"url": url}
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
    found = database.status() | {"memory_block": _block(settings)}
    if args.json:
        print_json(found)
        return EXIT_OK
    if found["pgvector"]:
        vector = f"pgvector {found['pgvector']}"
    elif found["pgvector_available"]:
        vector = "pgvector available, not enabled (db upgrade enables it)"
    else:
        vector = (
            "no pgvector on this server: oryxtui's tables need it (install it, then db upgrade)"
        )
    lines = [
        f"{found['url']} — PostgreSQL {found['server']}, {vector}",
        f"schema version {found['schema_version']} (this oryxtui: {found['schema_expected']})",
        f"memory block: {BLOCKS[_block(settings)]}",
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
    arg(
        "--memory",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="copy every MEMORY.md too (the default; --no-memory leaves them)",
    ),
    arg("--merge", action="store_true", help="merge into agents the database has memory of"),
    arg("--dry-run", action="store_true", help="show what would be copied; write nothing"),
    json=True,
)
def migrate(args: argparse.Namespace) -> int:
    from oryxtui.memory.migration import migrate as run
    from oryxtui.memory.migration_plan import plan

    workspace, settings = open_workspace(args)
    database = _database(settings, args.to, args.password_env)
    limit = settings.memory.max_entry_chars
    block = _block(settings)
    if args.dry_run:
        planned = plan(workspace, database, args.memory, limit)
        if args.json:
            print_json({"url": database.shown, **planned.to_json(), "memory_block": block})
        else:
            show(_plan_text(database.shown, planned, block))
        return EXIT_OK
    done = run(workspace, database, args.memory, max_entry_chars=limit, merge=args.merge)
    if args.json:
        print_json({"url": database.shown, **done.to_json(), "memory_block": block})
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
    for name, agent in done.merged.items():
        lines.append(f"  {name}: {agent.new} entries merged into the {agent.others} already there")
    for table, key, why in done.refused:
        lines.append(f"  left out: {table} {key}: {why}")
    if done.verified:
        lines.append(f"Checked: every other row of {', '.join(sorted(done.verified))} is there.")
    if not args.memory:
        lines.append("MEMORY.md files were left where they are (--no-memory).")
    lines.append(f"The agents' memory block there: {BLOCKS[block]}.")
    if done.refused:
        lines.append(
            f"Moved, except the {counted(len(done.refused), 'row')} left out above: fix them "
            "here and run `oryxtui db migrate` again (nothing is copied twice)."
        )
    show("\n".join(lines) + "\n")
    return EXIT_OK


@DB.command(
    "local",
    "try the shared database on this machine: PostgreSQL with pgvector, no Docker",
    arg(
        "--dir",
        metavar="FOLDER",
        help="its data (default: ~/.local/share/oryxtui/postgres; root: /var/lib/oryxtui/postgres)",
    ),
    arg("--stop", action="store_true", help="stop the server of that folder"),
    json=True,
)
def local(args: argparse.Namespace) -> int:
    from pathlib import Path

    from oryxtui import embedded

    folder = Path(args.dir) if args.dir else embedded.default_folder()
    if args.stop:
        stopped = embedded.stop(folder)
        if args.json:
            print_json({"folder": str(folder), "stopped": stopped})
        elif stopped:
            show(f"Stopped the PostgreSQL in {folder}.\n")
        else:
            show(f"No PostgreSQL runs in {folder}.\n")
        return EXIT_OK
    server = embedded.start(folder)
    if args.json:
        print_json(
            {
                "folder": str(server.folder),
                "url": server.url,
                "schema": server.schema[1],
                "environment": {
                    "ORYXTUI_DATABASE_URL": server.url,
                    "ORYXTUI_MEMORY__BACKEND": "database",
                },
            }
        )
        return EXIT_OK
    show(
        f"PostgreSQL 16 with pgvector runs in {server.folder}, with oryxtui's tables (schema "
        f"{server.schema[1]}); it keeps running — `oryxtui db local --stop` stops it.\n"
        "Point every oryxtui at it, its memory too (each workspace: `oryxtui db migrate` "
        "moves what it has in):\n\n"
        f"  export ORYXTUI_DATABASE_URL='{server.url}'\n"
        "  export ORYXTUI_MEMORY__BACKEND=database\n"
    )
    return EXIT_OK


def _plan_text(where: str, planned: Plan, block: str) -> str:
    """`db migrate --dry-run`: what would be copied, merged and left out."""
    lines = [f"Into {where} (a dry run: nothing written):"]
    for name, agent in planned.agents.items():
        line = f"  {name}: {agent.new} entries to copy"
        if agent.there:
            line += f", {agent.there} there already"
        if agent.others:
            line += f" — merged into the {agent.others} already there (needs --merge)"
        lines.append(line)
    sessions = planned.sessions
    lines.append(f"  sessions: {sessions['new']} to copy, {sessions['there']} there already")
    for key in planned.conflicts:
        lines.append(f"  session {key}: held there with other messages; would be left as it is")
    for table, count in planned.rows.items():
        lines.append(f"  {table}: {counted(count, 'row')} (each copied once)")
    for table, key, why in planned.refused:
        lines.append(f"  would leave out: {table} {key}: {why}")
    lines.append(f"The agents' memory block there: {BLOCKS[block]}.")
    return "\n".join(lines) + "\n"
