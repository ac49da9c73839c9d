"""`GET /metrics`: the server's metrics (see `metrics`), scraped by Prometheus."""

from __future__ import annotations

import anyio.to_thread
from fastapi import APIRouter, Request
from fastapi.responses import Response

from oryxtui.api.metrics import CONTENT_TYPE
from oryxtui.api.state import caller_of, state_of
from oryxtui.errors import Forbidden, NotFound

router = APIRouter(include_in_schema=False)


@router.get("/metrics")
async def metrics(request: Request) -> Response:
    """The server's metrics, for a key that reaches every agent (the `metrics` scope is
    enough), the server's token, or anyone on an open loopback server."""
    caller = caller_of(request)
    if caller.agents is not None:
        raise Forbidden(
            f"The key {caller.name!r} is limited to some agents, and the metrics name every "
            "agent: scrape with a key that reaches all (`oryxtui keys create prometheus "
            "--scope metrics`)."
        )
    served = state_of(request).metrics
    if served is None:
        raise NotFound(
            "Metrics are off on this server ([telemetry.metrics] enabled = false in its "
            "config.toml)."
        )
    body = await anyio.to_thread.run_sync(served.exposition)
    return Response(body, media_type=CONTENT_TYPE)
