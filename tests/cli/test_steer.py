"""Steering memory (issue 14, part 1): edit, move and delete one entry by its stable id, on real
files and a real oryxos.db; through the service, the real `oryxtui` CLI and the REST API."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oryxtui.config import Settings
from oryxtui.errors import StaleEntry, UsageError
from oryxtui.memory import MemoryService
from oryxtui.memory.format import ARCHIVAL_HEADER, CORE_HEADER, Scope
from oryxtui.workspace import Workspace
from tests.backends import BACKENDS, backend_settings
from tests.support import fixed_clock, make_agent, run_oryxtui


def service_for(
    workspace: Workspace, backend: str, request: pytest.FixtureRequest | None = None
) -> MemoryService:
    if request is not None:
        settings = backend_settings(request, backend)
    else:
        settings = Settings.model_validate({"memory": {"backend": backend}})
    return MemoryService.open(workspace, settings, clock=fixed_clock)


def ids(service: MemoryService, agent: str | None) -> dict[str, str]:
    snapshot = service.snapshot(agent)
    return {entry.content: entry.id for entry in [*snapshot.core, *snapshot.archival]}


@pytest.mark.parametrize("backend", BACKENDS)
def test_edit_move_delete_by_id_keep_times_and_other_ids(
    request: pytest.FixtureRequest, workspace: Workspace, backend: str
) -> None:
    service = service_for(workspace, backend, request)
    for text in ["first", "second", "third"]:
        service.save("ops", text, "archival")
    before = ids(service, "ops")
    edited = service.edit("ops", before["second"], "second, corrected\nover two lines")
    assert edited.content == "second, corrected over two lines"
    assert edited.time == "2026-07-22 09:30:00" and edited.scope is Scope.ARCHIVAL
    after = ids(service, "ops")
    assert after["first"] == before["first"] and after["third"] == before["third"]
    assert edited.id != before["second"] and after[edited.content] == edited.id
    with pytest.raises(StaleEntry, match="edited, moved or removed since it was shown"):
        service.edit("ops", before["second"], "again")  # the id it had before the edit
    moved = service.move("ops", before["first"], "CORE")
    assert (moved.scope, moved.time, moved.content) == (Scope.CORE, "2026-07-22 09:30:00", "first")
    with pytest.raises(UsageError, match="already in core"):
        service.move("ops", moved.id, "core")
    removed = service.delete("ops", before["third"])
    assert removed.content == "third"
    snapshot = service.snapshot("ops")
    assert [e.content for e in snapshot.core] == ["first"]
    assert [e.content for e in snapshot.archival] == ["second, corrected over two lines"]
    assert service.lost("ops") == []  # deliberate changes are never reported lost
    with pytest.raises(StaleEntry):
        service.delete("ops", before["third"])


def test_a_change_keeps_every_other_byte(workspace: Workspace) -> None:
    make_agent(workspace, "ops")
    path = workspace.memory_file("ops")
    original = (
        "\ufeffnotes a person wrote\r\n"
        f"{CORE_HEADER}\r\n- [2026-07-01 09:00:00] core one\r\n\r\n"
        f"{ARCHIVAL_HEADER}\r\n- [2026-07-01 09:01:00] keep me\r\n"
        "### a heading of mine\r\n- [2026-07-01 09:02:00] remove me\r\n"
        "- hand-written, no time\r\n"
    )
    path.write_bytes(original.encode())
    service = service_for(workspace, "markdown")
    found = ids(service, "ops")
    service.delete("ops", found["remove me"])
    assert (
        path.read_bytes() == original.replace("- [2026-07-01 09:02:00] remove me\r\n", "").encode()
    )
    service.edit("ops", found["hand-written, no time"], "still hand-written")
    assert path.read_bytes().endswith(b"### a heading of mine\r\n- still hand-written\r\n")
    assert path.read_bytes().startswith("\ufeffnotes a person wrote\r\n".encode())


def test_an_outside_edit_between_show_and_change_is_never_overwritten(
    workspace: Workspace,
) -> None:
    service = service_for(workspace, "markdown")
    service.save("ops", "mine", "archival")
    entry_id = ids(service, "ops")["mine"]
    path = workspace.memory_file("ops")
    path.write_text(path.read_text().replace("mine", "changed by hand"))
    with pytest.raises(StaleEntry):
        service.delete("ops", entry_id)
    assert "changed by hand" in path.read_text()


def test_the_cli_edits_moves_and_deletes(workspace: Workspace) -> None:
    make_agent(workspace, "ops")
    root = str(workspace.root)
    common = ("--root", root, "--agent", "ops")
    for text in ["alpha", "beta"]:
        assert run_oryxtui("memory", "save", *common, text).returncode == 0
    shown = json.loads(run_oryxtui("memory", "show", *common, "--json").stdout)
    alpha, beta = (entry["id"] for entry in shown["archival"])
    edited = run_oryxtui("memory", "edit", *common, "--json", alpha, "-", stdin="alpha, edited")
    assert edited.returncode == 0, edited.stderr
    new = json.loads(edited.stdout)["edited"]
    assert new["content"] == "alpha, edited" and new["scope"] == "archival"
    stale = run_oryxtui("memory", "edit", *common, alpha, "again")
    assert stale.returncode == 1 and "since it was shown" in stale.stderr
    moved = run_oryxtui("memory", "move", *common, beta, "core")
    assert moved.returncode == 0 and moved.stdout.startswith("Moved in agent ops (core, id ")
    deleted = run_oryxtui("memory", "delete", *common, new["id"])
    assert deleted.returncode == 0 and "alpha, edited" in deleted.stdout
    block = run_oryxtui("memory", "show", *common).stdout
    lines = block.splitlines()
    assert lines[0] == CORE_HEADER and lines[1] == "- [2026-" + lines[1][8:]
    assert lines[1].endswith("] beta") and "alpha" not in block  # moved with its time
    bad = run_oryxtui("memory", "move", *common, beta, "nowhere")
    assert bad.returncode == 2 and "Unknown scope" in bad.stderr


def test_mem0_says_it_cannot_change_single_entries(workspace: Workspace) -> None:
    (workspace.root / "config.toml").write_text('[memory]\nbackend = "mem0"\n')
    done = run_oryxtui("memory", "delete", "--root", str(workspace.root), "abc123abc123")
    assert done.returncode == 2 and "cannot change single entries" in done.stderr


def test_a_stale_entry_is_409_over_rest(tmp_path: Path, workspace: Workspace) -> None:
    from tests.api_server import RunningApi

    make_agent(workspace, "ops")
    service = service_for(workspace, "markdown")
    service.save("ops", "deploy on tuesday", "archival")
    entry_id = ids(service, "ops")["deploy on tuesday"]
    with RunningApi(workspace) as client:
        url = f"/api/v1/agents/ops/memory/entries/{entry_id}"
        changed = client.patch(url, json={"content": "deploy on wednesday", "scope": "core"})
        assert changed.status_code == 200, changed.text
        data = changed.json()["data"]
        assert (data["scope"], data["content"]) == ("core", "deploy on wednesday")
        assert data["time"] == "2026-07-22 09:30:00"
        again = client.patch(url, json={"content": "x"})
        assert again.status_code == 409 and "since it was shown" in again.json()["message"]
        assert client.patch(url.replace(entry_id, data["id"]), json={}).status_code == 400
        plain = client.patch(url, content=b"x", headers={"content-type": "text/plain"})
        assert plain.status_code == 415
        gone = client.delete(f"/api/v1/agents/ops/memory/entries/{data['id']}")
        assert gone.status_code == 200 and gone.json()["data"]["content"] == "deploy on wednesday"
        assert client.delete(f"/api/v1/agents/ops/memory/entries/{data['id']}").status_code == 409
        log = client.get("/api/v1/agents/ops/memory/history").json()["data"]
        assert (log[0]["op"], log[0]["actor"]) == ("delete", "api")
        assert log[0]["before"][0]["content"] == "deploy on wednesday"
        assert (log[-1]["op"], log[-1]["actor"]) == ("save", "cli")
        later = client.get("/api/v1/agents/ops/memory/history", params={"since": "2999-01-01"})
        assert later.status_code == 200 and later.json()["data"] == []
    assert "deploy" not in workspace.memory_file("ops").read_text()


@pytest.mark.parametrize("backend", BACKENDS)
def test_repeated_entries_are_found_and_the_oldest_kept(
    request: pytest.FixtureRequest, workspace: Workspace, backend: str
) -> None:
    service = service_for(workspace, backend, request)
    for text, scope in [
        ("Deploy  window is Tuesday", "archival"),
        ("deploy window is tuesday", "archival"),
        ("something else", "archival"),
        ("DEPLOY WINDOW IS TUESDAY", "archival"),
        ("prefers tea", "core"),
        ("Prefers tea", "core"),
        ("deploy window is tuesday", "core"),  # the other section: not a repeat
    ]:
        service.save("ops", text, scope)
    snapshot = service.snapshot("ops")
    assert snapshot.archival_duplicates == {1, 3} and snapshot.core_duplicates == {1}
    removed = service.remove_duplicates("ops")
    assert sorted(e.content for e in removed) == [
        "DEPLOY WINDOW IS TUESDAY",
        "Prefers tea",
        "deploy window is tuesday",
    ]
    after = service.snapshot("ops")
    assert [e.content for e in after.archival] == ["Deploy window is Tuesday", "something else"]
    assert [e.content for e in after.core] == ["prefers tea", "deploy window is tuesday"]
    assert service.remove_duplicates("ops") == []
    assert service.lost("ops") == []


def test_removing_repeats_keeps_every_other_byte(workspace: Workspace) -> None:
    make_agent(workspace, "ops")
    path = workspace.memory_file("ops")
    original = (
        f"preamble\n{CORE_HEADER}\n- [2026-07-01 09:00:00] a\n{ARCHIVAL_HEADER}\n"
        "- [2026-07-01 09:01:00] b\n\n## my notes\n- [2026-07-01 09:02:00] B\n- c\n"
    )
    path.write_text(original)
    assert len(service_for(workspace, "markdown").remove_duplicates("ops")) == 1
    assert path.read_text() == original.replace("- [2026-07-01 09:02:00] B\n", "")
