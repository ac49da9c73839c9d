"""Security round 5 (issue 57) over the REST API, through a real uvicorn server on 127.0.0.1:
a moment out of range is a 400 of one sentence."""

from __future__ import annotations

from oryxtui.workspace import Workspace
from tests.api_server import RunningApi
from tests.cli.test_security_round5 import EXTREMES
from tests.support import agents_with_notes


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
