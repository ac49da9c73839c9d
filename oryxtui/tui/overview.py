"""What the dashboard shows of an agent, read through the library; called from thread workers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from oryxtui.errors import OryxError, Unreachable
from oryxtui.memory import MemorySnapshot
from oryxtui.workspace import (
    AgentName,
)

GLOBAL: AgentName = None

if TYPE_CHECKING:
    from oryxtui.places import Memory, Place


class Unselected:
    """No agent is selected yet (the agents are still being listed)."""

    def __repr__(self) -> str:
        return "UNSELECTED"


UNSELECTED = Unselected()
Selection = AgentName | Unselected


@dataclass(frozen=True)
class AgentSummary:
    """One sidebar row: entry counts and what is wrong, if anything. `name` None is global."""

    name: AgentName
    core_count: int | None = None
    archival_count: int | None = None
    description: str = ""
    error: str | None = None
    lost_count: int = 0  # entries oryxtui saved that an outside edit removed
    has_definition: bool = True  # False: an agent folder with a MEMORY.md but no AGENT.md
    unreachable: bool = False  # the memory is in a database that cannot be reached now
    held_count: int = 0  # saves held for review: not in the memory until approved


@dataclass(frozen=True)
class AgentMemory:
    """The selected agent: its summary and every entry (None when memory cannot be read)."""

    summary: AgentSummary
    snapshot: MemorySnapshot | None


def load_agent(
    place: Place, name: str | None, newest_bytes: int | None = None, census: bool = True
) -> AgentMemory:
    """Read AGENT.md and memory; a problem with either becomes a message, never an exception.

    A file bigger than `newest_bytes` gives only its newest entries; then `census` says whether
    to count all of them now (counts stay None otherwise: `take_census` later).
    """
    service = place.memory
    problems: list[str] = []
    description = ""
    has_definition = True
    if name is not None:
        try:
            definition = place.read_agent(name)
        except OryxError as exc:
            problems.append(str(exc))
        else:
            has_definition = definition is not None
            description = definition.description if definition else ""
    snapshot = None
    unreachable = False
    try:
        snapshot = service.snapshot(name, newest_bytes)
    except OryxError as exc:
        problems.append(str(exc))
        unreachable = isinstance(exc, Unreachable)
    if snapshot is not None:
        # Made here, off the UI thread.
        snapshot.core_duplicates, snapshot.archival_duplicates, snapshot.covered  # noqa: B018
    if snapshot is not None and snapshot.warning:
        problems.append(snapshot.warning)
    lost, archival_count = 0, len(snapshot.archival) if snapshot else None
    if snapshot is not None and snapshot.partial is not None:
        archival_count, lost = take_census(service, name) if census else (None, 0)
    elif snapshot is not None and not snapshot.blank_file:
        try:
            lost = len(service.lost(name))
        except OryxError as exc:
            problems.append(str(exc))
    held = 0
    if snapshot is not None:
        try:
            held = len(service.held(name))
        except OryxError:
            held = 0  # said where the history is read
    summary = AgentSummary(
        name=name,
        held_count=held,
        core_count=len(snapshot.core) if snapshot else None,
        archival_count=archival_count,
        description=description,
        lost_count=lost,
        has_definition=has_definition,
        unreachable=unreachable,
        # Paths inside the workspace are shown relative to it: shorter, nothing machine-specific.
        error=" ".join(problems).replace(str(place.root), ".oryxos") or None,
    )
    return AgentMemory(summary, snapshot)


def take_census(service: Memory, name: str | None) -> tuple[int | None, int]:
    """All archival entries and the lost ones of a big file, counted in bounded memory."""
    try:
        return service.count_archival(name), len(service.lost(name))
    except OryxError:
        return None, 0  # the next load reports the problem
