"""`GET /api/v1/info`: what this server is — its version, memory backend, how it recalls, the
shared database it is on, and who is asking."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response

from oryxtui.api.answers import FAILURES, answer
from oryxtui.api.keys import Caller
from oryxtui.api.models import Envelope, ServerInfo
from oryxtui.api.state import caller_of, state_of
from oryxtui.errors import OryxError
from oryxtui.memory import MemoryService

router = APIRouter(prefix="/api/v1", responses=FAILURES)


@router.get("/info", response_model=Envelope[ServerInfo])
def info(request: Request, caller: Annotated[Caller, Depends(caller_of)]) -> Response:
    """What this server is: its version, memory backend, how it recalls, and who is asking."""
    from oryxtui import __version__

    memory = state_of(request).memory
    return answer(
        ServerInfo(
            version=__version__,
            backend=memory.backend,
            ranked=memory.ranked,
            embeds=memory.embeds,
            stream=state_of(request).events.stream,
            caller=caller.name,
            scope=caller.scope.label,
            agents=list(caller.agents) if caller.agents is not None else None,
            store=store_identity(memory),
        )
    )


def store_identity(memory: MemoryService) -> str | None:
    """Which shared database the memory is in (None: this server's own files or oryxos.db)."""
    database = getattr(memory.store, "database", None)
    identity = getattr(database, "identity", None)
    if identity is None:
        return None
    try:
        return str(identity())
    except OryxError:
        return None  # out of reach now: no grouping until it is back
