"""The mem0 backend against a mem0-compatible server on 127.0.0.1: wire format and failures."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from oryxtui.agent.loop import AgentLoop
from oryxtui.agent.sessions import SessionStore
from oryxtui.config import Mem0Settings, MemorySettings, Settings
from oryxtui.errors import ServiceUnavailable
from oryxtui.memory import MemoryService
from oryxtui.places import Here
from oryxtui.tui.overview import load_agent
from oryxtui.workspace import Workspace
from tests.mem0_server import Mem0Server
from tests.support import fixed_clock, make_agent, run_oryxtui


def mem0_settings(base_url: str, **extra: object) -> Settings:
    return Settings(
        memory=MemorySettings(backend="mem0", mem0=Mem0Settings(base_url=base_url, **extra))
    )


@pytest.fixture
def server() -> Iterator[Mem0Server]:
    with Mem0Server(clock=fixed_clock) as running:
        yield running


def test_requests_follow_the_upstream_wire_format(
    server: Mem0Server, workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEM0_KEY", "sekrit")
    server.api_key = "sekrit"
    settings = mem0_settings(server.base_url, api_key_env="MEM0_KEY", user_id="team")
    memory = MemoryService.open(workspace, settings, clock=fixed_clock)
    memory.save("ops", "likes tea", "core")
    memory.save(None, "global note", "archival")
    memory.recall("ops", "tea")
    (_, path, core, headers), (_, _, archival, _), (_, search_path, search, _) = server.requests
    assert path == "/memories"
    assert core == {
        "messages": [{"role": "user", "content": "likes tea"}],
        "user_id": "team:ops",
        "metadata": {"scope": "CORE"},
        "infer": False,
    }
    assert archival["user_id"] == "team" and archival["infer"] is True
    assert archival["metadata"] == {"scope": "ARCHIVAL"}
    assert search_path == "/search"
    assert search == {"query": "tea", "user_id": "team:ops", "filters": {"scope": "ARCHIVAL"}}
    assert headers["Authorization"] == "Bearer sekrit" and headers["X-API-Key"] == "sekrit"


@pytest.mark.parametrize("shape", ["results", "results.items", "items", "bare"])
def test_every_result_shape_and_untagged_or_core_hits(
    server: Mem0Server, workspace: Workspace, shape: str
) -> None:
    server.list_shape = shape
    memory = MemoryService.open(workspace, mem0_settings(server.base_url), clock=fixed_clock)
    memory.save("ops", "tea is core", "core")
    memory.save("ops", "tea is archival", "archival")
    server.memories.append(
        {
            "id": "x",
            "text": "untagged tea",
            "user_id": "oryxos:ops",
            "metadata": None,
            "created_at": "2026-07-22T10:00:00+00:00",
        }
    )
    snapshot = memory.snapshot("ops")
    assert [e.content for e in snapshot.core] == ["tea is core"]
    assert [e.content for e in snapshot.archival] == ["tea is archival", "untagged tea"]
    assert snapshot.archival[0].time == "2026-07-22 09:30:00"
    hits = memory.recall("ops", "TEA").entries
    assert [hit.content for hit in hits] == ["untagged tea", "tea is archival"]  # CORE dropped


def test_recall_keeps_the_servers_relevance_order(server: Mem0Server, workspace: Workspace) -> None:
    memory = MemoryService.open(workspace, mem0_settings(server.base_url), clock=fixed_clock)
    memory.save("ops", "an old note that mentions deploy once among many other words", "archival")
    memory.save("ops", "deploy deploy: the deploy checklist", "archival")
    memory.save("ops", "deploy on Tuesdays", "archival")
    hits = memory.recall("ops", "deploy").entries
    # mem0 ranks by meaning, most relevant first; upstream keeps that order, and so does
    # oryxtui (it used to re-sort by time).
    assert [hit.content for hit in hits] == [
        "deploy deploy: the deploy checklist",
        "deploy on Tuesdays",
        "an old note that mentions deploy once among many other words",
    ]


def test_load_keeps_the_newest_hundred_archival(server: Mem0Server, workspace: Workspace) -> None:
    memory = MemoryService.open(
        workspace,
        Settings(
            memory=MemorySettings(
                backend="mem0",
                archival_max_chars=100_000,
                mem0=Mem0Settings(base_url=server.base_url),
            )
        ),
        clock=fixed_clock,
    )
    for index in range(130):
        memory.save("ops", f"entry {index:03d}", "archival")
    context = memory.build_context("ops")
    assert "entry 129" in context and "entry 030" in context and "entry 029" not in context


def test_an_unreachable_server_is_a_clear_error(workspace: Workspace) -> None:
    with Mem0Server(clock=fixed_clock) as gone:
        dead = gone.base_url
    memory = MemoryService.open(workspace, mem0_settings(dead, timeout_seconds=2))
    with pytest.raises(ServiceUnavailable) as caught:
        memory.build_context("ops")
    message = str(caught.value)
    assert "mem0" in message and "memory.mem0.base_url" in message and dead in message


def test_a_failing_server_is_a_clear_error(server: Mem0Server, workspace: Workspace) -> None:
    server.fail_with = 500
    memory = MemoryService.open(workspace, mem0_settings(server.base_url))
    with pytest.raises(ServiceUnavailable, match="HTTP 500"):
        memory.save("ops", "x", "archival")


def test_the_dashboard_marks_the_agent_and_the_loop_still_runs(
    server: Mem0Server, workspace: Workspace
) -> None:
    make_agent(workspace, "ops")
    settings = Settings(
        memory=MemorySettings(
            backend="mem0", footprint=True, mem0=Mem0Settings(base_url=server.base_url)
        )
    )
    memory = MemoryService.open(workspace, settings, clock=fixed_clock)
    server.fail_with = 503
    shown = load_agent(Here(workspace, settings, memory), "ops")
    assert shown.snapshot is None and "mem0" in (shown.summary.error or "")
    runner = AgentLoop(workspace, settings, memory, SessionStore(workspace.db_path))
    events = list(runner.run("ops", "hello there", "t", "u"))
    assert events[-1].kind == "final" and events[-1].text.startswith("(offline model)")
    warnings = [e.text for e in events if e.kind == "warning"]
    assert any("Memory is unavailable for this turn" in w and "mem0" in w for w in warnings)
    assert any("footprint was not" in w for w in warnings)


def test_cli_against_mem0(server: Mem0Server, tmp_path) -> None:
    assert run_oryxtui("init", str(tmp_path)).returncode == 0
    env = {"ORYXTUI_MEMORY__BACKEND": "mem0", "ORYXTUI_MEMORY__MEM0__BASE_URL": server.base_url}
    saved = run_oryxtui("memory", "save", "shared with upstream", cwd=tmp_path, env=env)
    assert saved.returncode == 0, saved.stderr
    shown = run_oryxtui("memory", "show", cwd=tmp_path, env=env)
    assert "] shared with upstream" in shown.stdout
    server.fail_with = 502
    failed = run_oryxtui("memory", "show", cwd=tmp_path, env=env)
    assert failed.returncode == 1 and "mem0" in failed.stderr and "Traceback" not in failed.stderr


async def test_the_dashboard_works_on_mem0(server: Mem0Server, workspace: Workspace) -> None:
    from textual.widgets import Input

    from oryxtui.tui.app import OryxApp
    from tests.dashboard_support import archival_pane, memory_shown, paste, wait_for

    make_agent(workspace, "ops")
    settings = mem0_settings(server.base_url)
    other = MemoryService.open(workspace, settings, clock=fixed_clock)
    other.save("ops", "seeded through mem0", "archival")
    app = OryxApp(workspace, settings, service=MemoryService.open(workspace, settings), user="t")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: memory_shown(app))
        assert archival_pane(app).view.row_count == 1
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.focused, Input))
        await paste(pilot, "saved from the dashboard")
        await pilot.press("enter")
        await wait_for(pilot, lambda: archival_pane(app).view.row_count == 2)
        other.save("ops", "written by another process", "archival")  # no file: polled
        await wait_for(pilot, lambda: archival_pane(app).view.row_count == 3, timeout=30)
