"""The MEMORY.md format: a lossless parser, the entry grammar, sanitising, the injected window.

The document keeps every line exactly as read, so rendering is `'\\n'.join(lines)` and text the
parser does not understand survives byte for byte; entries are views onto those lines.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from typing import overload

CORE_HEADER = "## 核心记忆"
ARCHIVAL_HEADER = "## 归档记忆"
BOM = "\ufeff"
ELLIPSIS = "…"
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"


class Scope(StrEnum):
    CORE = "core"
    ARCHIVAL = "archival"


@dataclass(frozen=True, slots=True)
class MemoryEntry:
    """One entry: its time as written (None for a hand-written line) and its content."""

    scope: Scope
    time: str | None
    content: str
    line: str

    def to_json(self) -> dict[str, str | None]:
        return {"time": self.time, "content": self.content}


_ENTRY_LINE = re.compile(r"- \[(\d{4}-\d{2}-\d{2} \d{2}:\d{2}(?::\d{2})?)\] ?(.*)", re.DOTALL)
_OTHER_HEADING = re.compile(r"#{1,6}(?:\s|$)")


def entry_from_line(line: str, scope: Scope) -> MemoryEntry:
    match = _ENTRY_LINE.fullmatch(line)
    if match:
        return MemoryEntry(scope, match[1], match[2], line)
    content = line[2:] if line.startswith("- ") else line
    return MemoryEntry(scope, None, content.strip(), line)


class EntrySequence(Sequence[MemoryEntry]):
    """Entries made on demand from their lines, so 100,000 of them cost nothing until shown."""

    __slots__ = ("lines", "scope")

    def __init__(self, lines: Sequence[str], scope: Scope) -> None:
        self.lines = lines
        self.scope = scope

    def __len__(self) -> int:
        return len(self.lines)

    @overload
    def __getitem__(self, index: int) -> MemoryEntry: ...
    @overload
    def __getitem__(self, index: slice) -> list[MemoryEntry]: ...
    def __getitem__(self, index: int | slice) -> MemoryEntry | list[MemoryEntry]:
        if isinstance(index, slice):
            return [entry_from_line(line, self.scope) for line in self.lines[index]]
        return entry_from_line(self.lines[index], self.scope)

    def __eq__(self, other: object) -> bool:
        return list(self) == list(other) if isinstance(other, Sequence) else NotImplemented

    __hash__ = None  # type: ignore[assignment]


def entry_line(time: str, content: str) -> str:
    return f"- [{time}] {content}"


# Every line break str.splitlines() honours, every other control character except tab, and lone
# surrogates (which cannot be encoded as UTF-8) become a space; then runs of spaces collapse.
_FLATTEN = {code: " " for code in [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0), 0x2028, 0x2029]}
del _FLATTEN[0x09]
_FLATTEN.update({code: "\ufffd" for code in range(0xD800, 0xE000)})
_SPACES = re.compile(r" {2,}")


def sanitize_content(text: str) -> str:
    """Flatten `text` to one safe line: it can never forge a section header or an entry."""
    flat = _SPACES.sub(" ", text.translate(_FLATTEN)).strip()
    return flat.replace(CORE_HEADER, "「核心记忆」").replace(ARCHIVAL_HEADER, "「归档记忆」")


class RecallIndex:
    """Recall's matching rule, made fast: one lower-cased text searched with `str.find`."""

    def __init__(self, lines: Sequence[str]) -> None:
        lowered = [line.lower() for line in lines]
        self._starts: list[int] = []
        offset = 0
        for line in lowered:
            self._starts.append(offset)
            offset += len(line) + 1
        self._text = "\n".join(lowered)

    def positions(self, keyword: str) -> list[int]:
        """Indexes of the lines that contain `keyword`, case-insensitively, in order."""
        needle = keyword.lower()
        if not needle or "\n" in needle:
            return []
        text, starts = self._text, self._starts
        hits: list[int] = []
        position = 0
        while (found := text.find(needle, position)) >= 0:
            row = bisect_right(starts, found) - 1
            hits.append(row)
            position = starts[row + 1] if row + 1 < len(starts) else len(text)
        return hits


@dataclass
class MemoryDocument:
    """A parsed MEMORY.md. `lines` are the raw lines (split on '\\n', CR and BOM kept)."""

    lines: list[str]
    core_rows: list[int] = field(default_factory=list)
    archival_rows: list[int] = field(default_factory=list)
    core_headers: list[int] = field(default_factory=list)
    archival_headers: list[int] = field(default_factory=list)

    def render(self) -> str:
        return "\n".join(self.lines)

    def clean(self, row: int) -> str:
        """The text of line `row` without its CR (and without the BOM on the first line)."""
        line = self.lines[row]
        if line.endswith("\r"):
            line = line[:-1]
        if row == 0 and line.startswith(BOM):
            line = line[1:]
        return line

    @cached_property
    def core_lines(self) -> list[str]:
        return [self.clean(row) for row in self.core_rows]

    @cached_property
    def archival_lines(self) -> list[str]:
        return [self.clean(row) for row in self.archival_rows]

    def core_entries(self) -> EntrySequence:
        return EntrySequence(self.core_lines, Scope.CORE)

    def archival_entries(self) -> EntrySequence:
        return EntrySequence(self.archival_lines, Scope.ARCHIVAL)

    @cached_property
    def recall_index(self) -> RecallIndex:
        return RecallIndex(self.archival_lines)

    def recall_positions(self, keyword: str) -> list[int]:
        """Positions (in `archival_lines`) of the lines containing `keyword`, case-insensitively."""
        return self.recall_index.positions(keyword)

    def with_entry(self, line: str, scope: Scope) -> str:
        """The document's text with `line` appended as the newest entry of `scope`."""
        doc = self._with_sections(scope)
        eol = "\r" if doc.lines and doc.lines[0].endswith("\r") else ""
        if scope is Scope.CORE:
            after = doc.core_rows[-1] if doc.core_rows else doc.core_headers[0]
        else:
            after = doc.archival_rows[-1] if doc.archival_rows else doc.archival_headers[-1]
        lines = doc.lines
        return "\n".join([*lines[: after + 1], line + eol, *lines[after + 1 :]])

    def _with_sections(self, scope: Scope) -> MemoryDocument:
        """This document, or a copy with the headers `scope` needs (a blank file gets both)."""
        blank = (
            not (self.core_headers or self.archival_headers)
            and not self.render().strip(BOM).strip()
        )
        needs_core = blank or (scope is Scope.CORE and not self.core_headers)
        needs_archival = blank or (scope is Scope.ARCHIVAL and not self.archival_headers)
        if not (needs_core or needs_archival):
            return self
        lines = list(self.lines)
        eol = "\r" if lines[0].endswith("\r") else ""

        def add_at_end(header: str) -> None:
            if lines[-1] == "":
                lines.insert(len(lines) - 1, header + eol)
            else:
                lines[-1] += eol
                lines.extend([header + eol, ""])

        if needs_core and self.archival_headers:
            lines.insert(self.archival_headers[0], CORE_HEADER + eol)
        elif needs_core:
            add_at_end(CORE_HEADER)
        if needs_archival:
            add_at_end(ARCHIVAL_HEADER)
        return parse("\n".join(lines))


def parse(text: str) -> MemoryDocument:
    """Parse MEMORY.md text; never fails, whatever the text."""
    doc = MemoryDocument(text.split("\n"))
    section: Scope | None = None
    for row, raw in enumerate(doc.lines):
        line = raw[:-1] if raw.endswith("\r") else raw
        if row == 0 and line.startswith(BOM):
            line = line[1:]
        if not line or line.isspace():
            continue
        if line.startswith("#"):
            stripped = line.rstrip()
            if stripped == CORE_HEADER:
                section = Scope.CORE
                doc.core_headers.append(row)
            elif stripped == ARCHIVAL_HEADER:
                section = Scope.ARCHIVAL
                doc.archival_headers.append(row)
            elif _OTHER_HEADING.match(line):
                section = None
            elif section is not None:
                (doc.core_rows if section is Scope.CORE else doc.archival_rows).append(row)
            continue
        if section is Scope.CORE:
            doc.core_rows.append(row)
        elif section is Scope.ARCHIVAL:
            doc.archival_rows.append(row)
    return doc


@dataclass(frozen=True, slots=True)
class InjectedWindow:
    """Which archival lines are injected: from `start` on, or only the clipped newest line."""

    start: int
    lines: tuple[str, ...]


def injected_window(archival_lines: Sequence[str], max_chars: int) -> InjectedWindow:
    """The longest run of whole newest lines whose '\\n'-joined length is at most `max_chars`."""
    total, start = -1, len(archival_lines)
    for row in range(len(archival_lines) - 1, -1, -1):
        total += len(archival_lines[row]) + 1
        if total > max_chars:
            break
        start = row
    if start == len(archival_lines) and archival_lines:
        newest = archival_lines[-1]
        tail = newest[len(newest) - max_chars :] if max_chars > 0 else ""
        return InjectedWindow(len(archival_lines) - 1, (ELLIPSIS + tail,))
    return InjectedWindow(start, tuple(archival_lines[start:]))


def render_context(core_lines: Sequence[str], window: InjectedWindow) -> str:
    """The memory block exactly as injected, in upstream's shape (headers and entry lines only)."""
    return "\n".join([CORE_HEADER, *core_lines, ARCHIVAL_HEADER, *window.lines])
