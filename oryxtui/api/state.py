"""What a request's route is given: the app's services (`ApiState`, one per app) and who is
asking (`Caller`, put there by the authentication middleware) — typed, each read through a
FastAPI dependency, never as loose attributes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fastapi import Request

from oryxtui.api.keys import Caller

if TYPE_CHECKING:
    from oryxtui.agent.loop import AgentLoop
    from oryxtui.api.auth import Authenticator
    from oryxtui.api.events import EventLog
    from oryxtui.api.keys import KeyStore
    from oryxtui.api.limits import StreamSlots
    from oryxtui.api.metrics import ServerMetrics
    from oryxtui.api.waiting import AgentQueue, CostlyReads
    from oryxtui.config import Settings
    from oryxtui.memory.service import MemoryService
    from oryxtui.places import Here
    from oryxtui.workspace import Workspace


@dataclass
class ApiState:
    """The services of one app, made by `create_api`."""

    workspace: Workspace
    settings: Settings
    place: Here
    memory: MemoryService
    events: EventLog
    streams: StreamSlots
    runner: AgentLoop
    queue: AgentQueue
    costly: CostlyReads
    scrub: Callable[[str], str]
    keys: KeyStore
    auth: Authenticator
    metrics: ServerMetrics | None = None  # None: [telemetry.metrics] enabled = false


def state_of(request: Request) -> ApiState:
    state = request.app.state.oryx
    assert isinstance(state, ApiState), "the app was not made by create_api"
    return state


def caller_of(request: Request) -> Caller:
    """Who sent the request (the authentication middleware put it there)."""
    caller = getattr(request.state, "caller", None)
    assert isinstance(caller, Caller), "a request reached a route unauthenticated"
    return caller


def workspace_of(request: Request) -> Workspace:
    return state_of(request).workspace


def place_of(request: Request) -> Here:
    return state_of(request).place


def settings_of(request: Request) -> Settings:
    return state_of(request).settings


def memory_of(request: Request) -> MemoryService:
    return state_of(request).memory


def runner_of(request: Request) -> AgentLoop:
    return state_of(request).runner


def queue_of(request: Request) -> AgentQueue:
    return state_of(request).queue


def costly_of(request: Request) -> CostlyReads:
    return state_of(request).costly


def scrubber_of(request: Request) -> Callable[[str], str]:
    """Takes paths out of a message: the workspace as `.oryxos`, anything else as `<path>`."""
    return state_of(request).scrub
