"""Security round 3 (issue 32) against real `oryxtui serve` processes: revoking keys on a
shared database closes every server and ends every stream of the key at once; a body that never
comes and a crowd of idle connections cannot hold a server; a database role that can only
connect cannot make servers tell forged events."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import psycopg
import pytest

from oryxtui.workspace import init_workspace
from tests.api_server import EventReader
from tests.backends import on_database
from tests.serve_process import ServeProcess
from tests.support import cli, make_agent

pytestmark = [pytest.mark.system, pytest.mark.xdist_group("system")]
WIDE = ("--host", "0.0.0.0", "--allow-host", "127.0.0.1")


def keys(env: dict[str, str], root: Path, *args: str) -> str:
    with mock.patch.dict("os.environ", env):
        done = cli("keys", *args, "--root", str(root))
    assert done.code == 0, done.stderr
    return done.stdout.strip() + "\n" + done.stderr


def test_revoking_every_key_closes_every_server_on_the_database(
    tmp_path: Path, database_url: str
) -> None:
    env = on_database(database_url)
    here, there = init_workspace(tmp_path / "here"), init_workspace(tmp_path / "there")
    for workspace in (here, there):
        make_agent(workspace, "ops")
    key = keys(env, here.root, "create", "only", "--scope", "admin").splitlines()[0]
    with (
        ServeProcess(here.root, *WIDE, env=env) as a,
        ServeProcess(there.root, *WIDE, env=env) as b,
    ):
        auth = {"Authorization": f"Bearer {key}"}
        for server in (a, b):
            assert server.client(**auth).get("/api/v1/agents").status_code == 200
            assert server.client().get("/api/v1/agents").status_code == 401
        with EventReader(b.url, auth) as stream:
            assert stream.next()[1]["kind"] == "hello"
            said = keys(env, here.root, "revoke", "only")
            assert "last live key" in said
            started = time.monotonic()
            with pytest.raises(AssertionError, match="ended"):
                for _ in range(100):
                    stream.next()  # ended by host a's revocation, on host b
            assert time.monotonic() - started < 10
        for server in (a, b):
            for credentials in ({}, auth):
                answer = server.client(**credentials).post(
                    "/api/v1/agents/ops/memory", json={"content": "let in?"}
                )
                assert answer.status_code == 401, answer.text
            refused = server.client().get("/api/v1/agents").json()["message"]
            assert "none is live" in refused


def raw_connection(port: int) -> socket.socket:
    connection = socket.create_connection(("127.0.0.1", port), timeout=10)
    connection.sendall(
        b"POST /api/v1/agents/ops/memory HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/json\r\nContent-Length: 20\r\n\r\n"
    )
    return connection


def test_bodies_that_never_come_and_idle_crowds_cannot_hold_the_server(tmp_path: Path) -> None:
    workspace = init_workspace(tmp_path / "w")
    make_agent(workspace, "ops")
    env = {
        "ORYXTUI_API__BODY_TIMEOUT_SECONDS": "4",
        "ORYXTUI_API__CONNECTIONS_PER_CLIENT": "8",
    }
    with ServeProcess(workspace.root, env=env) as server:
        opened = [raw_connection(server.port) for _ in range(11)]
        started = time.monotonic()
        answers = []
        for connection in opened:
            answer = b""
            with contextlib.suppress(ConnectionResetError):
                while chunk := connection.recv(4096):  # the answer, then the connection closed
                    answer += chunk
            connection.close()
            answers.append((answer.split(b"\r\n")[0], time.monotonic() - started, answer))
        refused = [a for a in answers if b" 429 " in a[0]]
        timed_out = [a for a in answers if b" 408 " in a[0]]
        assert len(refused) + len(timed_out) == 11, answers
        assert 3 <= len(refused) <= 5 and all(b"connections open" in a[2] for a in refused)
        assert all(b"did not arrive" in a[2] for a in timed_out)
        assert max(a[1] for a in timed_out) < 15  # each cut off after its 4 s
        deadline = time.monotonic() + 10
        while True:  # the places are given back as the server sees the connections go
            answer = server.client().get("/api/v1/agents")
            if answer.status_code == 200:
                break
            assert time.monotonic() < deadline, answer.text
            time.sleep(0.05)


def test_forged_announcements_are_only_hints(tmp_path: Path, database_url: str) -> None:
    with _watched_by_a_spoofer(tmp_path, database_url) as (server, events, spoof_url):
        stop = threading.Event()

        def flood() -> None:
            with psycopg.connect(spoof_url, autocommit=True) as spoof:
                n = 0
                while not stop.is_set() and n < 3000:
                    for kind in ("session", "memory", "index", "keys"):
                        payload = json.dumps({"kind": kind, "agent": "ops", "session": "x:y:ops"})
                        spoof.execute("SELECT pg_notify('oryxtui', %s)", (payload,))
                    n += 1

        thread = threading.Thread(target=flood)
        thread.start()
        try:
            started = time.monotonic()
            saved = server.client().post("/api/v1/agents/ops/memory", json={"content": "real"})
            assert saved.status_code == 200
            assert time.monotonic() - started < 5  # the flood does not starve the server
            seen = events.until(lambda d: d.get("change", {}).get("op") == "save")
        finally:
            stop.set()
            thread.join()
        told = [data["kind"] for _, data in seen]
        assert "session" not in told and "index" not in told, told
        changes = [data["change"] for _, data in seen if "change" in data]
        assert [change["op"] for change in changes] == ["save"], seen


def test_a_forged_announcement_of_an_agent_the_database_does_not_hold_tells_nothing(
    tmp_path: Path, database_url: str
) -> None:
    """Round 4, item 4: a notification is only a hint — 300 announcements of agents that do
    not exist (more than the hints a server follows one by one) make no event and write no
    row; what reaches the stream is what the database holds."""
    with _watched_by_a_spoofer(tmp_path, database_url) as (server, events, spoof_url):
        with psycopg.connect(spoof_url, autocommit=True) as spoof:
            for n in range(300):
                for kind in ("memory", "index", "session"):
                    payload = json.dumps({"kind": kind, "agent": f"ghost-{n}", "session": "a:b:c"})
                    spoof.execute("SELECT pg_notify('oryxtui', %s)", (payload,))
            spoof.execute(
                "SELECT pg_notify('oryxtui', %s)", (json.dumps({"kind": "memory", "agent": "ops"}),)
            )
        saved = server.client().post("/api/v1/agents/ops/memory", json={"content": "real"})
        assert saved.status_code == 200
        seen = events.until(lambda d: d.get("change", {}).get("op") == "save", deadline_s=30)
    told = [data for _, data in seen]
    assert not [d for d in told if "ghost" in json.dumps(d)], told
    assert [d["kind"] for d in told] == ["memory"], told  # the save, and nothing else
    with psycopg.connect(database_url) as db:
        ghosts = db.execute(
            "SELECT count(*) FROM oryxtui_memory_history WHERE agent_name LIKE 'ghost-%'"
        ).fetchone()
    assert ghosts == (0,)  # a look at an agent that has nothing never starts its history


@contextlib.contextmanager
def _watched_by_a_spoofer(
    tmp_path: Path, database_url: str
) -> Iterator[tuple[ServeProcess, EventReader, str]]:
    """A server on the database with agent ops, a reader of its event stream (past its
    hello), and the url of a role that may only connect and notify."""
    workspace = init_workspace(tmp_path / "w")
    make_agent(workspace, "ops")
    spoof_url = _spoof_role(database_url)
    env = on_database(database_url)
    with ServeProcess(workspace.root, env=env) as server, EventReader(server.url) as events:
        assert events.next()[1]["kind"] == "hello"
        yield server, events, spoof_url


def _spoof_role(database_url: str) -> str:
    """The url of a new role that may only connect (and so send notifications)."""
    role = f"spoof_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(database_url, autocommit=True) as admin:
        admin.execute(f"CREATE ROLE {role} LOGIN")
        name = database_url.split("?")[0].rsplit("/", 1)[1]
        admin.execute(f"GRANT CONNECT ON DATABASE {name} TO {role}")
    return database_url.replace("postgres@", f"{role}@", 1)
