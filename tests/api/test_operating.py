"""Operating the server (issue 47): `/metrics` scraped and parsed by Prometheus' own parser,
its counters moving after real requests, who may read it, its bounded series; `/healthz` and
`/readyz` as probes see them."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from oryxtui.api.app import create_api
from oryxtui.config import Settings
from oryxtui.workspace import Workspace
from tests.api_server import RunningApi
from tests.support import agents_with_notes, bearer, make_agent, make_key, until

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(client: httpx.Client, **headers: str) -> Samples:
    """Every sample of /metrics, as Prometheus' parser reads it, by name and labels."""
    answer = client.get("/metrics", headers=headers)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain; version=0.0.4")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(answer.text)
        for sample in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


@pytest.fixture
def ops(workspace: Workspace) -> Workspace:
    return agents_with_notes(workspace, "ops", "atlas")


@pytest.fixture
def server(ops: Workspace) -> Iterator[httpx.Client]:
    with RunningApi(ops) as client:
        yield client


def test_counters_move_after_real_requests(server: httpx.Client) -> None:
    before = scrape(server)
    saving = "/api/v1/agents/ops/memory"
    assert server.post(saving, json={"content": "deploys go out on Tuesdays"}).status_code == 200
    assert server.post(saving, json={"content": "x" * 20_000}).status_code == 400
    found = server.get("/api/v1/agents/ops/memory/recall", params={"keyword": "deploys"})
    assert found.status_code == 200 and found.json()["data"]["hits"]
    nothing = server.get("/api/v1/agents/ops/memory/recall", params={"keyword": "zzzz-no-such"})
    assert nothing.json()["data"]["hits"] == []
    assert server.get("/api/v1/agents/nobody-here/memory").status_code == 404

    # A save is counted once the change feed has told it (its history record read back).
    def saved() -> Samples | None:
        now = scrape(server)
        told = value(now, "oryxtui_memory_changes_total", op="save", actor="api", outcome="written")
        return now if told else None

    after = until(saved, timeout=15)
    route = "/api/v1/agents/{name}/memory/recall"
    assert (
        value(after, "oryxtui_http_requests_total", route=route, method="GET", status="200")
        == value(before, "oryxtui_http_requests_total", route=route, method="GET", status="200") + 2
    )
    assert value(after, "oryxtui_http_request_duration_seconds_count", route=route, method="GET")
    # the unknown agent: by its route's template, never its path
    assert not any("nobody-here" in str(labels) for _, labels in after)
    assert value(after, "oryxtui_recall_duration_seconds_count", mode="hybrid") == 2
    assert value(after, "oryxtui_recall_route_duration_seconds_count", route="lexical") == 2
    assert value(after, "oryxtui_recall_nothing_found_total", mode="hybrid") == 1
    assert value(after, "oryxtui_recall_hits_count") == 2
    assert value(after, "oryxtui_recall_hits_bucket", le="0.0") == 1
    assert (
        value(after, "oryxtui_memory_changes_total", op="save", actor="api", outcome="refused") == 1
    )
    assert value(after, "oryxtui_agents") == 2
    assert value(after, "oryxtui_review_waiting", agent="ops") == 0
    assert value(after, "oryxtui_up", part="database") == 1
    assert value(after, "oryxtui_up", part="watch") == 1
    assert value(after, "oryxtui_event_streams_open") == 0
    assert value(after, "process_resident_memory_bytes") > 0


def test_who_may_read_the_metrics_and_the_probes(ops: Workspace) -> None:
    with RunningApi(ops) as open_server:  # loopback, no key ever made: open
        assert open_server.get("/metrics").status_code == 200
    scraper = make_key(ops, "prometheus", "metrics")
    limited = make_key(ops, "ops-reader", "read", agents="ops")
    reader = make_key(ops, "reader", "read")
    with RunningApi(ops) as client:
        assert client.get("/metrics").status_code == 401  # a key exists: one is needed
        assert client.get("/metrics", headers=bearer(scraper)).status_code == 200
        assert client.get("/metrics", headers=bearer(reader)).status_code == 200
        refused = client.get("/metrics", headers=bearer(limited))
        assert refused.status_code == 403 and "every agent" in refused.json()["message"]
        assert "<path>" not in refused.json()["message"]
        # a metrics key reads nothing else
        for path in ("/api/v1/agents", "/api/v1/agents/ops/memory", "/api/v1/events"):
            answer = client.get(path, headers=bearer(scraper))
            assert answer.status_code == 403, path
            said = answer.json()["message"]
            assert "metrics scope" in said and "<path>" not in said  # (a sentence, whole)
        # probes: anyone, without detail; a key, with it
        assert client.get("/healthz").json() == {"status": "ok"}
        assert client.get("/readyz").json() == {"status": "ready"}
        detailed = client.get("/readyz", headers=bearer(scraper)).json()
        assert detailed["checks"] == {"database": True, "schema": True, "watch": True}
        # a wrong key on a probe is no caller (and no detail), not an error
        assert client.get("/readyz", headers=bearer("oryx_12345678_nope")).json() == {
            "status": "ready"
        }


def test_a_hundred_agents_scrape_fast_in_bounded_series(workspace: Workspace) -> None:
    for number in range(100):
        make_agent(workspace, f"agent-{number:03d}")
    settings = Settings.model_validate({"telemetry": {"metrics": {"max_agents": 20}}})
    with RunningApi(workspace, app=create_api(workspace, settings)) as client:
        samples = scrape(client)  # (the first reads every agent's figures)
        spent = []
        for _ in range(5):
            started = time.perf_counter()
            samples = scrape(client)
            spent.append(time.perf_counter() - started)
    agents = {dict(labels)["agent"] for name, labels in samples if name == "oryxtui_review_waiting"}
    assert len(agents) == 21 + 1  # the global memory, 20 by name, the rest as one
    assert "_others" in agents and "agent-099" not in agents
    assert value(samples, "oryxtui_review_waiting", agent="_others") == 0
    assert value(samples, "oryxtui_agents") == 100
    assert len(samples) < 2_000
    del spent  # (its figure is the benchmark's: tests assert no timings)


def test_metrics_can_be_turned_off(ops: Workspace) -> None:
    settings = Settings.model_validate({"telemetry": {"metrics": {"enabled": False}}})
    with RunningApi(ops, app=create_api(ops, settings)) as client:
        answer = client.get("/metrics")
        assert answer.status_code == 404 and "enabled = false" in answer.json()["message"]
        assert client.get("/healthz").status_code == 200


def test_readiness_against_a_stopped_database(workspace: Workspace) -> None:
    """Its own PostgreSQL (the tests' shared one stays up): ready while it runs; once it is
    stopped, /readyz says 503 — the reason only to a keyed caller — and /healthz still 200."""
    from oryxtui.config import DatabaseSettings
    from oryxtui.postgres import Postgres, close_shared
    from tests.postgres_server import postgres_server

    with postgres_server() as database:
        url = database.database()
        Postgres(DatabaseSettings(url=url)).upgrade()
        settings = Settings.model_validate(
            {
                "memory": {"backend": "database"},
                "database": {"url": url, "connect_timeout_seconds": 2},
            }
        )
        agents_with_notes(workspace, "ops")
        try:
            token = "a-token-of-the-server-0123456789"  # known without the database
            with RunningApi(workspace, app=create_api(workspace, settings, token)) as client:
                ready = client.get("/readyz", headers=bearer(token)).json()
                assert ready["status"] == "ready", ready
                assert ready["checks"]["listen"] is True
                database.kill()

                def unready() -> httpx.Response | None:
                    answer = client.get("/readyz", headers=bearer(token))
                    return answer if answer.status_code == 503 else None

                answer = until(unready, timeout=15)
                assert client.get("/readyz").json() == {"status": "not ready"}  # no key: no why
                told = answer.json()
                assert told["checks"]["database"] is False and told["checks"]["schema"] is False
                assert any("cannot be reached" in problem for problem in told["problems"])
                assert url not in answer.text and "postgres" not in answer.text.lower()
                assert client.get("/healthz").status_code == 200
                samples = scrape(client, **bearer(token))
                assert value(samples, "oryxtui_up", part="database") == 0
        finally:
            close_shared()


def test_the_grafana_dashboard_and_the_scrape_example_use_only_metrics_served(
    workspace: Workspace, database_url: str
) -> None:
    """deploy/'s dashboard and alert examples cannot drift from the metrics: every name in
    their queries is among the samples of a server with everything on (a shared database and
    its pool, an embedder, MCP)."""
    import json
    from pathlib import Path

    from oryxtui.mcp.http import serve_mcp

    deploy = Path(__file__).parents[2] / "deploy"
    settings = Settings.model_validate(
        {
            "memory": {"backend": "database"},
            "database": {"url": database_url},
            "embedding": {"provider": "mock"},
        }
    )
    api = create_api(agents_with_notes(workspace, "ops"), settings)
    serve_mcp(api)
    with RunningApi(workspace, app=api) as client:
        client.get("/api/v1/agents/ops/memory/recall", params={"keyword": "ops"})
        client.post("/api/v1/agents/ops/memory", json={"content": "x" * 3000})
        samples = scrape(client)
    served = {name for name, _ in samples}
    dashboard = json.loads((deploy / "grafana-dashboard.json").read_text())
    queries = [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]
    queries.append(dashboard["templating"]["list"][1]["query"])
    queries.append((deploy / "prometheus.yml").read_text())
    used = {name for query in queries for name in re.findall(r"\b(?:oryxtui|process)_\w+", query)}
    assert len(used) > 15
    assert used <= served, used - served
    page = (deploy.parent / "docs" / "operating.md").read_text()
    families = {re.sub(r"_(total|bucket|count|sum|info)$", "", n) for n in served}
    undocumented = {
        n
        for n in families
        if n.startswith("oryxtui_") and f"`{n}`" not in page and f"`{n}_total`" not in page
    }
    assert not undocumented, undocumented  # the operating page lists every metric


def test_recalls_the_embedder_failed_are_counted(ops: Workspace) -> None:
    """An embedder that answers what is no embedding: recall still answers (by words and
    time), and the metrics say recall by meaning failed — what an operator alerts on."""
    from tests.llm_server import ScriptedLLM

    with ScriptedLLM([], embedding_answer=lambda _: b"not an embedding") as embedder:
        settings = Settings.model_validate(
            {"embedding": {"provider": "openai", "base_url": embedder.base_url, "model": "e"}}
        )
        with RunningApi(ops, app=create_api(ops, settings)) as client:
            found = client.get("/api/v1/agents/ops/memory/recall", params={"keyword": "ops"})
            assert found.json()["data"]["semantic"] == "failed"
            assert found.json()["data"]["hits"]
            samples = scrape(client)
    assert value(samples, "oryxtui_recall_semantic_failed_total") == 1
    assert value(samples, "oryxtui_recall_duration_seconds_count", mode="hybrid") == 1
