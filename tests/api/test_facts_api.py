"""Facts that change over the REST API, through a real uvicorn server on 127.0.0.1 — on
MEMORY.md files and on a real PostgreSQL: a save names what it may replace; replace by new
text; the suggestions, acted on or dismissed; the versions replaced; the memory as of a moment;
recall of the past; and the same through the remote client the CLI and dashboard use."""

from __future__ import annotations

from datetime import datetime

import pytest

from oryxtui.api.app import create_api
from oryxtui.api.models import saved_entry
from oryxtui.config import Settings
from oryxtui.memory import MemoryService
from oryxtui.memory.format import Scope
from oryxtui.remote.client import Server
from oryxtui.remote.memory import RemoteMemory
from oryxtui.workspace import Workspace
from tests.api_server import RunningApi
from tests.backends import BACKENDS, backend_settings
from tests.support import Ticking, make_agent

ROUTINE = [f"Routine check {n} of service s{n}: all green." for n in range(30)]


@pytest.mark.parametrize("backend", ["markdown", "postgres"])
def test_replace_suggest_and_look_back_over_rest(
    request: pytest.FixtureRequest, workspace: Workspace, backend: str
) -> None:
    assert backend in BACKENDS
    make_agent(workspace, "ops")
    settings = backend_settings(request, backend)
    # What the memory held in July (another program wrote it then): the moment to look back to.
    writer = MemoryService.open(workspace, settings, clock=Ticking())
    for text in ROUTINE:
        writer.save("ops", text)
    old = saved_entry(writer.save("ops", "Staging host for ledger is stg-11."))
    before = datetime(2026, 7, 1, 12, 0, 0)
    with RunningApi(workspace, app=create_api(workspace, settings)) as client:
        new = client.post(
            "/api/v1/agents/ops/memory",
            json={"content": "Staging host for ledger is now stg-14."},
        ).json()["data"]
        assert [item["id"] for item in new["may_update"]] == [old["id"]]
        assert 0 < new["may_update"][0]["score"] <= 1
        (suggested,) = client.get("/api/v1/agents/ops/memory/suggestions").json()["data"]
        assert (suggested["old"]["id"], suggested["new"]["id"]) == (old["id"], new["id"])
        acted = client.post(
            "/api/v1/agents/ops/memory/suggestions",
            json={"old": old["id"], "new": new["id"], "action": "replace"},
        )
        assert acted.status_code == 200 and acted.json()["data"]["replaced"]["id"] == old["id"]
        assert client.get("/api/v1/agents/ops/memory/suggestions").json()["data"] == []
        replaced = client.post(
            f"/api/v1/agents/ops/memory/entries/{new['id']}/replace",
            json={"content": "Staging host for ledger is stg-20."},
        ).json()["data"]
        assert replaced["replaced"]["id"] == new["id"] and replaced["held"] is False
        block = client.get("/api/v1/agents/ops/memory").json()["data"]
        assert "stg-20" in block and "stg-11" not in block and "stg-14" not in block
        versions = client.get("/api/v1/agents/ops/memory/replaced").json()["data"]
        assert [v["content"] for v in versions] == [
            "Staging host for ledger is now stg-14.",
            "Staging host for ledger is stg-11.",
        ]
        assert {v["current"]["content"] for v in versions} == {"Staging host for ledger is stg-20."}
        past = client.get(
            "/api/v1/agents/ops/memory/recall",
            params={"keyword": "staging host", "include_replaced": "true"},
        ).json()["data"]
        marked = {hit["content"]: "replaced" in hit for hit in past["hits"]}
        assert marked["Staging host for ledger is stg-20."] is False
        assert marked["Staging host for ledger is stg-11."] is True
        # A moment is typed as a person would; a date alone is the end of that day.
        moment = before.isoformat()
        then = client.get(f"/api/v1/agents/ops/memory/as-of/{moment}").json()["data"]
        assert "stg-11" in then["block"] and "stg-20" not in then["block"]
        assert then["memory"]["archival"][-1]["content"] == "Staging host for ledger is stg-11."
        early = client.get("/api/v1/agents/ops/memory/as-of/2020-01-01")
        assert early.status_code == 400 and "starts at " in early.json()["message"]
        bad = client.get("/api/v1/agents/ops/memory/as-of/yesterday")
        assert bad.status_code == 400 and "is not a time" in bad.json()["message"]
        stale = client.post(
            f"/api/v1/agents/ops/memory/entries/{old['id']}/replace", json={"content": "x"}
        )
        assert stale.status_code == 409
        wrong = client.post(
            "/api/v1/agents/ops/memory/suggestions",
            json={"old": old["id"], "new": new["id"], "action": "forget"},
        )
        assert wrong.status_code == 400

        # The remote client answers the same objects the service does.
        remote = RemoteMemory(Server(str(client.base_url), name="one"))
        assert [v.entry.content for v in remote.replaced_versions("ops")] == [
            v["content"] for v in versions
        ]
        snapshot, block, n = remote.as_of_time("ops", before)
        assert "stg-11" in block and n > 30 and snapshot.archival[-1].scope is Scope.ARCHIVAL
        july = client.get("/api/v1/agents/ops/memory/as-of/2026-07-01").json()["data"]
        assert july["change"] == n  # a date alone: the end of that day
        recalled = remote.recall_past("ops", "staging host", include_replaced=True)
        assert any(hit.newer and "stg-20" in hit.newer for hit in recalled.hits)
        saved = remote.save_checked("ops", "Primary region for ledger is eu-west-1.")
        assert saved.may_update == ()
        later = remote.save_checked("ops", "Primary region for ledger is now us-east-2.")
        assert [u.entry.id for u in later.may_update] == [saved.entry.id]
        was, now = remote.replace("ops", later.entry.id, "Primary region for ledger: eu-north-1.")
        assert was.id == later.entry.id and now.content.endswith("eu-north-1.")
        assert remote.suggestions("ops") == []  # the newer one was replaced since


def test_a_save_over_rest_names_what_is_related_and_the_remote_client_reads_it(
    workspace: Workspace,
) -> None:
    make_agent(workspace, "ops")
    writer = MemoryService.open(workspace, Settings(), clock=Ticking())
    for text in ROUTINE:
        writer.save("ops", text)
    old = saved_entry(writer.save("ops", "Staging host for ledger is stg-11."))
    with RunningApi(workspace) as client:
        new = client.post(
            "/api/v1/agents/ops/memory", json={"content": "Ledger's staging host: stg-14."}
        ).json()["data"]
        assert 1 <= len(new["related"]) <= 5
        assert new["related"][0]["id"] == old["id"] and new["related"][0]["held"] is False
        remote = RemoteMemory(Server(str(client.base_url), name="one"))
        saved = remote.save_checked("ops", "The staging host for ledger is stg-15.", related=True)
        assert saved.related and saved.related[0].entry.content == "Ledger's staging host: stg-14."
        unasked = remote.save_checked("ops", "Routine check 99 of service s99: all green.")
        assert unasked.related == ()  # read only when asked
