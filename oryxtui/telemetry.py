"""What operators see of the work done at the edges — REST and MCP requests, recalls, the one
door's answers, the loop's model and tool calls: observers a server plugs in (its Prometheus
metrics, `api.metrics`) and OpenTelemetry spans in the GenAI semantic conventions (the otel
extra, started by `start_tracing`).

Nothing here imports a metrics or tracing library, and the memory engine never calls it: the
edges do. With no observer and tracing off, a call checks a list and returns, so the
command line and the dashboard pay nothing. Content — queries, entries, prompts, answers —
goes into a span only when `capture_content` is set (`content()` says whether)."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sized
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar
from typing import Any, Protocol

log = logging.getLogger("oryxtui.telemetry")

# What a client sent may stand in a span only in this shape (see `token`).
_TOKEN = re.compile(r"[A-Za-z0-9_.:/-]{1,64}")
# Who made a change, as metrics and spans name it: a bounded set (the actor's own name — a
# key's, an MCP client's — never becomes a label).
ACTOR_KINDS = ("person", "agent", "mcp", "api", "outside")
# The GenAI conventions' memory operation of each memory tool (MCP's, the loop's), and the
# change it makes as the metrics count it (a search makes none).
MEMORY_TOOLS = {
    "save_memory": ("create_memory", "save"),
    "recall_memory": ("search_memory", None),
    "edit_memory": ("update_memory", "edit"),
    "replace_memory": ("update_memory", "replace"),
    "update_memory": ("update_memory", "replace"),  # oryxtui's own: a replacement
    "delete_memory": ("delete_memory", "delete"),
}
Attributes = Mapping[str, Any]


def actor_kind(actor: str) -> str:
    """The kind of a history actor: a person (the dashboard, the CLI), an agent, an MCP client,
    the REST API, or a writer outside oryxtui (a hand edit, OryxOS itself)."""
    head = actor.partition(":")[0]
    if head in ("dashboard", "cli"):
        return "person"
    return head if head in ("agent", "mcp", "api") else "outside"


class Found(Protocol):
    """What a recall answered, as the edges tell it (memory.recall's `Recall`)."""

    @property
    def mode(self) -> str: ...
    @property
    def semantic(self) -> str: ...  # used, failed, deferred, off
    @property
    def hits(self) -> Sized: ...
    @property
    def timings(self) -> Mapping[str, tuple[int, int]]: ...


class Observer(Protocol):
    """Told of what the edges did (the server's metrics)."""

    def recalled(
        self, found: Found, seconds: float, routes: Mapping[str, float], hits: int
    ) -> None:
        """A recall answered with `hits` entries; each route's own time."""

    def refused(self, op: str, actor: str) -> None:
        """A change by `actor` (a kind of ACTOR_KINDS) refused before anything was written."""


# Whom the work done here is told to: set by a server for each request it answers (the
# threads and tasks a request starts inherit it), so two servers in one process count apart.
_observer: ContextVar[Observer | None] = ContextVar("oryxtui_observer", default=None)


@contextmanager
def observing(observer: Observer | None) -> Iterator[None]:
    """`observer` is told of what the edges do in the block (and what it starts)."""
    token = _observer.set(observer)
    try:
        yield
    finally:
        _observer.reset(token)


def refused(op: str, actor: str) -> None:
    observer = _observer.get()
    if observer is not None:
        observer.refused(op, actor)


def searched(
    store: str | None, found: Found, started: float, model: str | None, hits: int | None = None
) -> None:
    """A recall that began at `started` (perf_counter) answered at an edge (REST, MCP, the
    loop's tool) with `hits` entries (default: its hits): its metrics, and in the current span
    (the memory operation's) a child per route and one for the embedder's call."""
    hits = len(found.hits) if hits is None else hits
    observer = _observer.get()
    if observer is not None:
        spent = {route: (end - start) / 1e9 for route, (start, end) in found.timings.items()}
        observer.recalled(found, time.perf_counter() - started, spent, hits)
    if _tracing is None:
        return
    note({"gen_ai.memory.search.result.count": hits, "oryxtui.recall.mode": found.mode})
    for route, (start, stop) in found.timings.items():
        if route == "embedding":
            attributes = {
                "gen_ai.operation.name": "embeddings",
                "gen_ai.request.model": model,
            }
            finished(f"embeddings {model or 'embedder'}", start, stop, attributes)
            continue
        attributes = {
            "gen_ai.operation.name": "retrieval",
            "gen_ai.data_source.id": store or "global",
            "oryxtui.recall.route": route,
        }
        finished(f"retrieval {route}", start, stop, attributes)


@contextmanager
def memory_operation(
    operation: str,
    store: str | None,
    actor: str,
    attributes: Attributes | None = None,
    change: str | None = None,
) -> Iterator[Any]:
    """A memory operation of the GenAI conventions (create_memory, update_memory,
    search_memory, delete_memory) on `store` (an agent's memory) by `actor` (a kind of
    ACTOR_KINDS): its span, and — for a `change` (save, edit, replace, delete) — a refusal
    (bad input, not allowed, stale) counted."""
    from oryxtui.errors import OryxError

    told = {
        "gen_ai.operation.name": operation,
        "gen_ai.memory.store.name": store or "global",
        "oryxtui.actor.kind": actor,
        **(attributes or {}),
    }
    with span(f"{operation} {store or 'global'}", told) as current:
        try:
            yield current
        except OryxError as exc:
            if exc.http_status < 500 and change is not None:
                refused(change, actor)
                if current is not None:
                    current.set_attribute("oryxtui.memory.outcome", "refused")
            raise


# Traces ---------------------------------------------------------------------------------------


class _Tracing:
    def __init__(self, tracer: Any, capture: bool) -> None:
        self.tracer = tracer
        self.capture = capture  # capture_content


_tracing: _Tracing | None = None
_NO_SPAN: AbstractContextManager[Any] = nullcontext(None)


def tracing() -> bool:
    return _tracing is not None


def content() -> bool:
    """Whether spans may hold content (queries, entries, prompts): `capture_content`."""
    return _tracing is not None and _tracing.capture


def span(
    name: str, attributes: Attributes | None = None, kind: str = "internal"
) -> AbstractContextManager[Any]:
    """A span around the block, the current one's child (None, and no cost, with tracing off).
    `kind`: internal, server or client. An exception ends it with an error status."""
    if _tracing is None:
        return _NO_SPAN
    return _current(_tracing.tracer, name, attributes, kind)


@contextmanager
def _current(tracer: Any, name: str, attributes: Attributes | None, kind: str) -> Iterator[Any]:
    from opentelemetry.trace import SpanKind

    with tracer.start_as_current_span(
        name,
        kind=SpanKind[kind.upper()],
        attributes=_clean(attributes),
        record_exception=False,  # its message may quote content: `failed` decides
        set_status_on_exception=False,
    ) as current:
        try:
            yield current
        except BaseException as exc:
            failed(current, type(exc).__name__, str(exc))
            raise


def finished(name: str, start_ns: int, end_ns: int, attributes: Attributes | None = None) -> None:
    """A child of the current span for work already done (a recall's route), at its times."""
    if _tracing is None:
        return
    child = _tracing.tracer.start_span(name, start_time=start_ns, attributes=_clean(attributes))
    child.end(end_time=end_ns)


def begin(name: str, attributes: Attributes | None = None) -> Any:
    """A span begun as the current one's child but not made current (work that yields between
    its steps, as the loop's turn does); `end` ends it. None with tracing off."""
    if _tracing is None:
        return None
    return _tracing.tracer.start_span(name, attributes=_clean(attributes))


def end(begun: Any, attributes: Attributes | None = None, error: str | None = None) -> None:
    if begun is None:
        return
    begun.set_attributes(_clean(attributes))
    if error is not None:
        failed(begun, "oryxtui_error", error)
    begun.end()


def failed(span: Any, kind: str, description: str) -> None:
    """`span` ended in failure: its status an error, `error.type` the kind of failure (the
    sentence, which may quote what it refused, only with capture_content)."""
    if span is None:
        return
    from opentelemetry.trace import Status, StatusCode

    span.set_status(Status(StatusCode.ERROR, description if content() else None))
    span.set_attribute("error.type", kind)


def within(begun: Any) -> AbstractContextManager[Any]:
    """`begun` (from `begin`) is the current span while the block runs (a block that does not
    yield: its children are made inside it)."""
    if begun is None:
        return _NO_SPAN
    from opentelemetry.trace import use_span

    return use_span(begun, end_on_exit=False)


def current_context() -> Any:
    """The trace context where the caller runs (None with tracing off): for work another task
    picks up (an MCP session's), resumed there by `resumed`."""
    if _tracing is None:
        return None
    from opentelemetry import context

    return context.get_current()


@contextmanager
def resumed(saved: Any) -> Iterator[None]:
    if saved is None or _tracing is None:
        yield
        return
    from opentelemetry import context

    token = context.attach(saved)
    try:
        yield
    finally:
        context.detach(token)


def note(attributes: Attributes) -> None:
    """Attributes added to the current span (what is known only once the work is done)."""
    if _tracing is None:
        return
    from opentelemetry import trace

    trace.get_current_span().set_attributes(_clean(attributes))


def continued(headers: Mapping[str, str]) -> AbstractContextManager[Any]:
    """The block runs in the trace the request's `traceparent` header names (W3C trace
    context), so an agent's trace goes on through its recall."""
    if _tracing is None or "traceparent" not in headers:
        return _NO_SPAN
    from opentelemetry.propagate import extract

    return resumed(extract(dict(headers)))


def token(text: object) -> str:
    """What a client sent (an entry's id, a JSON-RPC method) as a span may carry it: a short
    token of letters, digits and `-_.:/`, else `_OTHER` — never whatever (7,000 characters,
    a NUL) a client typed."""
    value = str(text)
    return value if _TOKEN.fullmatch(value) else "_OTHER"


def _clean(attributes: Attributes | None) -> dict[str, Any]:
    """Attributes a span can hold: None left out, anything else not a plain value as text."""
    if not attributes:
        return {}
    plain = (str, bool, int, float)
    return {
        key: value
        if isinstance(value, plain)
        or (isinstance(value, tuple) and all(isinstance(v, str) for v in value))
        else str(value)
        for key, value in attributes.items()
        if value is not None
    }


def start_tracing(
    endpoint: str, service_name: str, capture_content: bool, exporter: Any = None
) -> Callable[[], None]:
    """Spans from now on, exported by OTLP over HTTP to `endpoint` in batches (or to
    `exporter`, at once: the tests' in-memory one). Returns what stops it (the last spans
    sent first). Needs the otel extra."""
    global _tracing
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

    from oryxtui import __version__

    resource = Resource.create({"service.name": service_name, "service.version": __version__})
    provider = TracerProvider(resource=resource)
    if exporter is None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    else:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("oryxtui", __version__)

    def stop() -> None:
        global _tracing
        if _tracing is not None and _tracing.tracer is tracer:
            _tracing = None
        provider.shutdown()

    # (the global provider is left alone: a program that embeds oryxtui keeps its own)
    _tracing = _Tracing(tracer, capture_content)
    return stop
