"""The dashboard attached to real `serve` processes: a server killed and restarted is marked,
the others keep working, and it is caught up on with nothing missed; two servers on one shared
database both stream every change."""

from __future__ import annotations

from pathlib import Path

import pytest

from oryxtui.remote.client import Server
from oryxtui.remote.fleet import RECONNECTING, Fleet
from oryxtui.tui.app import OryxApp
from oryxtui.workspace import Workspace, init_workspace
from tests.api_server import EventReader
from tests.backends import on_database
from tests.dashboard_support import agent_list, wait_for
from tests.serve_process import ServeProcess
from tests.support import cli, make_agent, oryxtui_executable, oryxtui_process
from tests.tmux import Terminal

pytestmark = [pytest.mark.system, pytest.mark.xdist_group("system")]


def attach(servers: dict[str, str]) -> OryxApp:
    fleet = Fleet([Server(url, name=name) for name, url in servers.items()])
    return OryxApp.attached(fleet, user="tester")


def save(workspace: Workspace, agent: str, text: str, env: dict | None = None) -> None:
    args = ["memory", "save", text, "--agent", agent, "--root", str(workspace.root)]
    done = oryxtui_process(*args, env=env) if env else None
    if done is not None:
        assert done.returncode == 0, done.stderr
    else:
        assert cli(*args).code == 0


def number(event_id: str | None) -> int:
    assert event_id is not None
    return int(event_id.rpartition(".")[2])


async def test_a_killed_server_is_marked_and_caught_up_on_after_restart(tmp_path: Path) -> None:
    one, two = init_workspace(tmp_path / "one"), init_workspace(tmp_path / "two")
    make_agent(one, "ops")
    make_agent(two, "atlas")
    with ServeProcess(one.root) as first, ServeProcess(two.root) as second:
        app = attach({"one": first.url, "two": second.url})
        async with app.run_test(size=(140, 40)) as pilot:
            agents = agent_list(app)
            await wait_for(pilot, lambda: "atlas@two" in agents.order)
            await wait_for(pilot, lambda: agents.summaries["atlas@two"].archival_count == 0)

            second.crash()
            await wait_for(pilot, lambda: agents.servers.get("two") == RECONNECTING)
            save(one, "ops", "the first server keeps working")  # the other goes on
            await wait_for(pilot, lambda: agents.summaries["ops@one"].archival_count == 1)
            for n in range(3):  # written while its server is down
                save(two, "atlas", f"written while down {n}")

            with ServeProcess(two.root, port=second.port):
                await wait_for(pilot, lambda: agents.servers.get("two") is None)
                await wait_for(pilot, lambda: agents.summaries["atlas@two"].archival_count == 3)
                save(two, "atlas", "after the restart")
                await wait_for(pilot, lambda: agents.summaries["atlas@two"].archival_count == 4)


def test_event_ids_resume_without_a_gap_and_a_restart_is_a_reset(tmp_path: Path) -> None:
    workspace = init_workspace(tmp_path / "w")
    make_agent(workspace, "ops")
    with ServeProcess(workspace.root) as server:
        with EventReader(server.url) as events:
            events.next()
            save(workspace, "ops", "one")
            last_id, _ = events.until(lambda d: d["kind"] == "memory")[-1]
        for n in range(5):
            save(workspace, "ops", f"away {n}")
        with EventReader(server.url, {"Last-Event-ID": str(last_id)}) as events:
            missed = [events.next() for _ in range(5)]
        assert [number(i) for i, _ in missed] == [number(last_id) + k for k in range(1, 6)]
        assert [d["change"]["op"] for _, d in missed] == ["save"] * 5
        port = server.port
    with (
        ServeProcess(workspace.root, port=port) as again,
        EventReader(again.url, {"Last-Event-ID": str(missed[-1][0])}) as events,
    ):
        _, data = events.next()
        assert data["kind"] == "reset"  # another run: read everything again


async def test_two_servers_on_one_shared_database_both_stream_every_change(
    tmp_path: Path, database_url: str
) -> None:
    env = on_database(database_url)
    here, there = init_workspace(tmp_path / "here"), init_workspace(tmp_path / "there")
    for workspace in (here, there):
        make_agent(workspace, "shared")
    with ServeProcess(here.root, env=env) as a, ServeProcess(there.root, env=env) as b:
        with EventReader(b.url) as events:
            events.next()
            saved = a.client().post("/api/v1/agents/shared/memory", json={"content": "via a"})
            assert saved.status_code == 200, saved.text
            seen = events.until(lambda d: d.get("agent") == "shared" and "change" in d)
            assert seen[-1][1]["change"]["actor"] == "api", seen
        app = attach({"b": b.url})
        async with app.run_test(size=(140, 40)) as pilot:
            agents = agent_list(app)
            await wait_for(pilot, lambda: "shared@b" in agents.order)
            await wait_for(pilot, lambda: agents.summaries["shared@b"].archival_count == 1)
            save(here, "shared", "from another host", env=env)
            await wait_for(pilot, lambda: agents.summaries["shared@b"].archival_count == 2)


def test_attach_in_a_terminal_shows_each_server_and_follows_it(
    tmp_path: Path, terminal: Terminal
) -> None:
    """The real `oryxtui attach` in tmux: servers by name from the user's [remotes], keys from
    the variables named there; a save on a server appears on screen."""
    one = init_workspace(tmp_path / "one")
    (make_agent(one, "ops") / "MEMORY.md").write_text(
        "## 核心记忆\n## 归档记忆\n- [2026-07-21 09:00:00] first note of ops\n"
    )
    key = cli("keys", "create", "viewer", "--scope", "read", "--root", str(one.root))
    config = tmp_path / "xdg" / "oryxtui" / "config.toml"
    config.parent.mkdir(parents=True)
    with ServeProcess(one.root) as server:
        config.write_text(f'[remotes.prod]\nurl = "{server.url}"\nkey_env = "PROD_KEY"\n')
        terminal.start(
            f"env XDG_CONFIG_HOME={tmp_path / 'xdg'} PROD_KEY={key.stdout.strip()} "
            f"{oryxtui_executable()} attach prod",
            width=140,
        )
        terminal.wait(lambda: "first note of ops" in terminal.screen(), "the entries")
        screen = terminal.screen()
        assert "▾ prod" in screen and "ops" in screen
        save(one, "ops", "typed on the server's host")
        terminal.wait(lambda: "typed on the server's host" in terminal.screen(), "the new entry")
        terminal.keys("q")
        terminal.wait(lambda: not terminal.alive(), "quit")


async def test_a_server_whose_database_is_down_is_marked_and_says_so_plainly(
    tmp_path: Path,
) -> None:
    """The server's shared database dies: the attached dashboard marks that server at once
    (not only when a save fails), a save through it is one plain sentence with no advice
    meant for the server's operator, and when the database is back the mark goes."""
    from oryxtui.config import DatabaseSettings
    from oryxtui.postgres import Postgres
    from oryxtui.remote.fleet import STORE_DOWN
    from tests.postgres_server import PostgresServer

    database = PostgresServer()
    try:
        url = database.database()
        setup = Postgres(DatabaseSettings(url=url))
        setup.upgrade()
        setup.close()
        env = on_database(url)
        here = init_workspace(tmp_path / "here")
        make_agent(here, "ops")
        save(here, "ops", "before the outage", env=env)
        with ServeProcess(here.root, env=env) as served:
            app = attach({"prod": served.url})
            async with app.run_test(size=(140, 40)) as pilot:
                agents = agent_list(app)
                await wait_for(pilot, lambda: "ops@prod" in agents.order)
                database.kill()
                await wait_for(pilot, lambda: agents.servers.get("prod") == STORE_DOWN)
                with served.client() as client:
                    refused = client.post("/api/v1/agents/ops/memory", json={"content": "x"})
                assert refused.status_code == 503, refused.text
                message = refused.json()["message"]
                assert "unavailable just now" in message and "database.url" not in message
                database.restart()
                await wait_for(pilot, lambda: agents.servers.get("prod") is None, timeout=60)
    finally:
        database.stop()


async def test_two_servers_on_one_database_are_shown_as_one_memory(
    tmp_path: Path, database_url: str
) -> None:
    """`attach a b` where a and b serve one shared database: its agents are listed once (under
    a, headed "a = b"), and a change made through b shows there, once."""
    env = on_database(database_url)
    here, there = init_workspace(tmp_path / "here"), init_workspace(tmp_path / "there")
    for workspace in (here, there):
        make_agent(workspace, "shared")
    save(here, "shared", "before attaching", env=env)
    elsewhere = init_workspace(tmp_path / "elsewhere")
    make_agent(elsewhere, "solo")
    with (
        ServeProcess(here.root, env=env) as a,
        ServeProcess(there.root, env=env) as b,
        ServeProcess(elsewhere.root) as c,
    ):
        app = attach({"a": a.url, "b": b.url, "c": c.url})
        async with app.run_test(size=(140, 40)) as pilot:
            agents = agent_list(app)
            await wait_for(pilot, lambda: "shared@a" in agents.order and "solo@c" in agents.order)
            assert not [name for name in agents.order if str(name).endswith("@b")]
            assert agents.also == {"a": ["b"]}
            await wait_for(pilot, lambda: agents.summaries["shared@a"].archival_count == 1)
            with b.client() as client:
                saved = client.post("/api/v1/agents/shared/memory", json={"content": "via b"})
            assert saved.status_code == 200, saved.text
            await wait_for(pilot, lambda: agents.summaries["shared@a"].archival_count == 2)
