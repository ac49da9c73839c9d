"""The real `oryxtui serve` operated as a service (issue 47): traces sent by OTLP over HTTP to a
real receiver on 127.0.0.1, logs as JSON lines, metrics scraped with a `metrics` key — and no
key, token, entry or query in any metric, span or log line."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler
from typing import Any

import anyio
import mcp_types as types
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from oryxtui.workspace import Workspace
from tests.llm_server import ScriptedLLM
from tests.local_http import LocalHttpServer
from tests.mcp_support import http_session
from tests.serve_process import ServeProcess
from tests.support import agents_with_notes, bearer, make_key, until

pytestmark = pytest.mark.system
TOKEN = "the-servers-own-token-4f9a2c81d7"
SECRET_NOTE = "the vault combination is 31-07-19"
SECRET_QUESTION = "vault combination"


class OtlpReceiver(LocalHttpServer):
    """An OTLP/HTTP traces endpoint: every span received, with its resource's attributes."""

    url_suffix = "/v1/traces"

    def __init__(self) -> None:
        self.spans: list[dict[str, Any]] = []
        self.raw: list[bytes] = []
        self.lock = threading.Lock()
        super().__init__()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: object) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                with receiver.lock:
                    receiver.raw.append(body)
                    for resource in request.resource_spans:
                        service = {
                            a.key: a.value.string_value for a in resource.resource.attributes
                        }
                        for scope in resource.scope_spans:
                            for span in scope.spans:
                                receiver.spans.append(
                                    {
                                        "name": span.name,
                                        "service": service.get("service.name"),
                                        "attributes": {
                                            a.key: _value(a.value) for a in span.attributes
                                        },
                                    }
                                )
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

        return Handler

    def named(self, name: str) -> list[dict[str, Any]]:
        with self.lock:
            return [span for span in self.spans if span["name"] == name]


def _value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    return getattr(value, kind) if kind else None


async def _held_save(url: str, key: str) -> None:
    """An MCP client's save, held for review ([mcp] hold, the default)."""
    client_info = types.Implementation(name="Cursor", version="1")
    async with http_session(url, key, "ops", client_info) as client:
        result = await client.call_tool("save_memory", {"content": SECRET_NOTE + " too"})
        assert not result.is_error and '"held": true' in result.content[0].text  # type: ignore[union-attr]


def test_traces_logs_and_metrics_of_a_real_server_and_no_secret_in_them(
    workspace: Workspace,
) -> None:
    agents_with_notes(workspace, "ops")
    admin = make_key(workspace, "admin", "admin")
    scraper = make_key(workspace, "prometheus", "metrics")
    script = [{"tool_calls": [("recall_memory", {"keyword": "deploys"})]}, {"text": "Fine."}]
    with OtlpReceiver() as receiver, ScriptedLLM(script, repeat_last=True) as llm:
        workspace.config_path.write_text(
            "[telemetry.tracing]\nenabled = true\n"
            f'endpoint = "{receiver.base_url.replace("http://", "http://otel:s3cret-pass@")}"\n'
            'service_name = "memory-eu"\n'
            f'[llm]\nprovider = "openai"\nbase_url = "{llm.base_url}"\nmodel = "scripted-1"\n'
        )
        env = {"ORYXTUI_API_TOKEN": TOKEN, "OTEL_BSP_SCHEDULE_DELAY": "100"}
        with ServeProcess(workspace.root, "--log-format", "json", env=env) as server:
            with server.client(**bearer(admin)) as client:
                saved = client.post("/api/v1/agents/ops/memory", json={"content": SECRET_NOTE})
                assert saved.status_code == 200, saved.text
                found = client.get(
                    "/api/v1/agents/ops/memory/recall", params={"keyword": SECRET_QUESTION}
                )
                assert found.json()["data"]["hits"]
                assert (
                    client.get(
                        "/api/v1/agents/ops/memory/recall", params={"keyword": "zzzz-no-such"}
                    ).status_code
                    == 200
                )
                turn = client.post("/api/v1/agents/ops/chat", json={"message": "any deploys?"})
                assert '"final"' in turn.text
            anyio.run(_held_save, server.url, admin)
            with server.client(**bearer(TOKEN)) as client:
                assert client.get("/api/v1/agents").status_code == 200
            with server.client(**bearer(scraper)) as client:
                metrics = until(
                    lambda: (
                        (m := client.get("/metrics").text)
                        and 'oryxtui_memory_changes_total{actor="api",op="save",outcome="written"}'
                        in m
                        and m
                    )
                )
                assert client.get("/api/v1/agents").status_code == 403
            search = until(lambda: receiver.named("search_memory ops"))[0]
            until(lambda: len(receiver.named("create_memory ops")) == 2)
            until(lambda: receiver.named("tools/call save_memory"))
            agent = until(lambda: receiver.named("invoke_agent ops"))[0]
        log = server.process.stderr.read().decode()

    assert search["service"] == "memory-eu"
    assert search["attributes"]["gen_ai.operation.name"] == "search_memory"
    assert search["attributes"]["gen_ai.memory.store.name"] == "ops"
    assert receiver.named("retrieval lexical")
    assert receiver.named("GET /api/v1/agents/{name}/memory/recall")
    outcomes = {
        span["attributes"]["oryxtui.memory.outcome"]: span["attributes"]
        for span in receiver.named("create_memory ops")
    }
    assert outcomes["held"]["oryxtui.actor.kind"] == "mcp"
    assert outcomes["written"]["oryxtui.actor.kind"] == "api"
    assert agent["attributes"]["gen_ai.operation.name"] == "invoke_agent"
    chat = receiver.named("chat scripted-1")[0]
    assert chat["attributes"]["gen_ai.request.model"] == "scripted-1"
    assert receiver.named("execute_tool recall_memory")

    lines = [json.loads(line) for line in log.splitlines() if line.strip()]
    requests = [line for line in lines if line["event"] == "request"]
    assert {"time", "level", "event", "route", "method", "status", "duration_ms", "actor"} <= set(
        requests[0]
    )
    assert any(
        r["route"] == "/api/v1/agents/{name}/memory/recall" and r["status"] == 200 for r in requests
    )
    assert any(r["route"] == "/metrics" for r in requests)

    spans = b"".join(receiver.raw)
    assert "OTLP to http://otel:***@127.0.0.1" in log  # the banner, its password masked
    for secret in (admin, scraper, TOKEN, SECRET_NOTE, SECRET_QUESTION, "31-07-19", "s3cret"):
        assert secret not in metrics, secret
        assert secret.encode() not in spans, secret
        assert secret not in log, secret
    key_secret = admin.split("_", 2)[2]  # even the secret part alone
    assert key_secret not in log and key_secret.encode() not in spans


def test_the_plain_log_format_is_unchanged(workspace: Workspace) -> None:
    """Without --log-format json: the banner as before, no line per request."""
    agents_with_notes(workspace, "ops")
    with ServeProcess(workspace.root) as server, server.client() as client:
        assert client.get("/api/v1/agents/ops/memory").status_code == 200
        assert client.get("/healthz").status_code == 200
    log = server.process.stderr.read().decode()
    assert log.startswith(f"Serving {workspace.root} on http://127.0.0.1:")
    assert "/api/v1/agents/ops/memory" not in log and "{" not in log
