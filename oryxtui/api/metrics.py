"""The server's metrics in Prometheus' text format (its official client), served by `scrape`.

Every label comes from a bounded set — a route's template (never its path), a method, a
status, a recall mode or route, a change's op, the kind of actor and the outcome — and the
per-agent series name at most `[telemetry.metrics] max_agents` agents (the rest are summed as
`_others`). No entry text, query, key or actor name is ever a label or a value.

Counters move as the work is done; the figures per agent (the review queue, the index) are
read at a scrape, but only for the agents the change feed said changed since the last one."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Histogram,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily, InfoMetricFamily, Metric
from prometheus_client.gc_collector import GCCollector
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import Collector

from oryxtui import __version__, telemetry
from oryxtui.errors import OryxError
from oryxtui.memory.events import AgentsChange, Event, IndexProgress, MemoryChange, Reset
from oryxtui.workspace import GLOBAL_AGENT

if TYPE_CHECKING:
    from oryxtui.api.events import EventLog
    from oryxtui.api.health import Health
    from oryxtui.config import Settings
    from oryxtui.memory.service import MemoryService
    from oryxtui.places import Here

log = logging.getLogger("oryxtui.api")
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
OTHERS = "_others"  # the agents past the cap, summed
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
HIT_BUCKETS = (0, 1, 2, 3, 5, 10, 20, 50)
disable_created_metrics()  # no `_created` series: half as many, and Prometheus needs none


class ServerMetrics:
    """The server's instruments, in a registry of its own (two servers in one process, as the
    tests run them, count apart). Told of recalls and refusals by `telemetry` (it is an
    observer), and of every recorded change by the event log."""

    def __init__(
        self,
        memory: MemoryService,
        place: Here,
        health: Health,
        max_agents: int,
        streams_open: Callable[[], int],
    ) -> None:
        self.registry = registry = CollectorRegistry()
        ProcessCollector(registry=registry)
        PlatformCollector(registry=registry)
        GCCollector(registry=registry)
        self._count_requests(registry)
        self._count_recalls(registry)
        self.changes = Counter(
            "oryxtui_memory_changes",
            "Changes to memory by op (save, edit, move, delete, replace…), the kind of actor "
            "(person, agent, mcp, api, outside) and outcome (written, held, refused).",
            ["op", "actor", "outcome"],
            registry=registry,
        )
        self.agents = AgentFigures(memory, place, max_agents)
        self.mcp_sessions: Callable[[], int] | None = None  # set by /mcp when it is served
        registry.register(_Gauges(self, health, streams_open))

    def _count_requests(self, registry: CollectorRegistry) -> None:
        self.requests = Counter(
            "oryxtui_http_requests",
            "HTTP requests answered, by route template, method and status.",
            ["route", "method", "status"],
            registry=registry,
        )
        self.latency = Histogram(
            "oryxtui_http_request_duration_seconds",
            "Time to answer an HTTP request (an event stream: how long it was open).",
            ["route", "method"],
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )

    def _count_recalls(self, registry: CollectorRegistry) -> None:
        self.recall_seconds = Histogram(
            "oryxtui_recall_duration_seconds",
            "Time a recall took, by mode (hybrid, keyword, delegated).",
            ["mode"],
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.route_seconds = Histogram(
            "oryxtui_recall_route_duration_seconds",
            "Time each route of a ranked recall took (lexical, semantic, keyword; embedding: "
            "the embedder's call for the query).",
            ["route"],
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.hits = Histogram(
            "oryxtui_recall_hits",
            "Entries a recall returned.",
            buckets=HIT_BUCKETS,
            registry=registry,
        )
        self.nothing = Counter(
            "oryxtui_recall_nothing_found",
            "Recalls that found nothing, by mode.",
            ["mode"],
            registry=registry,
        )
        self.semantic_failed = Counter(
            "oryxtui_recall_semantic_failed",
            "Recalls whose semantic route failed (the embedder did not answer): they were "
            "answered by words and time.",
            registry=registry,
        )

    @classmethod
    def serving(
        cls,
        settings: Settings,
        memory: MemoryService,
        place: Here,
        health: Health,
        streams_open: Callable[[], int],
        events: EventLog,
    ) -> ServerMetrics | None:
        """The metrics of a server, told of every event its log publishes (None when
        `[telemetry.metrics] enabled = false`)."""
        configured = settings.telemetry.metrics
        if not configured.enabled:
            return None
        metrics = cls(memory, place, health, configured.max_agents, streams_open)
        events.listeners.append(metrics.told)
        return metrics

    # Told of the work -------------------------------------------------------------------------

    def recalled(
        self, found: telemetry.Found, seconds: float, routes: Mapping[str, float], hits: int
    ) -> None:
        self.recall_seconds.labels(found.mode).observe(seconds)
        for route, spent in routes.items():
            self.route_seconds.labels(route).observe(spent)
        self.hits.observe(hits)
        if not hits:
            self.nothing.labels(found.mode).inc()
        if found.semantic == "failed":
            self.semantic_failed.inc()

    def refused(self, op: str, actor: str) -> None:
        self.changes.labels(op, actor, "refused").inc()

    def told(self, event: Event) -> None:
        """An event the log publishes: a recorded change is counted; the agent's figures are
        read again at the next scrape."""
        match event:
            case MemoryChange(agent, record) if record is not None:
                held = record.op == "hold"
                op = (record.proposes or "save") if held else record.op
                kind = telemetry.actor_kind(record.actor)
                self.changes.labels(op, kind, "held" if held else "written").inc()
                self.agents.changed(agent)
            case MemoryChange(agent) | IndexProgress(agent):
                self.agents.changed(agent)
            case Reset() | AgentsChange():
                self.agents.changed_all()

    def request(self, route: str, method: str, status: int, seconds: float) -> None:
        self.requests.labels(route, method, str(status)).inc()
        self.latency.labels(route, method).observe(seconds)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)


class AgentFigures:
    """Each agent's review queue and index, read again only after the feed said it changed."""

    def __init__(self, memory: MemoryService, place: Here, max_agents: int) -> None:
        self.memory = memory
        self.place = place
        self.max_agents = max_agents
        self._figures: dict[str | None, tuple[int | None, int | None, int | None]] = {}
        self._stale: set[str | None] = set()
        self._all_stale = True
        self._lock = threading.Lock()

    def changed(self, agent: str | None) -> None:
        with self._lock:
            self._stale.add(agent)

    def changed_all(self) -> None:
        with self._lock:
            self._all_stale = True

    def read(self) -> tuple[int, dict[str, tuple[int | None, int | None, int | None]]]:
        """How many agents there are, and the figures by label: the first `max_agents` by
        name, then `_others` summed."""
        agents: list[str | None] = [None, *self.place.known_agents()]
        known = set(agents)
        with self._lock:
            stale = known if self._all_stale else self._stale & known
            self._all_stale, self._stale = False, set()
            self._figures = {a: f for a, f in self._figures.items() if a in known}
        for agent in agents:
            if agent in stale or agent not in self._figures:
                self._figures[agent] = self._read(agent)
        labelled: dict[str, tuple[int | None, int | None, int | None]] = {}
        for number, agent in enumerate(agents):
            figures = self._figures[agent]
            if number <= self.max_agents:  # (the global memory is not counted in the cap)
                labelled[GLOBAL_AGENT if agent is None else agent] = figures
                continue
            summed = labelled.get(OTHERS, (None, None, None))
            labelled[OTHERS] = tuple(_add(a, b) for a, b in zip(summed, figures, strict=True))  # type: ignore[assignment]
        return len(agents) - 1, labelled

    def _read(self, agent: str | None) -> tuple[int | None, int | None, int | None]:
        """(awaiting review, entries, waiting to be embedded); None where not known."""
        review = entries = pending = None
        with contextlib.suppress(OryxError):  # no history (mem0), or unreadable now: no figure
            review = len(self.memory.awaiting_review(agent))
        with contextlib.suppress(OryxError):
            status = self.memory.index_status(agent)
            if status is not None:
                entries, pending = status.entries, status.pending
        return review, entries, pending


def _add(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else a + b


class _Gauges(Collector):
    """What is read at a scrape: the agents' figures, open streams and sessions, and the
    health of the database, its listener, the watch and the index keeper."""

    def __init__(
        self, metrics: ServerMetrics, health: Health, streams_open: Callable[[], int]
    ) -> None:
        self.metrics = metrics
        self.health = health
        self.streams_open = streams_open

    def collect(self) -> Iterator[Metric]:
        info = InfoMetricFamily("oryxtui", "The server's version and memory backend.")
        info.add_metric([], {"version": __version__, "backend": self.metrics.agents.memory.backend})
        yield info
        try:
            count, figures = self.metrics.agents.read()
        except OryxError as exc:  # the agents cannot be listed now: the rest is still told
            log.warning("metrics: the agents could not be read: %s", exc)
            count, figures = 0, {}
        yield _gauge("oryxtui_agents", "Agents this server serves.", count)
        for name, help_text, column in (
            ("oryxtui_review_waiting", "Changes awaiting a person's review, per agent.", 0),
            ("oryxtui_index_entries", "Archival entries recall indexes, per agent.", 1),
            ("oryxtui_index_pending", "Entries waiting to be embedded, per agent.", 2),
        ):
            family = GaugeMetricFamily(name, help_text, labels=["agent"])
            for agent, values in figures.items():
                value = values[column]
                if value is not None:
                    family.add_metric([agent], value)
            yield family
        yield _gauge("oryxtui_event_streams_open", "Event streams open.", self.streams_open())
        sessions = self.metrics.mcp_sessions
        if sessions is not None:
            yield _gauge("oryxtui_mcp_sessions_open", "MCP sessions open.", sessions())
        checks = self.health.checks()
        family = GaugeMetricFamily(
            "oryxtui_up",
            "1 when a part of the server works: database, schema, watch, index_keeper, listen.",
            labels=["part"],
        )
        for check in checks:
            family.add_metric([check.part], 1 if check.ok else 0)
        yield family
        pool = self.health.pool()
        if pool is not None:
            for name, help_text, key in (
                ("oryxtui_database_pool_connections", "Connections the pool holds.", "pool_size"),
                ("oryxtui_database_pool_idle", "Of them, idle.", "pool_available"),
                ("oryxtui_database_pool_max", "The most the pool may hold.", "pool_max"),
                (
                    "oryxtui_database_pool_waiting",
                    "Requests waiting for a connection.",
                    "requests_waiting",
                ),
            ):
                yield _gauge(name, help_text, pool.get(key, 0))


def _gauge(name: str, help_text: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, help_text, value=value)
