"""The event stream: what changed, numbered; resumed after a break with nothing missed; a
`reset` when it cannot be; heartbeats while nothing happens; only the agents a key reaches."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from oryxtui.api.app import create_api
from oryxtui.api.events import EventLog
from oryxtui.config import ApiSettings, Settings
from oryxtui.memory.events import MemoryChange
from oryxtui.memory.format import ARCHIVAL_HEADER, CORE_HEADER
from oryxtui.workspace import Workspace
from tests.api_server import EventReader, RunningApi
from tests.support import cli, make_agent


@pytest.fixture
def watched(workspace: Workspace) -> Workspace:
    for name in ("ops", "atlas"):
        (make_agent(workspace, name) / "MEMORY.md").write_text(
            f"{CORE_HEADER}\n{ARCHIVAL_HEADER}\n- [2026-07-21 09:00:00] first note of {name}\n"
        )
    return workspace


@pytest.fixture
def url(watched: Workspace) -> Iterator[str]:
    settings = Settings(api=ApiSettings(heartbeat_seconds=0.2))
    with RunningApi(watched, app=create_api(watched, settings)) as client:
        yield str(client.base_url)


def save(workspace: Workspace, agent: str, text: str) -> None:
    assert cli("memory", "save", text, "--agent", agent, "--root", str(workspace.root)).code == 0


def number(event_id: str | None) -> int:
    assert event_id is not None
    return int(event_id.rpartition(".")[2])


def test_every_change_is_an_event_with_its_history_record(watched: Workspace, url: str) -> None:
    with EventReader(url) as events:
        first_id, hello = events.next()
        assert hello["kind"] == "hello"
        save(watched, "atlas", "known to the history from here on")
        events.until(lambda d: d.get("agent") == "atlas")
        save(watched, "ops", "a fact saved by the cli")
        (_, data), *_ = events.until(lambda d: d["kind"] == "memory")[-1:]
        assert data["agent"] == "ops"
        assert data["change"]["op"] == "save" and data["change"]["actor"] == "cli"
        memory = watched.agents_dir / "atlas" / "MEMORY.md"  # an edit outside oryxtui
        memory.write_text(memory.read_text().replace("first note", "edited note"))
        seen = events.until(lambda d: d.get("agent") == "atlas")
        assert seen[-1][1]["change"]["op"] == "outside"
        cli("agents", "new", "scribe", "--root", str(watched.root))
        events.until(lambda d: d["kind"] == "agents")
    ids = [number(first_id)] + [number(event_id) for event_id, _ in seen]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)


def test_a_client_resumes_from_its_last_id_with_nothing_missed(
    watched: Workspace, url: str
) -> None:
    with EventReader(url) as events:
        events.next()
        save(watched, "ops", "one")
        last_id, _ = events.until(lambda d: d["kind"] == "memory")[-1]
    for text in ("two", "three", "four"):  # while the client is away
        save(watched, "ops", text)
    with EventReader(url, {"Last-Event-ID": str(last_id)}) as events:
        missed = [events.next() for _ in range(3)]
    assert [number(i) for i, _ in missed] == [number(last_id) + k for k in (1, 2, 3)]
    assert [d["change"]["n"] for _, d in missed] == [3, 4, 5]  # the history's numbers too
    with EventReader(
        url + f"/api/v1/events?since={missed[0][0]}".replace("/api/v1/events", "")
    ) as events:
        pass  # `since` is the query form: checked below on the stream itself
    with EventReader(url, {"Last-Event-ID": str(missed[0][0])}) as events:
        assert [number(i) for i, _ in (events.next(), events.next())] == [
            number(missed[1][0]),
            number(missed[2][0]),
        ]


def test_an_id_the_server_cannot_resume_from_gets_a_reset(url: str) -> None:
    for stale in ("0123abcd.7", "garbage", "x.y"):
        with EventReader(url, {"Last-Event-ID": stale}) as events:
            _, data = events.next()
            assert data["kind"] == "reset"


def test_heartbeats_keep_a_quiet_stream_open(url: str) -> None:
    with EventReader(url) as events:
        events.next()
        deadline_reads = 0
        while events.comments < 2:
            deadline_reads += 1
            assert deadline_reads < 50
            line = next(events._lines)
            if line.startswith(":"):
                events.comments += 1


def test_a_key_limited_to_agents_hears_only_them(watched: Workspace, url: str) -> None:
    key = cli(
        "keys", "create", "eu", "--scope", "read", "--agents", "ops", "--root", str(watched.root)
    ).stdout.strip()
    with EventReader(url, {"Authorization": f"Bearer {key}"}) as events:
        events.next()
        save(watched, "atlas", "not for eu")
        save(watched, "ops", "for eu")
        seen = events.until(lambda d: d.get("agent") == "ops")
    assert all(data.get("agent") != "atlas" for _, data in seen)


def test_the_log_holds_what_it_can_and_says_when_a_client_fell_behind() -> None:
    log = EventLog(keep=3)
    for n in range(5):
        log.publish(MemoryChange(f"a{n}"))
    assert log.position(log.id_of(4)) == 4 and [e.n for e in log.after(2) or []] == [3, 4, 5]
    assert log.position(log.id_of(1)) is None  # older than what is held: reset
    assert log.position(log.id_of(9)) is None  # from the future: another run
    assert log.position("other.3") is None
