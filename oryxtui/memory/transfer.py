"""Memory moved between agents and workspaces: an export as JSON lines (one entry per line,
with its agent, scope, time and text) or as MEMORY.md text, and the entries read back from
either. An export is a file anyone can edit: what is read back is checked (agent names, times)
and goes into a memory through the admission, as a save does.

The MEMORY.md form of several memories puts a marker line before each,
`<!-- oryxtui agent: NAME -->`. A marker is only ever a whole line oryxtui wrote: markers are
read only in a file that starts with one, and an entry whose line would read as a marker is
written with the `- ` every entry may start with, so entry text can never be taken for one."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from oryxtui.errors import UsageError
from oryxtui.memory.document import heading_kind, parse
from oryxtui.memory.format import (
    ARCHIVAL_HEADER,
    BOM,
    CORE_HEADER,
    MemoryEntry,
    Scope,
    entry_from_line,
    entry_line,
)
from oryxtui.workspace import is_valid_agent_name

FORMATS = ("jsonl", "md")
GLOBAL_NAME = "(global)"
_MARKER = re.compile(r"<!-- oryxtui agent: (\S+) -->")
# An entry may be dated up to a day ahead (another machine's clock), not later: an entry dated
# 9999 would stay the newest by time forever.
FUTURE_SLACK = timedelta(days=1)
_TIME_FORMATS = ("%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M")


@dataclass(frozen=True)
class Retiring:
    """A version no longer true, as an export carries it: when it stopped being true and the
    entry that replaced it."""

    entry: MemoryEntry
    until: str | None
    successor: MemoryEntry


@dataclass(frozen=True)
class Exported:
    """One agent's memory, as exported: its entries, and (JSON lines) the versions replaced."""

    agent: str | None
    core: Sequence[MemoryEntry]
    archival: Sequence[MemoryEntry]
    replaced: Sequence[Retiring] = ()


def to_jsonl(memories: Iterable[Exported]) -> str:
    lines = []
    for memory in memories:
        for entry in [*memory.core, *memory.archival]:
            told: dict[str, object] = {"agent": memory.agent, "scope": entry.scope.value}
            lines.append(json.dumps(told | entry.to_json(), ensure_ascii=False) + "\n")
        for gone in memory.replaced:
            by = {"time": gone.successor.time, "content": gone.successor.content}
            told = {"agent": memory.agent, "scope": gone.entry.scope.value}
            told |= gone.entry.to_json() | {"replaced": {"until": gone.until, "by": by}}
            lines.append(json.dumps(told, ensure_ascii=False) + "\n")
    return "".join(lines)


def marker(agent: str | None) -> str:
    return f"<!-- oryxtui agent: {agent or GLOBAL_NAME} -->"


def _exported_line(entry: MemoryEntry) -> str:
    """The entry's line as written in its memory; one that would read as a marker or as a
    section header (a line written by hand, without `- `, such as ` ## 核心记忆`) gets the
    `- ` that leaves its entry as it is."""
    line = entry.line
    bare = line.strip()
    if _MARKER.fullmatch(bare) or heading_kind(bare) is not None:
        return f"- {bare}"
    return line


def to_markdown(memories: Sequence[Exported]) -> str:
    """MEMORY.md text (one memory: a file upstream reads as it is); several each follow a
    marker line naming the agent they are from."""
    parts = []
    for memory in memories:
        head = f"{marker(memory.agent)}\n" if len(memories) > 1 else ""
        core = "".join(_exported_line(entry) + "\n" for entry in memory.core) or "\n"
        archival = "".join(_exported_line(entry) + "\n" for entry in memory.archival) or "\n"
        parts.append(f"{head}{CORE_HEADER}\n{core}{ARCHIVAL_HEADER}\n{archival}")
    return "\n".join(parts)


Imported = tuple[str | None, MemoryEntry]


def read_export(
    text: str, source: str, unnamed: str | None = None, now: datetime | None = None
) -> list[Imported]:
    """The entries of an export (JSON lines, or MEMORY.md text), each with the agent the file
    names for it (`unnamed` where it names none; None: the global memory). A line that is not
    an entry, an agent name that is not one, or a time that is no time (or is in the future)
    refuses the whole file with one sentence."""
    first = text.lstrip(BOM + " \t\r\n")[:1]
    now = now or datetime.now()
    if first == "{":
        return _from_jsonl(text, source, unnamed, now)
    return _from_markdown(text, source, unnamed, now)


def _refused(source: str, number: int, problem: str) -> UsageError:
    return UsageError(f"Line {number:,} of {source} {problem}; nothing was imported.")


def _agent(name: object, source: str, number: int) -> str | None:
    if name is None or name == GLOBAL_NAME:
        return None
    if not is_valid_agent_name(name):
        raise _refused(
            source,
            number,
            f"names the agent {name!r}, which is not a valid agent name (letters, digits, '_' "
            "and '-')",
        )
    return str(name)


def _checked_time(time: str | None, source: str, number: int, now: datetime) -> None:
    if time is None:
        return
    for form in _TIME_FORMATS:
        try:
            moment = datetime.strptime(time, form)
            break
        except ValueError:
            continue
    else:
        raise _refused(source, number, f"is dated {time!r}, which is no date and time")
    if moment > now + FUTURE_SLACK:
        raise _refused(source, number, f"is dated {time}, in the future; correct its time")


def _from_jsonl(text: str, source: str, unnamed: str | None, now: datetime) -> list[Imported]:
    return [(agent, entry) for agent, entry, gone in _jsonl(text, source, unnamed, now) if not gone]


def replaced_in_export(
    text: str, source: str, unnamed: str | None = None, now: datetime | None = None
) -> list[tuple[str | None, Retiring]]:
    """The versions a JSON lines export says were replaced (none in MEMORY.md text), each with
    its agent; checked as the entries are."""
    if text.lstrip(BOM + " \t\r\n")[:1] != "{":
        return []
    found = _jsonl(text, source, unnamed, now or datetime.now())
    return [(agent, gone) for agent, _, gone in found if gone is not None]


def _jsonl(
    text: str, source: str, unnamed: str | None, now: datetime
) -> list[tuple[str | None, MemoryEntry, Retiring | None]]:
    found: list[tuple[str | None, MemoryEntry, Retiring | None]] = []
    for number, raw in enumerate(text.removeprefix(BOM).split("\n"), 1):
        if not raw.strip():
            continue
        try:
            item = json.loads(raw)
            scope = Scope(str(item.get("scope") or "archival").lower())
            entry = _told(item, scope)
            gone = item.get("replaced")
            retiring = None
            if gone is not None:
                until = gone.get("until")
                if not isinstance(until, str | None):
                    raise TypeError("until is text")
                retiring = Retiring(entry, until, _told(gone["by"], scope))
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
            raise _refused(
                source,
                number,
                "is not an exported entry (a JSON object with scope, time and content)",
            ) from None
        _checked_time(entry.time, source, number, now)
        agent = _agent(item["agent"], source, number) if "agent" in item else unnamed
        found.append((agent, entry, retiring))
    return found


def _told(item: dict[str, object], scope: Scope) -> MemoryEntry:
    """An entry of an export line (TypeError: not one)."""
    content, time = item["content"], item.get("time")
    if not isinstance(content, str) or not isinstance(time, str | None):
        raise TypeError("content and time are text")
    time = time or None
    return MemoryEntry(scope, time, content, entry_line(time, content) if time else f"- {content}")


def _from_markdown(text: str, source: str, unnamed: str | None, now: datetime) -> list[Imported]:
    lines = text.removeprefix(BOM).split("\n")
    leading = next((line.strip() for line in lines if line.strip()), "")
    marked = _MARKER.fullmatch(leading) is not None  # an export of several memories
    found: list[Imported] = []
    agent, start = unnamed, 0
    for index in [*range(len(lines)), len(lines)]:
        at_marker = index < len(lines) and marked and _MARKER.fullmatch(lines[index].strip())
        if index < len(lines) and not at_marker:
            continue
        found += _memory(lines[start:index], agent, source, start, now)
        if at_marker:
            agent, start = _agent(at_marker[1], source, index + 1), index + 1
    return found


def _memory(
    lines: list[str], agent: str | None, source: str, offset: int, now: datetime
) -> list[Imported]:
    """The entries of one memory's text (lines from line `offset` + 1 of the file)."""
    document = parse("\n".join(lines))
    found: list[Imported] = []
    for scope, spans, seen in (
        (Scope.CORE, document.core_spans, document.core_lines),
        (Scope.ARCHIVAL, document.archival_spans, document.archival_lines),
    ):
        rows = [row for start, stop in spans for row in range(start, stop)]
        for row, line in zip(rows, seen, strict=True):
            entry = entry_from_line(line, scope)
            _checked_time(entry.time, source, offset + row + 1, now)
            found.append((agent, entry))
    return found
