"""The REST API's memory operations as operators see them: each a span of the GenAI
conventions' memory operations (`create_memory`, `update_memory`, `delete_memory`,
`search_memory`) with what it came to, a refused change and a recall counted in the metrics."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any

from oryxtui import telemetry

if TYPE_CHECKING:
    from oryxtui.memory import MemoryService
    from oryxtui.memory.recall.results import Recall

CHANGES = {"create_memory": "save", "update_memory": "edit", "delete_memory": "delete"}


def operation(
    kind: str, agent: str | None, change: str | None = None, **attributes: Any
) -> AbstractContextManager[Any]:
    """A memory operation asked of the REST API (`create_memory`, `search_memory`…): its span
    in the GenAI conventions, and a refused change counted in the metrics."""
    told = {f"gen_ai.memory.{key}": value for key, value in attributes.items()}
    if "id" in attributes:  # as a client typed it: an attribute only if it can be an id
        told["gen_ai.memory.id"] = telemetry.token(attributes["id"])
    change = change or CHANGES.get(kind)
    return telemetry.memory_operation(kind, agent, "api", told, change)


def done(entry_id: str, held: bool, line: str | None = None) -> None:
    """What a change came to, on its span: the entry, held or written (its text only with
    capture_content)."""
    told: dict[str, Any] = {
        "gen_ai.memory.id": entry_id,
        "oryxtui.memory.outcome": "held" if held else "written",
    }
    if line is not None and telemetry.content():
        told["gen_ai.memory.content"] = line
    telemetry.note(told)


@contextmanager
def searching(
    agent: str | None, keyword: str, memory: MemoryService
) -> Iterator[Callable[[Recall], Recall]]:
    """A recall in the block: what it found is told (to the metrics, as the span's routes) by
    passing it through the function the block is given."""
    started = time.perf_counter()
    query = {"query.text": keyword} if telemetry.content() else {}

    def told(found: Recall) -> Recall:
        telemetry.searched(agent, found, started, memory.embedder_model)
        return found

    with operation("search_memory", agent, **query):
        yield told


def reviewing(
    agent: str | None, approve: list[str] | str | None, reject: list[str] | None
) -> AbstractContextManager[Any]:
    """A person's review decision through the API: its span (how many approved, rejected)."""
    approved = "all" if approve == "all" else len(approve or ())
    return telemetry.span(
        f"review_memory {agent or 'global'}",
        {
            "gen_ai.memory.store.name": agent or "global",
            "oryxtui.review.approve": str(approved),
            "oryxtui.review.reject": len(reject or ()),
        },
    )
