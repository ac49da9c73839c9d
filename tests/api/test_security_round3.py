"""Security round 3 (issue 32), in-process: no door opens by revoking, waiting or failing — the
authentication rules fixed at start, secrets never shown, streams counted and ended, the one
reach rule, and what a hostile server or a forged record can make oryxtui do."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from unittest import mock

import pytest

from oryxtui.api.app import create_api
from oryxtui.api.keys import KeyStore
from oryxtui.config import ApiSettings, Settings
from oryxtui.database import Database
from oryxtui.errors import OryxError, ServiceUnavailable, UsageError
from oryxtui.memory.format import ARCHIVAL_HEADER
from oryxtui.remote import client as remote_client
from oryxtui.remote.client import Server
from oryxtui.workspace import Workspace
from tests.api_server import EventReader, RunningApi
from tests.local_http import LocalHttpServer
from tests.support import agents_with_notes, bearer, cli, make_key


@pytest.fixture
def keyed(workspace: Workspace) -> Workspace:
    return agents_with_notes(workspace, "ops", "ops-eu", "atlas", "secret")


def served(workspace: Workspace, bind_host: str = "127.0.0.1", **api: object) -> RunningApi:
    settings = Settings(api=ApiSettings(**api))  # type: ignore[arg-type]
    return RunningApi(workspace, app=create_api(workspace, settings, bind_host=bind_host))


# 1. Revoking the last key never opens the server -------------------------------------------


@pytest.mark.parametrize("bind_host", ["0.0.0.0", "127.0.0.1"])
def test_revoking_the_last_key_closes_the_server_it_never_opens_it(
    keyed: Workspace, bind_host: str
) -> None:
    key = make_key(keyed, "only", "admin")
    with served(keyed, bind_host) as client:
        assert client.get("/api/v1/agents", headers=bearer(key)).status_code == 200
        assert client.get("/api/v1/agents").status_code == 401
        revoked = cli("keys", "revoke", "only", "--root", str(keyed.root))
        assert revoked.code == 0 and "last live key" in revoked.stderr
        for method, path, body in (
            ("GET", "/api/v1/agents/ops/memory", None),
            ("POST", "/api/v1/agents/ops/memory", {"content": "let in?"}),
            ("POST", "/api/v1/agents/ops/memory/digest", {"dry_run": True}),
        ):
            answer = client.request(method, path, json=body)
            assert answer.status_code == 401, (path, answer.text)
            assert "none is live" in answer.json()["message"]
        assert client.get("/api/v1/agents", headers=bearer(key)).status_code == 401
    assert "let in?" not in (keyed.agents_dir / "ops" / "MEMORY.md").read_text()


def test_an_open_loopback_server_closes_when_a_key_is_made_and_stays_closed(
    keyed: Workspace,
) -> None:
    with served(keyed) as client:
        assert client.get("/api/v1/agents").status_code == 200  # open: loopback, no keys
        key = make_key(keyed, "first", "read")
        assert client.get("/api/v1/agents").status_code == 401
        assert client.get("/api/v1/agents", headers=bearer(key)).status_code == 200
        assert cli("keys", "revoke", "first", "--root", str(keyed.root)).code == 0
        assert client.get("/api/v1/agents").status_code == 401


# 2. No secret in any output ------------------------------------------------------------------


def test_a_store_failure_told_to_an_unknown_caller_is_generic_and_logged(
    keyed: Workspace, caplog: pytest.LogCaptureFixture
) -> None:
    make_key(keyed, "k", "read")
    api = create_api(keyed, Settings(), bind_host="0.0.0.0")

    def failing(*_: object) -> None:
        from oryxtui.errors import Unreachable

        raise Unreachable(
            "The database postgresql://oryx:***@db.internal:5432/team cannot be reached."
        )

    with (
        RunningApi(keyed, app=api) as client,
        caplog.at_level("WARNING", "oryxtui.api"),
        mock.patch.object(api.state.oryx.keys, "caller", failing),
    ):
        answer = client.get("/api/v1/agents", headers=bearer("oryx_abcdefgh_zzz"))
    assert answer.status_code == 503
    message = answer.json()["message"]
    assert "memory store is unavailable" in message and "request id" in message
    for detail in ("db.internal", "oryx", "team", "5432", "postgresql"):
        assert detail not in message.replace("oryxtui", "")
    request_id = message.split("request id ")[1].split(";")[0]
    assert any(request_id in r.message and "db.internal" in r.message for r in caplog.records)


def test_a_token_is_never_read_from_the_command_line_and_must_be_long(
    keyed: Workspace, tmp_path: Path
) -> None:
    root = ["--root", str(keyed.root)]
    on_line = cli("serve", *root, "--token", "x" * 40)
    assert on_line.code == 2 and "ps" in on_line.stderr and "x" * 40 not in on_line.stderr
    short = tmp_path / "token"
    short.write_text("ab\n")
    refused = cli("serve", *root, "--token-file", str(short))
    assert refused.code == 2 and "at least 16" in refused.stderr and "ab" not in refused.stderr


def test_failed_authentication_is_limited_per_client(keyed: Workspace) -> None:
    from oryxtui.api.auth import Authenticator

    store = KeyStore(Database(keyed.db_path))
    auth = Authenticator(store, "t" * 32, open_at_start=False, failures_per_minute=5)
    codes = []
    for guess in range(8):
        try:
            auth.identify(f"Bearer guess-{guess}", "10.0.0.9")
            codes.append(200)
        except OryxError as exc:
            codes.append(exc.http_status)
    assert codes == [401] * 5 + [429] * 3
    with pytest.raises(OryxError) as still:
        auth.identify("Bearer " + "t" * 32, "10.0.0.9")  # even the right token, for a while
    assert still.value.http_status == 429
    assert auth.identify("Bearer " + "t" * 32, "10.0.0.10").name is None  # others go on


# 4, 5. Event streams: ended by revocation, counted, cheap to feed ------------------------------


def test_a_revoked_key_loses_its_open_event_stream_at_once(keyed: Workspace) -> None:
    key = make_key(keyed, "watcher", "read")
    with served(keyed, heartbeat_seconds=60) as client:
        with EventReader(client.base_url, bearer(key)) as events:
            assert events.next()[1]["kind"] == "hello"
            started = time.monotonic()
            assert cli("keys", "revoke", "watcher", "--root", str(keyed.root)).code == 0
            with pytest.raises(AssertionError, match="ended"):
                for _ in range(50):
                    events.next()
            assert time.monotonic() - started < 10  # long before the 60 s heartbeat
        again = client.get("/api/v1/events", headers=bearer(key))
        assert again.status_code == 401


def test_event_streams_are_capped_per_key_and_in_all(keyed: Workspace) -> None:
    one, two = make_key(keyed, "one", "read"), make_key(keyed, "two", "read")
    with served(keyed, streams_per_key=2, max_streams=3) as client:
        readers = [EventReader(client.base_url, bearer(one)) for _ in range(2)]
        try:
            third = client.get("/api/v1/events", headers=bearer(one))
            assert third.status_code == 429 and "streams open" in third.json()["message"]
            readers.append(EventReader(client.base_url, bearer(two)))
            over = client.get("/api/v1/events", headers=bearer(two))
            assert over.status_code == 429 and "its limit" in over.json()["message"]
        finally:
            for reader in readers:
                reader.close()
        # Closed streams give their places back (as soon as the server sees them go).
        deadline = time.monotonic() + 10
        while True:
            with client.stream("GET", "/api/v1/events", headers=bearer(one)) as again:
                if again.status_code == 200:
                    break
            assert time.monotonic() < deadline, "a closed stream kept its place"
            time.sleep(0.05)


def test_a_forged_event_id_is_a_reset_never_a_500(keyed: Workspace) -> None:
    with served(keyed) as client:
        stream = client.get("/api/v1/info").json()["data"]["stream"]
        for forged in (f"{stream}.¹", f"{stream}." + "9" * 4300, "../..", f"{stream}.\u0663"):
            with EventReader(client.base_url, since=forged) as events:
                assert events.response.status_code == 200
                assert events.next()[1]["kind"] == "reset"
            if forged.isascii():
                with EventReader(client.base_url, {"Last-Event-ID": forged}) as events:
                    assert events.response.status_code == 200
                    assert events.next()[1]["kind"] == "reset"


def test_the_event_feed_scrubs_paths_from_problems(keyed: Workspace) -> None:
    from oryxtui.api.events import EventLog
    from oryxtui.api.feed import EventFeed  # the feed has a module of its own from this round
    from oryxtui.memory import MemoryService

    memory = MemoryService.open(keyed, Settings())
    log = EventLog()
    feed = EventFeed(keyed, Settings(), memory, log, scrub=lambda m: m.replace("/", "<path>"))
    failing = OryxError(f"{keyed.root}/agents/ops/MEMORY.md is locked")
    with mock.patch.object(memory.store, "reconcile", side_effect=failing):
        feed.memory_changed("ops")
    (event,) = log.after(0) or []
    assert str(keyed.root) not in event.json and "<path>" in event.data["problem"]


# 6. Footprints are held for review like every agent write --------------------------------


def test_a_footprint_is_held_when_saves_are_held(keyed: Workspace) -> None:
    (keyed.root / "config.toml").write_text(
        "[memory]\nfootprint = true\n[memory.review]\nhold = true\n"
    )
    done = cli("chat", "--agent", "ops", "--root", str(keyed.root), "hello there")
    assert done.code == 0, done.stderr
    assert "hello there" not in (keyed.agents_dir / "ops" / "MEMORY.md").read_text()
    review = json.loads(
        cli("memory", "review", "--agent", "ops", "--json", "--root", str(keyed.root)).stdout
    )
    (item,) = [i for i in review["awaiting"] if "hello there" in i["content"]]
    assert item["held"] is True and item["by"] == "agent" and item["turn"] == 0


# 7, 18. One reach rule: the global memory, and links between agent folders -------------------


def test_a_limited_key_reaches_no_global_data_on_any_route(keyed: Workspace) -> None:
    assert (
        cli("chat", "--root", str(keyed.root), "remember that the vault code is quartzfalcon").code
        == 0
    )
    star = make_key(keyed, "star", "admin", "*")
    admin = make_key(keyed, "root", "admin")
    session = (
        "cli:"
        + json.loads(cli("sessions", "list", "--all", "--json", "--root", str(keyed.root)).stdout)[
            "sessions"
        ][0]["session"].split(":", 1)[1]
    )
    global_routes = [
        "/api/v1/agents/__global__/memory",
        "/api/v1/agents/__global__/memory/entries",
        "/api/v1/agents/__global__/prompt",
        "/api/v1/agents/__global__/sessions",
        f"/api/v1/sessions/{session}",
        f"/api/v1/sessions/{session}/turns/0/prompt",
    ]
    with served(keyed) as client:
        for path in global_routes:
            assert client.get(path, headers=bearer(admin)).status_code == 200, path
            refused = client.get(path, headers=bearer(star))
            assert refused.status_code in (403, 404), path
            assert "quartzfalcon" not in refused.text  # (digits could be in a time stamp)
        listed = client.get("/api/v1/sessions", headers=bearer(star)).json()["data"]
        assert all(s["agent"] not in ("__global__", None) for s in listed)


def test_a_linked_agent_folder_never_widens_a_keys_reach(keyed: Workspace) -> None:
    (keyed.agents_dir / "ops-alias").symlink_to(keyed.agents_dir / "secret")
    key = make_key(keyed, "ops-only", "write", "ops-*")
    with served(keyed) as client:
        names = [
            a["name"] for a in client.get("/api/v1/agents", headers=bearer(key)).json()["data"]
        ]
        assert "ops-alias" not in names and "ops-eu" in names
        read = client.get("/api/v1/agents/ops-alias/memory", headers=bearer(key))
        assert read.status_code == 403 and "note of secret" not in read.text
        saved = client.post(
            "/api/v1/agents/ops-alias/memory", json={"content": "planted"}, headers=bearer(key)
        )
        assert saved.status_code == 403
    assert "planted" not in (keyed.agents_dir / "secret" / "MEMORY.md").read_text()


# 8. Leftovers of round 2 -------------------------------------------------------------------


def test_doctor_does_not_call_an_entry_moved_by_an_editor_lost(keyed: Workspace) -> None:
    root = ["--root", str(keyed.root)]
    assert cli("memory", "save", "moved by hand", "--agent", "ops", *root).code == 0
    memory = keyed.agents_dir / "ops" / "MEMORY.md"
    lines = memory.read_text().split("\n")
    moved = next(line for line in lines if "moved by hand" in line)
    lines.remove(moved)
    lines.insert(lines.index(ARCHIVAL_HEADER), moved)  # into core, as an editor would
    memory.write_text("\n".join(lines))
    doctor = cli("memory", "doctor", "--agent", "ops", "--json", *root)
    assert doctor.code == 0, doctor.stderr
    assert json.loads(doctor.stdout)["entries"] == []


def test_a_forged_history_cannot_make_the_history_grow_without_bound(keyed: Workspace) -> None:
    from oryxtui.memory.history import history_path
    from oryxtui.memory.history.log import HISTORY_BUDGET_BYTES

    memory = keyed.agents_dir / "ops" / "MEMORY.md"
    history = history_path(memory)
    forged = [
        {"scope": "archival", "line": f"- forged line {n} " + "x" * 100} for n in range(100_000)
    ]
    history.write_text(
        json.dumps({"n": 1, "op": "baseline", "actor": "outside", "after": forged}) + "\n"
    )
    assert history.stat().st_size > 11 << 20
    assert cli("memory", "save", "one save", "--agent", "ops", "--root", str(keyed.root)).code == 0
    memory.write_text(memory.read_text() + "- an outside edit\n")
    assert cli("memory", "log", "--agent", "ops", "--root", str(keyed.root)).code == 0
    assert history.stat().st_size < HISTORY_BUDGET_BYTES
    log = cli("memory", "log", "--agent", "ops", "--json", "--root", str(keyed.root)).stdout
    assert "one save" in log and "an outside edit" in log


def test_a_session_row_that_cannot_be_read_does_not_refuse_the_prompt(keyed: Workspace) -> None:
    assert cli("chat", "--agent", "ops", "--root", str(keyed.root), "hello").code == 0
    with sqlite3.connect(keyed.db_path) as db:
        (raw,) = db.execute("SELECT messages_json FROM sessions").fetchone()
        messages = json.loads(raw)
        messages.insert(1, {"role": 7, "content": None})
        db.execute("UPDATE sessions SET messages_json = ?", (json.dumps(messages),))
        (session,) = db.execute("SELECT session_id FROM sessions").fetchone()
    channel, user, _ = session.split(":")
    with served(keyed) as client:
        answer = client.get("/api/v1/agents/ops/prompt", params={"channel": channel, "user": user})
    assert answer.status_code == 200, answer.text
    assert any("could not be read" in w for w in answer.json()["warnings"])


def test_recall_keeps_counting_the_index_when_the_embedder_fails(keyed: Workspace) -> None:
    from tests.llm_server import ScriptedLLM

    root = ["--root", str(keyed.root)]
    with ScriptedLLM([]) as embedder:
        (keyed.root / "config.toml").write_text(
            f'[embedding]\nprovider = "openai"\nbase_url = "{embedder.base_url}"\n'
            'model = "concepts"\n'
        )
        for n in range(7):
            assert cli("memory", "save", f"fact number {n}", "--agent", "ops", *root).code == 0
        indexed = json.loads(cli("memory", "index", "--agent", "ops", "--json", *root).stdout)
        assert indexed["indexed"] == indexed["entries"] == 8
    # The embedder is gone now.
    found = cli("memory", "recall", "fact", "--agent", "ops", "--json", *root)
    data = json.loads(found.stdout)
    assert data["semantic"] == "failed"
    assert data["index"]["indexed"] == 8


# 9, 11, 17. Bad input ------------------------------------------------------------------------


@pytest.mark.parametrize("patterns", [",", " ", "", " , "])
def test_an_empty_agent_pattern_list_makes_no_key(keyed: Workspace, patterns: str) -> None:
    args = ["keys", "create", "k", "--scope", "read", "--agents", patterns]
    result = cli(*args, "--root", str(keyed.root))
    assert result.code == 2 and "no agent pattern" in result.stderr
    assert cli("keys", "list", "--json", "--root", str(keyed.root)).stdout.count('"name"') == 0


def test_a_write_key_chats_only_in_its_own_sessions(keyed: Workspace) -> None:
    key = make_key(keyed, "alice", "write")
    admin = make_key(keyed, "boss", "admin")
    with served(keyed) as client:
        other = client.post(
            "/api/v1/agents/ops/chat",
            json={"message": "hi", "channel": "feishu", "user": "ceo"},
            headers=bearer(key),
        )
        assert other.status_code == 403 and "own sessions" in other.json()["message"]
        own = client.post(
            "/api/v1/agents/ops/chat",
            json={"message": "remember that blue is my colour"},
            headers=bearer(key),
        )
        assert own.status_code == 200 and '"final"' in own.text
        as_admin = client.post(
            "/api/v1/agents/ops/chat",
            json={"message": "hello", "channel": "feishu", "user": "ceo"},
            headers=bearer(admin),
        )
        assert as_admin.status_code == 200
        history = client.get("/api/v1/agents/ops/memory/history", headers=bearer(key)).json()
        saved = next(r for r in history["data"] if r["op"] == "save")
        assert saved["actor"] == "agent" and saved["via"] == "api:alice"
        assert saved["session"] == "api:alice:ops"
        prompt = client.get(
            "/api/v1/sessions/api:alice:ops/turns/0/prompt", headers=bearer(key)
        ).json()["data"]
        assert prompt["calls"][0]["by"] == "api:alice"
    log = cli("memory", "log", "--agent", "ops", "--root", str(keyed.root)).stdout
    assert "via api:alice" in log


def test_a_nul_in_a_search_is_bad_input_not_an_outage(keyed: Workspace) -> None:
    with served(keyed) as client:
        answer = client.get("/api/v1/agents/ops/memory/recall", params={"keyword": "a\x00b"})
        assert answer.status_code == 422 and "NUL" in answer.json()["message"]
        search = client.get("/api/v1/agents/ops/sessions/search", params={"q": "a\x00b"})
        assert search.status_code == 422
    local = cli("memory", "recall", "a\x00b", "--agent", "ops", "--root", str(keyed.root))
    assert local.code == 2 and "NUL" in local.stderr


# 12, 13, 19. A hostile server cannot hang, exhaust or crash the client ---------------------


class HostileServer(LocalHttpServer):
    """Answers as a hostile server would: `mode` says how."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        super().__init__()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        mode = self.mode

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: object) -> None:
                pass

            def do_GET(self) -> None:
                events = self.path.startswith("/api/v1/events")
                if mode == "review" and not self.path.startswith("/api/v1/agents/ops/memory"):
                    listed = [{"name": "ops", "description": "", "tools": []}]
                    body = json.dumps({"code": 0, "data": listed}).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.end_headers()
                    self.wfile.write(body)
                    return
                self.send_response(200)
                kind = "text/event-stream" if events else "application/json"
                self.send_header("Content-Type", kind)
                self.end_headers()
                try:
                    if mode == "huge":
                        self.wfile.write(b'{"code": 0, "data": "' + b"x" * (8 << 20))
                    elif mode == "trickle":
                        for _ in range(600):
                            self.wfile.write(b" ")
                            self.wfile.flush()
                            time.sleep(0.1)
                    elif mode == "endless-line":
                        self.wfile.write(b"data: " + b"y" * (4 << 20))
                    elif mode == "review":
                        body = {
                            "code": 0,
                            "data": [
                                {"id": "a1", "scope": "archival", "content": "c", "held": True},
                                {
                                    "id": "a2",
                                    "scope": "archival",
                                    "content": "d",
                                    "held": False,
                                    "turn_text": "nonsense",
                                    "turn": "x",
                                    "op": 5,
                                },
                            ],
                        }
                        self.wfile.write(json.dumps(body).encode())
                except (BrokenPipeError, ConnectionResetError):
                    pass

        return Handler


def test_a_huge_answer_is_refused_without_reading_it_all() -> None:
    with (
        HostileServer("huge") as hostile,
        mock.patch.object(remote_client, "MAX_ANSWER_BYTES", 1 << 20),
    ):
        server = Server(hostile.base_url)
        with pytest.raises(ServiceUnavailable, match="over 1 MB"):
            server.get("/agents")


def test_a_trickling_server_is_given_up_on_and_can_be_interrupted() -> None:
    with HostileServer("trickle") as hostile:
        started = time.monotonic()
        with pytest.raises(ServiceUnavailable, match="did not answer within 1 s"):
            Server(hostile.base_url, timeout=1.0).get("/agents")
        assert time.monotonic() - started < 10
        server = Server(hostile.base_url)
        failed: list[BaseException] = []

        def call() -> None:
            try:
                server.get("/agents")
            except OryxError as exc:
                failed.append(exc)

        thread = threading.Thread(target=call)
        thread.start()
        time.sleep(0.3)
        started = time.monotonic()
        server.close()  # what quitting the dashboard does
        thread.join(timeout=5)
        assert not thread.is_alive() and failed
        assert time.monotonic() - started < 5


def test_an_event_line_that_never_ends_is_one_sentence() -> None:
    from oryxtui.remote.client import events

    with HostileServer("endless-line") as hostile:
        server = Server(hostile.base_url)
        with (
            pytest.raises(ServiceUnavailable, match="event line over 1 MB"),
            server.stream("GET", "/events") as lines,
        ):
            list(events(lines))


def test_a_forged_review_answer_is_skipped_never_a_traceback(keyed: Workspace) -> None:
    with HostileServer("review") as hostile:
        done = cli("memory", "review", "--agent", "ops", "--remote", hostile.base_url)
    assert done.code == 0, done.stderr
    assert "Traceback" not in done.stderr and "KeyError" not in done.stderr
    assert "c" in done.stdout and "d" in done.stdout


def test_a_remote_url_with_a_user_and_password_is_refused_without_showing_them() -> None:
    with pytest.raises(UsageError) as refused:
        Server("http://admin:hunter2@127.0.0.1:8765")
    assert "hunter2" not in str(refused.value) and "admin" not in str(refused.value)
    result = cli("memory", "show", "--remote", "http://admin:hunter2@127.0.0.1:1")
    assert result.code == 2 and "hunter2" not in result.stderr


def test_a_stream_whose_key_cannot_be_checked_now_ends_never_raises(keyed: Workspace) -> None:
    from oryxtui.api.auth import Authenticator
    from oryxtui.errors import DatabaseError

    key = make_key(keyed, "k", "read")
    store = KeyStore(Database(keyed.db_path))
    auth = Authenticator(store, None, open_at_start=False)
    caller = auth.caller(f"Bearer {key}")
    assert auth.still(f"Bearer {key}", caller)
    with mock.patch.object(store, "caller", side_effect=DatabaseError("the database is down")):
        assert auth.still(f"Bearer {key}", caller) is False
