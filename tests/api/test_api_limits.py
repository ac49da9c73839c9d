"""The REST API under pressure and bad requests (issue 22): waits on one agent's lock never
starve the others, a change is validated whole before it is made."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import httpx
from filelock import FileLock

from oryxtui.config import Settings
from oryxtui.memory import MemoryService
from oryxtui.workspace import Workspace
from tests.api_server import RunningApi
from tests.support import fixed_clock, make_agent


def test_saves_waiting_on_one_agent_leave_the_others_answered(workspace: Workspace) -> None:
    make_agent(workspace, "busy")
    make_agent(workspace, "calm")
    MemoryService.open(workspace, Settings(), fixed_clock).save("calm", "calm fact", "archival")
    held = FileLock(workspace.memory_file("busy").with_name("MEMORY.md.lock"))
    with RunningApi(workspace) as client:
        url = client.base_url
        held.acquire()
        try:
            with ThreadPoolExecutor(60) as pool:

                def save(index: int) -> httpx.Response:
                    with httpx.Client(base_url=url, timeout=60) as own:
                        body = {"content": f"save {index}"}
                        return own.post("/api/v1/agents/busy/memory", json=body)

                futures = [pool.submit(save, index) for index in range(60)]
                deadline = time.monotonic() + 30
                refused = []
                while len(refused) < 60 - 8 and time.monotonic() < deadline:
                    refused = [f for f in futures if f.done() and f.result().status_code == 503]
                    time.sleep(0.02)
                assert len(refused) == 60 - 8  # the rest wait for the lock, each a thread
                started = time.monotonic()
                other = client.get("/api/v1/agents/calm/memory/entries")
                assert other.status_code == 200 and time.monotonic() - started < 2.0
                message = refused[0].result().json()["message"]
                assert "already waiting" in message and "try again" in message
                held.release()  # the waiting saves go in, one after the other
                answers = [future.result() for future in futures]
        finally:
            if held.is_locked:
                held.release()
    saved = [a for a in answers if a.status_code == 200]
    assert len(saved) == 8
    text = workspace.memory_file("busy").read_text()
    assert all(a.json()["data"]["content"] in text for a in saved)  # none lost


def test_a_change_with_a_bad_scope_changes_nothing(workspace: Workspace) -> None:
    make_agent(workspace, "ops")
    service = MemoryService.open(workspace, Settings(), fixed_clock)
    entry = service.save("ops", "original text", "core")
    before = workspace.memory_file("ops").read_text()
    with RunningApi(workspace) as client:
        path = f"/api/v1/agents/ops/memory/entries/{entry.id}"
        bogus = client.patch(path, json={"content": "new text", "scope": "bogus"})
        assert bogus.status_code == 400 and "bogus" in bogus.json()["message"]
        assert workspace.memory_file("ops").read_text() == before
        both = client.patch(path, json={"content": "new text", "scope": "archival"})
        assert both.status_code == 200
    snapshot = service.snapshot("ops")
    assert [e.content for e in snapshot.archival] == ["new text"] and not snapshot.core
    (change,) = [r for r in service.history("ops") if r.op != "save"]
    assert change.op == "move"  # one change, one record
    assert service.as_of("ops", change.n) is not None
    assert [e.content for e in service.as_of("ops", change.n)[0].archival] == ["new text"]
