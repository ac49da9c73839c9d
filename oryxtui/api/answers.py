"""How every route answers: its data in the envelope, and the failures every route documents
(each comes back in the envelope too). A floor the route modules stand on."""

from __future__ import annotations

from typing import Any

from fastapi import Response

from oryxtui import notices
from oryxtui.api.models import Envelope, envelope

# What goes wrong comes back in the envelope too, with `data` null and the status as `code`.
FAILURES: dict[int | str, dict[str, Any]] = {
    status: {"model": Envelope[None], "description": description}
    for status, description in (
        (400, "a bad request: the message says what to send"),
        (401, "a missing, wrong or revoked key or token"),
        (403, "a key whose scope or agents do not cover the request"),
        (404, "no such agent"),
        (409, "refused given the file's state (a symbolic link, undecodable bytes, a lock)"),
        (429, "a key over its rate: the message says when to try again"),
        (503, "a service memory depends on is unavailable"),
    )
}


def answer(data: Any) -> Response:
    """`data` in the envelope, serialised by pydantic in one pass. (Returned as a model, FastAPI
    would validate it again first: a 100,000-entry answer three times slower. The route's
    `response_model` documents it.)"""
    body = envelope(data, warnings=notices.collected()).model_dump_json(exclude_unset=True)
    return Response(body, media_type="application/json")
