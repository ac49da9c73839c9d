"""The API's middleware, each part alone (issue 35): paths scrubbed from messages, failures in the
envelope, and who is asking at what rate — on a small app of its own served on 127.0.0.1,
whose one route reads the caller through the typed dependency."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated

import pytest
from fastapi import Depends, FastAPI

from oryxtui.api.auth import Authenticator
from oryxtui.api.keys import Caller, KeyStore, Scope
from oryxtui.api.limits import RateLimit
from oryxtui.api.middleware import (
    Answers,
    Authentication,
    Scrubber,
    gathering_notices,
    install_error_handlers,
)
from oryxtui.api.state import caller_of
from oryxtui.database import Database
from oryxtui.errors import DatabaseError
from oryxtui.workspace import Workspace
from tests.api_server import RunningApi

TOKEN = "t" * 32


def test_the_scrubber_takes_paths_out_and_leaves_urls() -> None:
    scrub = Scrubber(Path("/srv/team/.oryxos"))
    said = scrub(
        "Could not read /srv/team/.oryxos/agents/ops/MEMORY.md nor /etc/oryxtui/token; "
        "see http://127.0.0.1:8765/api/v1/agents."
    )
    assert said == (
        "Could not read .oryxos/agents/ops/MEMORY.md nor <path>; "
        "see http://127.0.0.1:8765/api/v1/agents."
    )


def test_answers_are_envelopes_and_a_store_failure_tells_nothing_of_the_store(
    caplog: pytest.LogCaptureFixture,
) -> None:
    answers = Answers(Scrubber(Path("/srv/x")))
    failed = answers.failure(409, "The entry changed in /srv/x/agents/a/MEMORY.md.")
    assert failed.status_code == 409
    assert b'"code":409' in failed.body and b".oryxos/agents/a/MEMORY.md" in failed.body
    with caplog.at_level(logging.WARNING, logger="oryxtui.api"):
        down = answers.unavailable(DatabaseError("db.internal:5432 user oryx refused"))
    assert down.status_code == 503 and b"db.internal" not in down.body
    assert "db.internal" in caplog.text and b"request id" in down.body


@pytest.fixture
def small_app(workspace: Workspace) -> tuple[FastAPI, KeyStore]:
    keys = KeyStore(Database(workspace.db_path))
    answers = Answers(Scrubber(workspace.root))
    app = FastAPI()
    app.middleware("http")(gathering_notices(answers.scrub))
    auth = Authenticator.at_start(keys, TOKEN, "127.0.0.1")
    app.middleware("http")(Authentication(auth, RateLimit(3), answers))
    install_error_handlers(app, answers)

    @app.get("/who")
    def who(caller: Annotated[Caller, Depends(caller_of)]) -> dict[str, str]:
        return {"actor": caller.actor, "scope": caller.scope.name}

    return app, keys


def test_who_is_asking_at_what_rate(
    small_app: tuple[FastAPI, KeyStore], workspace: Workspace
) -> None:
    app, keys = small_app
    key = keys.create("ci", Scope.READ, ("ops-*",))
    with RunningApi(workspace, app=app) as client:
        nobody = client.get("/who")
        assert nobody.status_code == 401 and nobody.json()["code"] == 401
        assert client.get("/who", headers={"Authorization": f"Bearer {TOKEN}"}).json() == {
            "actor": "api",
            "scope": "ADMIN",
        }
        bearer = {"Authorization": f"Bearer {key}"}
        assert client.get("/who", headers=bearer).json() == {"actor": "api:ci", "scope": "READ"}
        assert client.get("/who", headers=bearer).status_code == 200
        assert client.get("/who", headers=bearer).status_code == 200  # three a minute
        limited = client.get("/who", headers=bearer)  # the fourth this minute from the key
        assert limited.status_code == 429 and "key 'ci'" in limited.json()["message"]
        keys.revoke("ci")
        assert client.get("/who", headers=bearer).status_code == 401  # refused at once
        missing = client.get("/nowhere", headers={"Authorization": f"Bearer {TOKEN}"})
        assert missing.status_code == 404 and missing.json()["message"] == "No such endpoint."
