"""Traces of the server (issue 47) in OpenTelemetry's GenAI conventions, caught by the SDK's
in-memory exporter from a real server on 127.0.0.1: a recall (a child per route, the
embedder's call), a save, a held MCP save, a chat turn with a tool call; the caller's trace
continued; content only with capture_content."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import mcp_types as types
import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from oryxtui import telemetry
from oryxtui.api.app import create_api
from oryxtui.config import Settings
from oryxtui.mcp.http import serve_mcp
from oryxtui.workspace import Workspace
from tests.api_server import RunningApi
from tests.llm_server import ScriptedLLM
from tests.mcp_support import http_session
from tests.support import agents_with_notes

NOTE = "the staging deploy runs at noon"
ASKED = "when does staging deploy"


@pytest.fixture
def exported() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    stop = telemetry.start_tracing("unused", "oryxtui-test", False, exporter)
    yield exporter
    stop()


@pytest.fixture
def model() -> Iterator[ScriptedLLM]:
    script = [
        {
            "tool_calls": [("save_memory", {"content": "the user prefers short answers"})],
            "usage": [412, 17],
        },
        {"text": "Noted."},
    ]
    with ScriptedLLM(script, repeat_last=True) as llm:
        yield llm


def serving(workspace: Workspace, llm: ScriptedLLM, **more: Any) -> RunningApi:
    settings = Settings.model_validate(
        {
            "llm": {"provider": "openai", "base_url": llm.base_url, "model": "scripted-1"},
            "embedding": {"provider": "openai", "base_url": llm.base_url, "model": "concepts"},
            **more,
        }
    )
    api = create_api(agents_with_notes(workspace, "ops"), settings)
    serve_mcp(api)
    return RunningApi(workspace, app=api)


def named(spans: tuple[ReadableSpan, ...], name: str) -> ReadableSpan:
    found = [span for span in spans if span.name == name]
    assert found, f"no span {name!r} among {sorted({s.name for s in spans})}"
    return found[-1]


def children(spans: tuple[ReadableSpan, ...], parent: ReadableSpan) -> set[str]:
    assert parent.context is not None
    return {
        span.name
        for span in spans
        if span.parent is not None and span.parent.span_id == parent.context.span_id
    }


def test_a_recall_and_a_save_in_the_genai_conventions(
    workspace: Workspace, model: ScriptedLLM, exported: InMemorySpanExporter
) -> None:
    caller_trace = "4bf92f3577b34da6a3ce929d0e0e4736"
    with serving(workspace, model) as client:
        saved = client.post("/api/v1/agents/ops/memory", json={"content": NOTE})
        assert saved.status_code == 200
        parent = {"traceparent": f"00-{caller_trace}-00f067aa0ba902b7-01"}
        found = client.get(
            "/api/v1/agents/ops/memory/recall", params={"keyword": ASKED}, headers=parent
        )
        assert found.status_code == 200
    spans = exported.get_finished_spans()

    save = named(spans, "create_memory ops")
    assert save.attributes is not None
    assert save.attributes["gen_ai.operation.name"] == "create_memory"
    assert save.attributes["gen_ai.memory.store.name"] == "ops"
    assert save.attributes["oryxtui.memory.outcome"] == "written"
    assert save.attributes["oryxtui.actor.kind"] == "api"
    assert save.attributes["gen_ai.memory.id"] == saved.json()["data"]["id"]
    assert "gen_ai.memory.content" not in save.attributes  # content only when asked for

    server = named(spans, "GET /api/v1/agents/{name}/memory/recall")
    assert server.kind.name == "SERVER" and server.attributes is not None
    assert server.attributes["http.response.status_code"] == 200
    assert server.context is not None and f"{server.context.trace_id:032x}" == caller_trace
    assert server.parent is not None and f"{server.parent.span_id:016x}" == "00f067aa0ba902b7"
    search = named(spans, "search_memory ops")
    assert search.parent is not None and search.parent.span_id == server.context.span_id
    assert search.attributes is not None
    assert search.attributes["gen_ai.operation.name"] == "search_memory"
    assert search.attributes["gen_ai.memory.search.result.count"] >= 1
    assert "gen_ai.memory.query.text" not in search.attributes
    assert {"retrieval keyword", "retrieval lexical", "retrieval semantic"} <= children(
        spans, search
    )
    embedding = named(spans, "embeddings concepts")
    assert embedding.attributes is not None
    assert embedding.attributes["gen_ai.operation.name"] == "embeddings"
    route = named(spans, "retrieval semantic")
    assert route.attributes is not None and route.attributes["gen_ai.operation.name"] == "retrieval"
    every = json.dumps([dict(span.attributes or {}) for span in spans], ensure_ascii=False)
    assert NOTE not in every and ASKED not in every


def test_content_goes_into_spans_only_when_asked(workspace: Workspace, model: ScriptedLLM) -> None:
    exporter = InMemorySpanExporter()
    stop = telemetry.start_tracing("unused", "oryxtui-test", True, exporter)
    try:
        with serving(workspace, model) as client:
            client.post("/api/v1/agents/ops/memory", json={"content": NOTE})
            client.get("/api/v1/agents/ops/memory/recall", params={"keyword": ASKED})
    finally:
        stop()
    spans = exporter.get_finished_spans()
    save, search = named(spans, "create_memory ops"), named(spans, "search_memory ops")
    assert save.attributes is not None and NOTE in str(save.attributes["gen_ai.memory.content"])
    assert search.attributes is not None
    assert search.attributes["gen_ai.memory.query.text"] == ASKED


async def test_a_held_mcp_save_and_a_chat_turn(
    workspace: Workspace, model: ScriptedLLM, exported: InMemorySpanExporter
) -> None:
    client_info = types.Implementation(name="Claude Code", version="2.1")
    with serving(workspace, model) as client:
        async with http_session(str(client.base_url), None, "ops", client_info) as mcp:
            result = await mcp.call_tool("save_memory", {"content": "deploys freeze on Fridays"})
            assert not result.is_error
            odd = await mcp.call_tool("the vault code is 31-07-19", {})
            assert odd.is_error
        turn = client.post("/api/v1/agents/ops/chat", json={"message": "keep it short"})
        assert turn.status_code == 200 and '"final"' in turn.text
        reviewed = client.post("/api/v1/agents/ops/memory/review", json={"approve": "all"})
        assert reviewed.status_code == 200 and reviewed.json()["data"]["approved"]
    spans = exported.get_finished_spans()
    assert named(spans, "tools/call unknown")  # a name a client made up is not a span's name
    assert "31-07-19" not in json.dumps([s.name for s in spans])
    review = named(spans, "review_memory ops")
    assert review.attributes is not None and review.attributes["oryxtui.review.approve"] == "all"
    methods = {
        (s.attributes or {}).get("mcp.method.name")
        for s in spans
        if s.name == "POST /mcp/agents/{agent}"
    }
    assert {"initialize", "tools/call"} <= methods

    call = named(spans, "tools/call save_memory")
    assert call.kind.name == "SERVER" and call.attributes is not None
    assert call.attributes["mcp.method.name"] == "tools/call"
    assert call.attributes["gen_ai.tool.name"] == "save_memory"
    assert call.attributes["mcp.session.id"]
    posts = {  # the HTTP requests; the call's span continues the one that brought it
        s.context.span_id for s in spans if s.name == "POST /mcp/agents/{agent}" and s.context
    }
    assert call.parent is not None and call.parent.span_id in posts
    assert call.context is not None
    tool = next(
        s
        for s in spans
        if s.name == "execute_tool save_memory"
        and s.parent is not None
        and s.parent.span_id == call.context.span_id
    )
    held = next(
        s
        for s in spans
        if s.name == "create_memory ops"
        and s.parent is not None
        and tool.context is not None
        and s.parent.span_id == tool.context.span_id
    )
    assert held.attributes is not None
    assert held.attributes["oryxtui.memory.outcome"] == "held"  # [mcp] hold, the default
    assert held.attributes["oryxtui.actor.kind"] == "mcp"

    agent = named(spans, "invoke_agent ops")
    assert agent.attributes is not None
    assert agent.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert str(agent.attributes["gen_ai.conversation.id"]).endswith(":ops")
    inner = children(spans, agent)
    assert "chat scripted-1" in inner and "execute_tool save_memory" in inner
    chat = named(spans, "chat scripted-1")
    assert chat.attributes is not None
    assert chat.attributes["gen_ai.provider.name"] == "openai"
    assert chat.attributes["gen_ai.request.model"] == "scripted-1"
    assert "gen_ai.input.messages" not in chat.attributes
    first = min((s for s in spans if s.name == "chat scripted-1"), key=lambda s: s.start_time or 0)
    assert first.attributes is not None  # the tokens the server reported
    assert first.attributes["gen_ai.usage.input_tokens"] == 412
    assert first.attributes["gen_ai.usage.output_tokens"] == 17
    saved = [
        s
        for s in spans
        if s.name == "create_memory ops"
        and s.attributes is not None
        and s.attributes["oryxtui.actor.kind"] == "agent"
    ]
    assert saved and saved[0].attributes is not None
    assert saved[0].attributes["oryxtui.memory.outcome"] == "written"
