"""Memory moved between agents and workspaces: an export as JSON lines (one entry per line,
with its agent, scope, time and text) or as MEMORY.md text, and the entries read back from
either. What is read back is cleaned as a save is: an export is a file anyone can edit."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from oryxtui.errors import UsageError
from oryxtui.memory.format import (
    ARCHIVAL_HEADER,
    CORE_HEADER,
    MemoryEntry,
    Scope,
    clean_entry_line,
    entry_from_line,
    is_entry_time,
    parse,
)
from oryxtui.workspace import is_valid_agent_name

FORMATS = ("jsonl", "md")
GLOBAL_NAME = "(global)"
_MARKER = re.compile(r"<!-- oryxtui agent: (\S+) -->")


@dataclass(frozen=True)
class Exported:
    """One agent's memory, as exported."""

    agent: str | None
    core: Sequence[MemoryEntry]
    archival: Sequence[MemoryEntry]


def to_jsonl(memories: Iterable[Exported]) -> str:
    return "".join(
        json.dumps(
            {"agent": memory.agent, "scope": entry.scope.value, **entry.to_json()},
            ensure_ascii=False,
        )
        + "\n"
        for memory in memories
        for entry in [*memory.core, *memory.archival]
    )


def to_markdown(memories: Sequence[Exported]) -> str:
    """MEMORY.md text (one memory: a file upstream reads as it is); several are each marked
    with the agent they are from."""
    parts = []
    for memory in memories:
        marker = ""
        if len(memories) > 1:
            marker = f"<!-- oryxtui agent: {memory.agent or GLOBAL_NAME} -->\n"
        core = "".join(entry.line + "\n" for entry in memory.core) or "\n"
        archival = "".join(entry.line + "\n" for entry in memory.archival) or "\n"
        parts.append(f"{marker}{CORE_HEADER}\n{core}{ARCHIVAL_HEADER}\n{archival}")
    return "\n".join(parts)


Imported = tuple[str | None, MemoryEntry]


def read_export(text: str, source: str, unnamed: str | None = None) -> list[Imported]:
    """The entries of an export (JSON lines, or MEMORY.md text), each with the agent the file
    names for it (`unnamed` where it names none; None: the global memory)."""
    first = text.lstrip("\ufeff \t\r\n")[:1]
    return _from_jsonl(text, source, unnamed) if first == "{" else _from_markdown(text, unnamed)


def _agent(name: object) -> str | None:
    return name if isinstance(name, str) and is_valid_agent_name(name) else None


def _from_jsonl(text: str, source: str, unnamed: str | None) -> list[Imported]:
    found: list[Imported] = []
    for number, raw in enumerate(text.split("\n"), 1):
        if not raw.strip():
            continue
        try:
            item = json.loads(raw)
            scope = Scope(str(item.get("scope") or "archival").lower())
            content = str(item["content"])
            time = item.get("time")
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
            raise UsageError(
                f"Line {number} of {source} is not an exported entry (a JSON object with "
                "scope, time and content); nothing was imported."
            ) from None
        line = clean_entry_line(str(time) if time else None, content)
        if line == "-":
            continue  # no text
        agent = _agent(item["agent"]) if "agent" in item else unnamed
        found.append((agent, entry_from_line(line, scope)))
    return found


def _from_markdown(text: str, unnamed: str | None) -> list[Imported]:
    found: list[Imported] = []
    agent = unnamed
    for part in re.split(r"(<!-- oryxtui agent: \S+ -->)", text):
        marker = _MARKER.fullmatch(part.strip())
        if marker:
            agent = _agent(marker[1])
            continue
        document = parse(part)
        for scope, lines in (
            (Scope.CORE, document.core_lines),
            (Scope.ARCHIVAL, document.archival_lines),
        ):
            for line in lines:
                entry = entry_from_line(line, scope)
                time = entry.time if entry.time and is_entry_time(entry.time) else None
                clean = clean_entry_line(time, entry.content)
                if clean != "-":
                    found.append((agent, entry_from_line(clean, scope)))
    return found
