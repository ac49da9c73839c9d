"""`[database] url` and `oryxtui db`: the settings and their secrets, the schema, moving a
workspace in, and a database that cannot be reached — against a real PostgreSQL."""

from __future__ import annotations

import json
import re
import socket
import sqlite3
from pathlib import Path

import psycopg
import pytest

from oryxtui.config import Settings, load_settings
from oryxtui.conninfo import masked
from oryxtui.errors import ConfigError
from oryxtui.memory.format import Scope
from oryxtui.memory.migration import migrate
from oryxtui.memory.service import MemoryService
from oryxtui.postgres import SCHEMA_VERSION, Postgres
from oryxtui.workspace import Workspace, find_workspace
from tests.backends import on_database
from tests.support import fixed_clock, make_agent, run_oryxtui


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_password_never_sits_in_the_config_file(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[database]\nurl = "postgresql://oryx:hunter2@db.example/oryx"\n')
    with pytest.raises(ConfigError) as refused:
        load_settings(config, {})
    assert "hunter2" not in str(refused.value) and "password_env" in str(refused.value)
    # From the environment it may (a deployment's secret store sets it there).
    url = "postgresql://oryx:hunter2@db.example/oryx"
    settings = load_settings(config, {"ORYXTUI_DATABASE_URL": url})
    assert settings.database.url == url
    assert masked(url) == "postgresql://oryx:***@db.example/oryx"
    config.write_text('[database]\nurl = "mysql://db.example/oryx"\n')
    with pytest.raises(ConfigError, match="PostgreSQL url"):
        load_settings(config, {})


def test_an_unreachable_database_is_one_sentence_and_no_secret(workspace: Workspace) -> None:
    make_agent(workspace, "ops")
    url = f"postgresql://oryx:s3cret-pw@127.0.0.1:{closed_port()}/oryx"
    done = run_oryxtui("memory", "save", "--root", str(workspace.root), "x", env=on_database(url))
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "cannot be reached" in done.stderr
    assert "s3cret-pw" not in done.stderr and "oryx:***@127.0.0.1" in done.stderr
    assert "Traceback" not in done.stderr
    shown = run_oryxtui("db", "status", "--root", str(workspace.root), env=on_database(url))
    assert shown.returncode == 1 and "s3cret-pw" not in shown.stderr


def test_a_missing_schema_names_the_command_and_upgrade_is_idempotent(
    workspace: Workspace, postgres_server: object
) -> None:
    from tests.postgres_server import PostgresServer

    assert isinstance(postgres_server, PostgresServer)
    url = postgres_server.database()  # empty: no schema yet
    root = ("--root", str(workspace.root))
    refused = run_oryxtui("memory", "show", *root, env=on_database(url))
    assert refused.returncode == 1 and "run `oryxtui db upgrade --root " in refused.stderr
    before = run_oryxtui("db", "status", *root, env=on_database(url))
    assert "pgvector available, not enabled (db upgrade enables it)" in before.stdout
    assert "memory block: as from MEMORY.md files" in before.stdout
    first = run_oryxtui("db", "upgrade", *root, "--json", env=on_database(url))
    upgraded = json.loads(first.stdout)
    assert upgraded["from"] == 0 and upgraded["to"] == SCHEMA_VERSION
    again = run_oryxtui("db", "upgrade", *root, "--json", env=on_database(url))
    assert json.loads(again.stdout) == {"url": url, "from": SCHEMA_VERSION, "to": SCHEMA_VERSION}
    status = json.loads(run_oryxtui("db", "status", *root, "--json", env=on_database(url)).stdout)
    assert status["schema_version"] == SCHEMA_VERSION and status["pgvector"]
    assert status["memory_block"] == "markdown"
    assert status["tables"]["memory_entries"] == 0
    assert run_oryxtui("memory", "show", *root, env=on_database(url)).returncode == 0


def test_migrate_copies_everything_once_and_reads_back_equal(
    tmp_path: Path, database_url: str
) -> None:
    assert run_oryxtui("demo", str(tmp_path / "demo"), "--no-open").returncode == 0
    demo_workspace = find_workspace(str(tmp_path / "demo"))
    root = ("--root", str(demo_workspace.root))
    before = {
        agent: json.loads(run_oryxtui("memory", "show", *root, *agent_args(agent), "--json").stdout)
        for agent in demo_workspace.memories()
    }
    prompts = {agent: prompt_of(root, agent) for agent in demo_workspace.memories()}
    first = run_oryxtui("db", "migrate", *root, "--to", database_url, "--memory", "--json")
    assert first.returncode == 0, first.stderr
    copied = json.loads(first.stdout)["copied"]
    assert json.loads(first.stdout)["verified"]["sessions"] == copied["sessions"]
    entries = sum(len(s["core"]) + len(s["archival"]) for s in before.values())
    assert copied["MEMORY.md"] == entries > 0 and copied["sessions"] > 0
    second = json.loads(
        run_oryxtui("db", "migrate", *root, "--to", database_url, "--memory", "--json").stdout
    )
    assert sum(second["copied"].values()) == 0
    assert second["already_there"]["MEMORY.md"] == entries
    for agent, shown in before.items():
        after = json.loads(
            run_oryxtui(
                "memory", "show", *root, *agent_args(agent), "--json", env=on_database(database_url)
            ).stdout
        )
        for scope in ("core", "archival"):
            was = [(e["time"], e["content"]) for e in shown[scope]]
            now = [(e["time"], e["content"]) for e in after[scope]]
            assert now == was, (agent, scope)
        # The agent's prompt does not change because its memory moved.
        assert prompt_of(root, agent, on_database(database_url)) == prompts[agent], agent


def prompt_of(root: tuple[str, ...], agent: str | None, env: dict | None = None) -> list:
    """The agent's prompt, block by block (the time line stated as the minute it says)."""
    shown = run_oryxtui("prompt", *root, *agent_args(agent), "--json", env=env)
    assert shown.returncode == 0, shown.stderr
    blocks = json.loads(shown.stdout)["blocks"]
    return [{**b, "text": "当前日期时间：…"} if b["name"] == "time" else b for b in blocks]


def agent_args(agent: str | None) -> tuple[str, ...]:
    return ("--agent", agent) if agent else ()


def test_many_hosts_one_memory_and_one_history(tmp_path: Path, database_url: str) -> None:
    """Two workspaces (two hosts) on one database: each sees the other's saves, every change
    is in the one history, and an edit of an entry the other host changed is refused."""
    from oryxtui.config import DatabaseSettings, Settings
    from oryxtui.errors import StaleEntry
    from oryxtui.workspace import init_workspace

    settings = Settings(database=DatabaseSettings(url=database_url))
    settings.memory.backend = "database"
    hosts = [init_workspace(tmp_path / name) for name in ("east", "west")]
    east, west = (MemoryService.open(h, settings, clock=fixed_clock) for h in hosts)
    east.save("ops", "from the east", "archival")
    west.save("ops", "from the west", "core")
    assert [e.content for e in west.snapshot("ops").archival] == ["from the east"]
    entry = east.snapshot("ops").archival[0]
    west.edit("ops", entry.id, "from the east, corrected by the west")
    with pytest.raises(StaleEntry):
        east.edit("ops", entry.id, "a stale edit")
    log = east.history("ops")
    assert [r.op for r in log] == ["edit", "save", "save"]
    assert west.history("ops") == log
    snapshot = east.snapshot("ops")
    assert [(e.scope, e.content) for e in [*snapshot.core, *snapshot.archival]] == [
        (Scope.CORE, "from the west"),
        (Scope.ARCHIVAL, "from the east, corrected by the west"),
    ]


def test_the_library_migrates_memory_files_of_timeless_lines_once(
    workspace: Workspace, database_url: str
) -> None:
    from oryxtui.config import DatabaseSettings

    memory_file = make_agent(workspace, "ops") / "MEMORY.md"
    memory_file.write_text(
        "## 核心记忆\n- typed by hand\n## 归档记忆\n- [2026-07-01 09:00:00] dated\n"
        "- [2026-07-01 09:30] to the minute\n"
    )
    database = Postgres(DatabaseSettings(url=database_url))
    first = migrate(workspace, database, memory_files=True)
    again = migrate(workspace, database, memory_files=True)
    assert first.copied["MEMORY.md"] == 3 and again.copied["MEMORY.md"] == 0
    with psycopg.connect(database_url) as connection:
        ((when,),) = connection.execute(
            "SELECT created_at FROM memory_entries WHERE content = 'to the minute'"
        ).fetchall()
    assert when.astimezone().strftime("%Y-%m-%d %H:%M:%S") == "2026-07-01 09:30:00"
    database.close()


def test_agents_of_other_hosts_are_listed_and_reachable(tmp_path: Path, database_url: str) -> None:
    from oryxtui.workspace import init_workspace

    east, west = (init_workspace(tmp_path / name) for name in ("east", "west"))
    make_agent(east, "builder")
    env = on_database(database_url)
    saved = run_oryxtui(
        "memory", "save", "--root", str(east.root), "--agent", "builder", "ships at noon", env=env
    )
    assert saved.returncode == 0, saved.stderr
    listed = json.loads(
        run_oryxtui("agents", "list", "--root", str(west.root), "--json", env=env).stdout
    )
    (builder,) = listed["agents"]
    assert (builder["name"], builder["archival"], builder["has_agent_md"]) == ("builder", 1, False)
    shown = run_oryxtui("memory", "show", "--root", str(west.root), "--agent", "builder", env=env)
    assert shown.returncode == 0 and "ships at noon" in shown.stdout
    preview = run_oryxtui("prompt", "--root", str(west.root), "--agent", "builder", env=env)
    assert preview.returncode == 0 and "ships at noon" in preview.stdout
    assert "has no AGENT.md here" in preview.stderr  # what the prompt lacks on this host
    typo = run_oryxtui("memory", "show", "--root", str(west.root), "--agent", "bilder", env=env)
    assert typo.returncode == 2  # still refused, naming nothing new


def test_two_hosts_consolidating_at_once_write_one_digest(
    tmp_path: Path, database_url: str
) -> None:
    import threading

    from oryxtui.config import DatabaseSettings, Settings
    from oryxtui.workspace import init_workspace

    settings = Settings(database=DatabaseSettings(url=database_url))
    settings.memory.backend = "database"
    hosts = [init_workspace(tmp_path / name) for name in ("east", "west")]
    services = [MemoryService.open(h, settings) for h in hosts]
    for i in range(150):
        services[0].save("ops", f"deploy note {i}: the canary went to 10% then 100%", "archival")
    start = threading.Barrier(2)
    written = []

    def consolidate(service: MemoryService) -> None:
        start.wait()
        written.append(service.consolidate("ops"))

    threads = [threading.Thread(target=consolidate, args=(s,)) for s in services]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert sum(digest is not None for digest in written) == 1
    assert [r.op for r in services[1].history("ops")].count("digest") == 1
    assert services[1].uncovered("ops") == 0


def test_conversations_are_shared_too(tmp_path: Path, database_url: str) -> None:
    """A turn on one host: its session, its tool audit and its episodes are in the database,
    listed and searched from another host; the memory its tool saved is there as well."""
    from oryxtui.workspace import init_workspace

    east, west = (init_workspace(tmp_path / name) for name in ("east", "west"))
    make_agent(east, "ops")
    env = on_database(database_url)
    east_root, west_root = ("--root", str(east.root)), ("--root", str(west.root))
    said = run_oryxtui(
        "chat", *east_root, "--agent", "ops", "remember that the freeze starts Friday", env=env
    )
    assert said.returncode == 0, said.stderr
    listed = json.loads(
        run_oryxtui("sessions", "list", *west_root, "--agent", "ops", "--json", env=env).stdout
    )
    (session,) = listed["sessions"] if isinstance(listed, dict) else listed
    assert session["turns"] == 1 and session["session"].startswith("cli:")
    found = run_oryxtui(
        "sessions", "search", *west_root, "--agent", "ops", "freeze", "--json", env=env
    )
    assert found.returncode == 0 and "freeze starts Friday" in found.stdout
    with psycopg.connect(database_url) as connection:
        ((tools,),) = connection.execute("SELECT count(*) FROM tool_invocations").fetchall()
        ((stamp,),) = connection.execute("SELECT last_active_at FROM sessions").fetchall()
    assert tools >= 1 and stamp.tzinfo is not None  # upstream's TIMESTAMPTZ, an instant
    shown = run_oryxtui("memory", "show", *west_root, "--agent", "ops", env=env)
    assert "freeze starts Friday" in shown.stdout
    assert not (east.root / "oryxos.db").exists() or _local_sessions(east) == 0


def _local_sessions(workspace: Workspace) -> int:
    import sqlite3

    with sqlite3.connect(workspace.db_path) as db:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "sessions" not in tables:
            return 0
        return int(db.execute("SELECT count(*) FROM sessions").fetchone()[0])


def test_every_kind_of_change_is_announced(tmp_path: Path, database_url: str) -> None:
    """What LISTEN hears from another host: a save, an index write, a session's turn — each
    naming the agent (never rows), and a fresh start first (read everything)."""
    import threading
    import time

    from oryxtui.agent.loop import AgentLoop
    from oryxtui.agent.sessions import SessionStore, conversations
    from oryxtui.config import Settings
    from oryxtui.memory.events import IndexProgress, MemoryChange, Reset, SessionMoved
    from oryxtui.memory.store import Listened
    from oryxtui.workspace import init_workspace

    settings = Settings.model_validate(
        {
            "memory": {"backend": "database"},
            "database": {"url": database_url},
            "embedding": {"provider": "mock"},
        }
    )
    here = MemoryService.open(init_workspace(tmp_path / "here"), settings)
    assert isinstance(here.store, Listened)
    heard: list[object] = []
    stop = threading.Event()
    listening = threading.Thread(
        target=here.store.listen, args=(stop, heard.append, heard.append), daemon=True
    )
    listening.start()
    try:
        deadline = time.monotonic() + 30
        while Reset() not in heard:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        elsewhere = init_workspace(tmp_path / "elsewhere")
        make_agent(elsewhere, "ops")
        there = MemoryService.open(elsewhere, settings)
        there.save("ops", "deploys on tuesdays", "archival")
        there.sync_index("ops")
        there.save(None, "a global note", "core")
        loop = AgentLoop(
            elsewhere, settings, there, SessionStore(conversations(elsewhere, settings))
        )
        list(loop.run("ops", "hello", "cli", "mei"))
        wanted = {
            MemoryChange("ops"),
            IndexProgress("ops"),
            SessionMoved("ops"),
            MemoryChange(None),
        }
        while not wanted <= set(heard):
            assert time.monotonic() < deadline, heard
            time.sleep(0.01)
        # A replacement is told too: this host reads the fact that changed, and its history.
        told = len(heard)
        old = next(e for e in there.snapshot("ops").archival if e.content == "deploys on tuesdays")
        there.replace("ops", old.id, "deploys on thursdays")
        while MemoryChange("ops") not in heard[told:]:
            assert time.monotonic() < deadline, heard
            time.sleep(0.01)
        assert "deploys on thursdays" in here.build_context("ops")
        assert [v.entry for v in here.replaced_versions("ops")] == [old]
    finally:
        stop.set()
        listening.join(timeout=10)


def test_past_conversations_are_searched_by_meaning_in_the_database(
    workspace: Workspace, database_url: str
) -> None:
    from oryxtui.agent.episodes import episode_store
    from oryxtui.agent.loop import AgentLoop
    from oryxtui.agent.sessions import SessionStore, conversations
    from oryxtui.config import Settings
    from tests.llm_server import ScriptedLLM

    make_agent(workspace, "ops")
    shared = {"memory": {"backend": "database"}, "database": {"url": database_url}}
    plain = Settings.model_validate(shared)
    memory = MemoryService.open(workspace, plain)
    loop = AgentLoop(workspace, plain, memory, SessionStore(conversations(workspace, plain)))
    list(loop.run("ops", "we finished the rollout of ledger v2 at noon", "cli", "mei"))
    list(loop.run("ops", "the coffee machine is broken again", "cli", "mei"))
    with ScriptedLLM([]) as llm:
        embedding = {"provider": "openai", "base_url": llm.base_url, "model": "e"}
        settings = Settings.model_validate({**shared, "embedding": embedding})
        store = episode_store(conversations(workspace, settings), settings)
        found = store.search("ops", "release")  # no such word in any turn
        assert [e.user for e in found] == ["we finished the rollout of ledger v2 at noon"]
        assert len(llm.embeddings) == 2  # the query, then the episodes once
        store.search("ops", "release")
        assert len(llm.embeddings) == 3  # vectors are kept: only the query again
    with psycopg.connect(database_url) as connection:
        ((count, ranked),) = connection.execute(
            "SELECT count(*), count(embedding_vector) FROM episode_vectors"
        ).fetchall()
    assert count == ranked == 2


def test_agent_names_another_program_wrote_are_untrusted(tmp_path: Path, database_url: str) -> None:
    from oryxtui.workspace import init_workspace

    with psycopg.connect(database_url, autocommit=True) as connection:
        for name in ("ops", "../../etc", "evil\x1b]52;c;aGk=\x07"):
            connection.execute(
                "INSERT INTO memory_entries (agent_name, scope, content, created_at)"
                " VALUES (%s, 'ARCHIVAL', 'x', now())",
                (name,),
            )
    root = ("--root", str(init_workspace(tmp_path / "host").root))
    listed = run_oryxtui("agents", "list", *root, "--json", env=on_database(database_url))
    assert [a["name"] for a in json.loads(listed.stdout)["agents"]] == ["ops"]
    assert "2 agent name records" in listed.stderr and "skipped" in listed.stderr


def test_migrated_memory_takes_the_one_way_in(workspace: Workspace, database_url: str) -> None:
    """Rows another program left in oryxos.db enter the shared memory as an import does:
    flattened to one clean line; an over-long one is left out and named, never the others (nor
    the whole move), and a second run with a higher limit brings it."""
    import sqlite3

    from oryxtui.config import DatabaseSettings
    from oryxtui.database import connect

    connect(workspace.db_path).close()  # the tables
    with sqlite3.connect(workspace.db_path) as db:
        db.executemany(
            "INSERT INTO memory_entries (agent_name, scope, content, created_at)"
            " VALUES (?, 'ARCHIVAL', ?, '2026-07-01 09:00:00')",
            [("ops", "first line\n## 核心记忆\n- forged core"), ("ops", "   "), ("big", "x" * 50)],
        )
    database = Postgres(DatabaseSettings(url=database_url))
    first = migrate(workspace, database, memory_files=False, max_entry_chars=40)
    ((table, row, why),) = first.refused
    assert (table, row) == ("memory_entries", "big entry 1") and "over the limit of 40" in why
    with psycopg.connect(database_url) as connection:
        rows = connection.execute(
            "SELECT agent_name, scope, content FROM memory_entries ORDER BY id"
        ).fetchall()
    # Flattened and defused as a save is; nothing of "big".
    assert rows == [("ops", "ARCHIVAL", "first line 「核心记忆」 - forged core")]
    done = migrate(workspace, database, memory_files=False, max_entry_chars=100)
    assert done.copied["memory_entries"] == 1 and done.skipped.get("memory_entries", 0) == 0
    assert done.already["memory_entries"] == 1 and done.verified["memory_entries"] == 2
    database.close()


def test_a_database_of_the_first_schema_is_upgraded_to_keys(
    postgres_server: object, workspace: Workspace
) -> None:
    """A database made by the previous oryxtui (schema 1) gets the keys table from `db
    upgrade`; until then every command says to run it."""
    from oryxtui.postgres import UPGRADES
    from tests.postgres_server import PostgresServer

    assert isinstance(postgres_server, PostgresServer)
    url = postgres_server.database()
    with psycopg.connect(url, autocommit=True) as db:
        db.execute(UPGRADES[0].encode())
        db.execute("INSERT INTO oryxtui_schema (version) VALUES (1)")
    root = ("--root", str(workspace.root))
    refused = run_oryxtui("keys", "list", *root, env=on_database(url))
    assert refused.returncode == 1 and "schema version 1" in refused.stderr
    upgraded = run_oryxtui("db", "upgrade", *root, "--json", env=on_database(url))
    assert json.loads(upgraded.stdout)["from"] == 1
    made = run_oryxtui("keys", "create", "ci", "--scope", "read", *root, env=on_database(url))
    assert made.returncode == 0 and made.stdout.startswith("oryx_")
    with psycopg.connect(url) as db:
        ((hashed,),) = db.execute("SELECT key_hash FROM oryxtui_api_keys").fetchall()
    assert hashed != made.stdout.strip() and len(hashed) == 64


def test_a_row_that_cannot_move_is_left_out_and_named_never_the_whole_move(
    tmp_path: Path, database_url: str
) -> None:
    assert run_oryxtui("demo", str(tmp_path / "demo"), "--no-open").returncode == 0
    workspace = find_workspace(str(tmp_path / "demo"))
    with sqlite3.connect(workspace.db_path) as db:
        (session,) = db.execute("SELECT session_id FROM sessions LIMIT 1").fetchone()
        db.execute(
            "UPDATE sessions SET messages_json = ? WHERE session_id = ?",
            ('[{"role": "user", "content": "nul\x00here"}]', session),
        )
        for text in ("fine", "a\x00b"):
            db.execute(
                "INSERT INTO tool_invocations (session_id, tool_name, input_json, success,"
                " duration_ms, created_at) VALUES (?, 'recall_memory', ?, 1, 3, ?)",
                (session, text, "2026-07-21 09:00:00"),
            )
        (tool,) = db.execute("SELECT max(id) FROM tool_invocations").fetchone()
    root = ("--root", str(workspace.root))
    done = run_oryxtui("db", "migrate", *root, "--to", database_url, "--memory", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    refused = {(r["table"], r["row"]) for r in report["refused"]}
    assert refused == {("sessions", session), ("tool_invocations", f"#{tool}")}
    assert all("NUL" in r["why"] for r in report["refused"])
    assert report["copied"]["sessions"] > 0 and report["copied"]["tool_invocations"] > 0
    assert report["verified"]["sessions"] == report["copied"]["sessions"]
    shown = run_oryxtui("db", "migrate", *root, "--to", database_url)
    assert shown.returncode == 0 and f"left out: sessions {session}" in shown.stdout
    again = json.loads(run_oryxtui("db", "migrate", *root, "--to", database_url, "--json").stdout)
    assert sum(again["copied"].values()) == 0  # nothing twice


def test_serve_names_where_the_memory_lives(workspace: Workspace) -> None:
    from oryxtui.cli.serve import memory_place
    from oryxtui.config import Settings

    shared = Settings.model_validate(
        {"database": {"url": "postgresql://oryx@db.internal:5432/team?password=hush"}}
    )
    assert memory_place(workspace, shared) == "postgresql://oryx:***@db.internal:5432/team (shared)"
    files = memory_place(workspace, Settings())
    assert files == f"MEMORY.md files in {workspace.root}"
    rows = Settings.model_validate({"memory": {"backend": "sqlite"}})
    assert memory_place(workspace, rows) == f"{workspace.db_path} (memory_entries)"


def test_migrate_moves_memory_by_default_plans_merges_and_never_overwrites_a_session(
    tmp_path: Path, database_url: str
) -> None:
    """Memory moves without a flag; into an agent the database holds other memory of, only
    with --merge (said: how many into how many); --dry-run shows that plan and writes nothing;
    a session id the database holds with other messages is a conflict, left as it is there."""
    from oryxtui.workspace import init_workspace

    here = init_workspace(tmp_path / "here")
    make_agent(here, "ops")
    root = ("--root", str(here.root))
    for text in ("deploys are on Tuesday", "the pager rota is in Notion"):
        assert run_oryxtui("memory", "save", *root, "--agent", "ops", text).returncode == 0
    said = run_oryxtui("chat", *root, "--agent", "ops", "hello")
    assert said.returncode == 0, said.stderr
    with sqlite3.connect(here.db_path) as db:
        ((session_id,),) = db.execute("SELECT session_id FROM sessions").fetchall()
    elsewhere = init_workspace(tmp_path / "elsewhere")
    make_agent(elsewhere, "ops")
    env = on_database(database_url)
    theirs = run_oryxtui(
        "memory", "save", "--root", str(elsewhere.root), "--agent", "ops", "theirs", env=env
    )
    assert theirs.returncode == 0
    with psycopg.connect(database_url, autocommit=True) as connection:
        connection.execute(
            "INSERT INTO sessions (session_id, profile_name, channel, user_id, messages_json,"
            " status, created_at) VALUES (%s, 'ops', 'cli', 'bob', '[]', 'ACTIVE', now())",
            (session_id,),
        )

    def counts() -> tuple[int, int]:
        with psycopg.connect(database_url) as connection:
            ((entries,),) = connection.execute("SELECT count(*) FROM memory_entries").fetchall()
            ((tools,),) = connection.execute("SELECT count(*) FROM tool_invocations").fetchall()
        return int(entries), int(tools)

    before = counts()
    planned = run_oryxtui("db", "migrate", *root, "--to", database_url, "--dry-run")
    assert planned.returncode == 0, planned.stderr
    assert "ops: 2 entries to copy — merged into the 1 already there (needs --merge)" in (
        planned.stdout
    )
    assert f"session {session_id}: held there with other messages" in planned.stdout
    assert re.search(r"\b1 row \(each copied once\)", planned.stdout)  # never "1 rows"
    assert counts() == before  # a dry run writes nothing
    refused = run_oryxtui("db", "migrate", *root, "--to", database_url)
    assert refused.returncode == 2 and "add --merge" in refused.stderr
    assert refused.stderr.count("\n") == 1 and counts() == before
    merged = run_oryxtui("db", "migrate", *root, "--to", database_url, "--merge")
    assert merged.returncode == 0, merged.stderr
    assert "ops: 2 entries merged into the 1 already there" in merged.stdout
    assert f"left out: sessions {session_id}: held in the database with other messages" in (
        merged.stdout
    )
    assert "Moved, except the 1 row left out above" in merged.stdout
    with psycopg.connect(database_url) as connection:
        ((messages, user),) = connection.execute(
            "SELECT messages_json, user_id FROM sessions WHERE session_id = %s", (session_id,)
        ).fetchall()
    assert (messages, user) == ("[]", "bob")  # the other's session, untouched
    shown = run_oryxtui("memory", "show", *root, "--agent", "ops", env=env).stdout
    assert "deploys are on Tuesday" in shown and "theirs" in shown
    again = run_oryxtui("db", "migrate", *root, "--to", database_url, "--merge", "--json")
    assert json.loads(again.stdout)["copied"].get("MEMORY.md", 0) == 0  # nothing twice


@pytest.mark.parametrize("backend", ["markdown", "sqlite"])
def test_a_lived_memory_moves_with_its_history_and_reads_the_same(
    tmp_path: Path, database_url: str, backend: str
) -> None:
    """A workspace that has lived — saves by a person and by an agent's turn (one approved,
    one waiting), edits, a move, a delete and its bring-back, an edit made outside oryxtui —
    moved to the database from its files or from oryxos.db: for every agent, what `memory
    show`, `memory log` and `memory review` say (ids, times, order, actors, sessions and
    turns, review state) is the same, and so are its sessions and their recorded prompts."""
    from oryxtui.memory.history import Actor
    from oryxtui.workspace import init_workspace

    here = init_workspace(tmp_path / "lived")
    here.config_path.write_text(f'[memory]\nbackend = "{backend}"\n')
    make_agent(here, "ops")
    root = ("--root", str(here.root))
    settings = Settings.model_validate({"memory": {"backend": backend}})
    person = MemoryService.open(here, settings, fixed_clock)
    agent = MemoryService.open(here, settings, fixed_clock, Actor("agent", "web:u:ops", 3))
    person.save("ops", "deploys are on Tuesday", "core")
    kept = person.save("ops", "the pager rota is in Notion", "archival")
    typo = person.save("ops", "Ravi leeds Falcon", "archival")
    person.edit("ops", typo.id, "Ravi leads Falcon")
    gone = person.save("ops", "staging is pay-stg-hz", "archival")
    person.delete("ops", gone.id)
    (deleted,) = [r for r in person.history("ops") if r.op == "delete"]
    person.bring_back("ops", deleted)
    person.move("ops", kept.id, "core")
    freeze = person.save("ops", "the freeze window is Dec 18 to Jan 3", "archival")
    person.replace("ops", freeze.id, "the freeze window is Dec 20 to Jan 5")  # what is true now
    approved = agent.save("ops", "the user prefers short answers", "archival")
    agent.save("ops", "the user is on call this week", "archival")
    person.approve("ops", [approved.id])
    if backend == "markdown":  # an edit outside oryxtui: by hand, or another program's row
        memory_file = here.memory_file("ops")
        typed = "- [2026-07-22 10:00:00] typed in an editor\n"
        memory_file.write_text(memory_file.read_text() + typed)
    else:
        with sqlite3.connect(here.db_path) as db:
            db.execute(
                "INSERT INTO memory_entries (agent_name, scope, content, created_at)"
                " VALUES ('ops', 'ARCHIVAL', 'written by upstream', '2026-07-22 10:00:00')"
            )
    person.save(None, "the global memory moves too", "archival")
    said = run_oryxtui("chat", *root, "--agent", "ops", "remember that the freeze starts Friday")
    assert said.returncode == 0, said.stderr
    with sqlite3.connect(here.db_path) as db:
        ((session_id,),) = db.execute("SELECT session_id FROM sessions").fetchall()
    past_view = ("memory", "recall", "--agent", "ops", "freeze window", "--include-replaced")
    conversations = [
        ("sessions", "list", "--agent", "ops"),
        ("sessions", "show", session_id),
        ("sessions", "show", session_id, "--turn", "0", "--prompt"),
        ("sessions", "search", "--agent", "ops", "freeze"),
    ]

    def seen(env: dict | None = None) -> dict:
        views = {}
        for name in (None, "ops"):
            who = agent_args(name)
            for command in (("show",), ("log",), ("review",)):
                shown = run_oryxtui("memory", *command, *root, *who, "--json", env=env)
                assert shown.returncode == 0, shown.stderr
                # Where it lives is the one thing that differs.
                views[(name, command)] = re.sub(r'"backend": "\w+"', "", shown.stdout)
        for command in [*conversations, past_view]:
            shown = run_oryxtui(*command, *root, "--json", env=env)
            assert shown.returncode == 0, shown.stderr
            views[command] = shown.stdout
        return views

    before = seen()
    replaced = json.loads(before[past_view])["hits"]
    assert [h["content"] for h in replaced if "replaced" in h] == [freeze.content]
    moved = run_oryxtui("db", "migrate", *root, "--to", database_url, "--json")
    assert moved.returncode == 0, moved.stderr
    assert json.loads(moved.stdout)["history_carried"]["ops"] >= 9
    after = seen(on_database(database_url))
    for key, text in before.items():
        assert after[key] == text, key
    # Life goes on there: the next change follows the last one moved, and nothing is taken
    # for an outside edit.
    was = [json.loads(line) for line in before[("ops", ("log",))].splitlines()]
    env = on_database(database_url)
    assert run_oryxtui("memory", "save", *root, "--agent", "ops", "later", env=env).returncode == 0
    log = run_oryxtui("memory", "log", *root, "--agent", "ops", "--json", env=env).stdout
    now = [json.loads(line) for line in log.splitlines()]
    assert now[1:] == was and now[0]["n"] == was[0]["n"] + 1 and now[0]["op"] == "save"
