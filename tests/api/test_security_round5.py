"""Security round 5 (issue 57) over the REST API, through a real uvicorn server on 127.0.0.1:
a moment out of range is a 400 of one sentence."""

from __future__ import annotations

from oryxtui.config import Settings
from oryxtui.memory import MemoryService
from oryxtui.memory.history import Actor
from oryxtui.workspace import Workspace
from tests.api_server import RunningApi
from tests.cli.test_security_round5 import EXTREMES
from tests.support import agents_with_notes, fixed_clock


def test_as_of_at_the_ends_of_time_is_a_bad_request(workspace: Workspace) -> None:
    agents_with_notes(workspace, "ops")
    with RunningApi(workspace) as client:
        for moment in EXTREMES:
            for answer in (
                client.get(f"/api/v1/agents/ops/memory/as-of/{moment}"),
                client.get(
                    "/api/v1/agents/ops/memory/recall", params={"keyword": "note", "as_of": moment}
                ),
            ):
                assert answer.status_code == 400, answer.text
                assert "out of the range of times" in answer.json()["message"]


def test_nothing_is_shown_replaced_by_itself(workspace: Workspace) -> None:
    """Two identical saves in one second share an id; one copy replaced, then the replacement
    replaced by the copy that stayed: no version is current and replaced at once, none is
    replaced by itself."""
    agents_with_notes(workspace, "ops")
    writer = MemoryService.open(workspace, Settings(), clock=fixed_clock)
    first = writer.save("ops", "staging database is db-stg-3")
    second = writer.save("ops", "staging database is db-stg-3")
    assert first.id == second.id
    with RunningApi(workspace) as client:
        moved = client.post(
            f"/api/v1/agents/ops/memory/entries/{first.id}/replace",
            json={"content": "staging database is db-stg-7"},
        )
        assert moved.status_code == 200, moved.text
        new_id = moved.json()["data"]["entry"]["id"]
        back = client.post(
            "/api/v1/agents/ops/memory/suggestions",
            json={"old": new_id, "new": first.id, "action": "replace"},
        )
        assert back.status_code == 200, back.text
        now = client.get("/api/v1/agents/ops/memory/entries").json()["data"]
        present = {e["id"] for e in [*now["core"], *now["archival"]]}
        assert first.id in present and new_id not in present
        versions = client.get("/api/v1/agents/ops/memory/replaced").json()["data"]
        for version in versions:
            assert version["id"] not in present
            assert version["current"]["id"] != version["id"]
            assert version["replaced_by"]["id"] != version["id"]
        found = client.get(
            "/api/v1/agents/ops/memory/recall",
            params={"keyword": "staging", "include_replaced": "true"},
        ).json()["data"]["hits"]
        for hit in found:
            if hit["id"] in present:
                assert "replaced" not in hit, hit
            else:
                assert hit["replaced"]["current"]["id"] != hit["id"]


def test_approve_all_names_what_landed_and_what_did_not(workspace: Workspace) -> None:
    agents_with_notes(workspace, "ops")
    person = MemoryService.open(workspace, Settings(), clock=fixed_clock)
    entry = person.save("ops", "staging database is db-stg-3")
    client_side = MemoryService.open(workspace, Settings(), actor=Actor("mcp:probe"))
    client_side.replace("ops", entry.id, "staging database is db-stg-7")
    client_side.replace("ops", entry.id, "staging database is db-stg-9")
    assert len(person.held("ops")) == 2
    with RunningApi(workspace) as client:
        acted = client.post("/api/v1/agents/ops/memory/review", json={"approve": "all"})
        assert acted.status_code == 200, acted.text
        decided = acted.json()["data"]
        (made,) = [e["content"].split()[-1] for e in decided["approved"]]
        (left,) = decided["not_approved"]
        assert "changed since it was proposed" in left["reason"]
        memory = (workspace.agents_dir / "ops" / "MEMORY.md").read_text()
        other = ({"db-stg-7", "db-stg-9"} - {made}).pop()
        assert made in memory and "db-stg-3" not in memory and other not in memory
        (waiting,) = person.held("ops")
        assert waiting.id == left["id"]
        # Approving what cannot be made, alone, is a refusal: nothing landed.
        again = client.post("/api/v1/agents/ops/memory/review", json={"approve": "all"})
        assert again.status_code == 409 and "changed since" in again.json()["message"]
