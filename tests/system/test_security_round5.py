"""Security round 5 (issue 57) on the real `oryxtui serve`, its traces sent by OTLP over HTTP
to a real receiver on 127.0.0.1 and its log as JSON lines: what a client sends (a made-up or
60,000-character method, a 7,000-character id with a NUL) reaches neither a span nor a log line
as sent, no log line passes 4 KB, and a refusal is logged with its route's template and the
kind of caller it came from."""

from __future__ import annotations

import contextlib
import json

import httpx
import pytest

from oryxtui.api.logs import MAX_LINE_BYTES
from oryxtui.workspace import Workspace
from tests.serve_process import ServeProcess
from tests.support import agents_with_notes, bearer, make_key, until
from tests.system.test_operating import OtlpReceiver

pytestmark = pytest.mark.system
KNOWN = {"GET", "POST", "PATCH", "PUT", "DELETE", "HEAD", "OPTIONS", "CONNECT", "TRACE", "_OTHER"}


def test_what_a_client_sends_is_bounded_in_logs_and_spans(workspace: Workspace) -> None:
    agents_with_notes(workspace, "ops")
    admin = make_key(workspace, "admin", "admin")
    scraper = make_key(workspace, "prometheus", "metrics")
    long_method = "X" * 60_000
    long_id = "a" * 7_000 + "%00b"
    with OtlpReceiver() as receiver:
        workspace.config_path.write_text(
            f'[telemetry.tracing]\nenabled = true\nendpoint = "{receiver.base_url}"\n'
        )
        env = {"OTEL_BSP_SCHEDULE_DELAY": "100"}
        with ServeProcess(workspace.root, "--log-format", "json", env=env) as server:
            with server.client(**bearer(admin)) as client:
                client.request("FROBNICATE", "/api/v1/agents/ops/memory")
                with contextlib.suppress(httpx.HTTPError):  # the server may hang up on it
                    client.request(long_method, "/api/v1/agents/ops/memory")
                gone = client.delete(f"/api/v1/agents/ops/memory/entries/{long_id}")
                assert gone.status_code == 409 and len(gone.text) < 1000, gone.text[:200]
                assert client.get("/api/v1/agents/ops/memory").status_code == 200
            with server.client() as nobody:
                assert nobody.get("/api/v1/agents/ops/memory/replaced").status_code == 401
            with server.client(**bearer(scraper)) as client:
                assert client.get("/api/v1/agents/ops/memory/entries").status_code == 403
            until(lambda: receiver.named("GET /api/v1/agents/{name}/memory"))
            until(lambda: receiver.named("delete_memory ops"))
        log = server.process.stderr.read()

    assert all(len(line) <= MAX_LINE_BYTES for line in log.splitlines())
    lines = [json.loads(line) for line in log.decode().splitlines() if line.strip()]
    requests = [line for line in lines if line["event"] == "request"]
    assert {r["method"] for r in requests} <= KNOWN
    assert any(r["method"] == "_OTHER" for r in requests)
    assert "FROBNICATE" not in log.decode() and long_method not in log.decode()
    refused = {(r["route"], r["status"]): r["actor"] for r in requests if r["status"] in (401, 403)}
    assert refused[("/api/v1/agents/{name}/memory/replaced", 401)] == "anonymous"
    assert refused[("/api/v1/agents/{name}/memory/entries", 403)] == "api"

    names = {span["name"] for span in receiver.spans}
    assert not any("FROBNICATE" in name or "XXXX" in name for name in names), names
    assert any(name.startswith("_OTHER ") for name in names)
    ids = [
        span["attributes"]["gen_ai.memory.id"]
        for span in receiver.spans
        if "gen_ai.memory.id" in span["attributes"]
    ]
    assert ids and all(len(i) <= 64 and "\x00" not in i for i in ids)
    for span in receiver.spans:
        for value in span["attributes"].values():
            assert "a" * 100 not in str(value)
