"""The MEMORY.md format: a lossless parser, the entry grammar, sanitising, the injected window.

The document keeps every line exactly as read, so rendering is `'\\n'.join(lines)` and text the
parser does not understand survives byte for byte; entries are views onto those lines.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
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


ENTRY_LINE = re.compile(r"- \[(\d{4}-\d{2}-\d{2} \d{2}:\d{2}(?::\d{2})?)\] ?(.*)", re.DOTALL)
_OTHER_HEADING = re.compile(r"#{1,6}(?:\s|$)")


def entry_from_line(line: str, scope: Scope) -> MemoryEntry:
    match = ENTRY_LINE.fullmatch(line)
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


_TIME = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}(?::\d{2})?")


def is_entry_time(text: str) -> bool:
    return _TIME.fullmatch(text) is not None


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


def clean_entry_line(time: str | None, content: str) -> str:
    """An entry line from untrusted parts (a database row, a mem0 item, a journal record),
    cleaned as a save is: one line, no forged header; a time that is not one is left out."""
    text = sanitize_content(content)
    time = sanitize_content(time or "")
    return entry_line(time, text) if is_entry_time(time) else f"- {text}".rstrip()


class RecallIndex:
    """Recall's matching rule, made fast: one lower-cased text searched with `str.find`."""

    def __init__(self, lines: Sequence[str]) -> None:
        # Lower-casing never makes or removes a line break, so rows can be counted in it.
        self._text = "\n".join(lines).lower()
        self._rows = len(lines)

    def positions(self, keyword: str) -> list[int]:
        """Indexes of the lines that contain `keyword`, case-insensitively, in order."""
        needle = keyword.lower()
        if not needle or "\n" in needle or not self._rows:
            return []
        text = self._text
        hits: list[int] = []
        row, counted = 0, 0  # `row` is the row of position `counted`
        position = 0
        while (found := text.find(needle, position)) >= 0:
            row += text.count("\n", counted, found)
            counted = found
            hits.append(row)
            end = text.find("\n", found + len(needle))
            if end < 0:
                break
            row += 1  # a keyword holds no line break: the line ends at `end`
            counted = position = end + 1
        return hits


@dataclass
class MemoryDocument:
    """A parsed MEMORY.md. `lines` are the raw lines (split on '\\n', CR and BOM kept)."""

    lines: list[str]
    # Runs of entry lines, as (first row, row after the last): big files are mostly one long run.
    core_spans: list[tuple[int, int]] = field(default_factory=list)
    archival_spans: list[tuple[int, int]] = field(default_factory=list)
    core_headers: list[int] = field(default_factory=list)
    archival_headers: list[int] = field(default_factory=list)
    has_cr: bool = True  # some line may end in CR (parse() knows; True is always safe)

    def render(self) -> str:
        return "\n".join(self.lines)

    @cached_property
    def core_lines(self) -> list[str]:
        return self._clean_lines(self.core_spans)

    @cached_property
    def archival_lines(self) -> list[str]:
        return self._clean_lines(self.archival_spans)

    def _clean_lines(self, spans: list[tuple[int, int]]) -> list[str]:
        """The lines of `spans` without their CR. (Row 0, which may carry a BOM, is never an
        entry: a section starts only after its heading.)"""
        lines: list[str] = []
        for start, stop in spans:
            lines += self.lines[start:stop]
        if self.has_cr:  # CRLF files: the slow, exact way
            lines = [line[:-1] if line.endswith("\r") else line for line in lines]
        return lines

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
            after = doc.core_spans[-1][1] - 1 if doc.core_spans else doc.core_headers[0]
        else:
            after = (
                doc.archival_spans[-1][1] - 1 if doc.archival_spans else doc.archival_headers[-1]
            )
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


# The only lines parse() must look at one by one: headings (and other lines starting with '#')
# and blank ones. Every other line is an entry of the section it is in.
_MARKED_LINE = re.compile(r"\n(?:#[^\n]*|[^\S\n]*)(?=\n|\Z)")


def heading_kind(line: str) -> Scope | str | None:
    """For a line starting with '#': the section it opens, "other" for any other heading (which
    ends a section), or None when it is not a heading (say '#tag', an entry like any other)."""
    stripped = line.rstrip()
    if stripped == CORE_HEADER:
        return Scope.CORE
    if stripped == ARCHIVAL_HEADER:
        return Scope.ARCHIVAL
    return "other" if _OTHER_HEADING.match(line) else None


def parse(text: str) -> MemoryDocument:
    """Parse MEMORY.md text; never fails, whatever the text."""
    doc = MemoryDocument(text.split("\n"), has_cr="\r" in text)
    section: Scope | None = None
    run_start = 0  # the first row not yet given to a section

    def close_run(stop: int) -> None:
        if section is not None and run_start < stop:
            spans = doc.core_spans if section is Scope.CORE else doc.archival_spans
            if spans and spans[-1][1] == run_start:
                spans[-1] = (spans[-1][0], stop)
            else:
                spans.append((run_start, stop))

    def marked_rows() -> Iterator[int]:
        yield 0  # always looked at: it may carry a BOM
        newlines, position = 0, 0
        for match in _MARKED_LINE.finditer(text):
            newlines += text.count("\n", position, match.start())
            position = match.start()
            yield newlines + 1  # the row after the line break the match starts with

    for row in marked_rows():
        close_run(row)
        run_start = row + 1
        raw = doc.lines[row]
        line = raw[:-1] if raw.endswith("\r") else raw
        if row == 0 and line.startswith(BOM):
            line = line[1:]
        if not line or line.isspace():
            continue
        if line.startswith("#"):
            kind = heading_kind(line)
            if kind is not None:
                section = kind if isinstance(kind, Scope) else None
                if kind is Scope.CORE:
                    doc.core_headers.append(row)
                elif kind is Scope.ARCHIVAL:
                    doc.archival_headers.append(row)
                continue
        run_start = row  # an entry line after all (row 0 without '#', or '#tag' in a section)
        close_run(row + 1)
        run_start = row + 1
    close_run(len(doc.lines))
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
