"""The MEMORY.md format: a lossless parser, the entry grammar, sanitising, the injected window.

The document keeps every line exactly as read, so rendering is `'\\n'.join(lines)` and text the
parser does not understand survives byte for byte; entries are views onto those lines.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from types import MappingProxyType
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

    @property
    def id(self) -> str:
        """A short, stable address for the entry: a hash of its scope and line. It stays the
        same while other entries come and go; an edit gives the entry a new one."""
        return entry_id(self.scope, self.line)

    def to_json(self) -> dict[str, str | None]:
        return {"id": self.id, "time": self.time, "content": self.content}


def entry_id(scope: Scope, line: str) -> str:
    digest = hashlib.sha256(f"{scope.value}\n{line}".encode("utf-8", "replace"))
    return digest.hexdigest()[:12]


ENTRY_LINE = re.compile(r"- \[(\d{4}-\d{2}-\d{2} \d{2}:\d{2}(?::\d{2})?)\] ?(.*)", re.DOTALL)

# What upstream's String.strip() and isBlank() treat as white space (Java's
# Character.isWhitespace): Python's str.isspace() less U+0085, U+00A0, U+2007 and U+202F.
JAVA_SPACE = (
    " \t\n\x0b\x0c\r\x1c\x1d\x1e\x1f\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2008\u2009\u200a\u2028\u2029\u205f\u3000"
)
# The `\s` a header line may end with in upstream's pattern `(?m)^## 核心记忆\s*$`.
_HEADER_TAIL = " \t\x0b\x0c\r"


def is_blank(line: str) -> bool:
    """Upstream's isBlank(): empty or only white space (a blank line is never an entry)."""
    return not line.strip(JAVA_SPACE)


def java_length(text: str) -> int:
    """The length upstream measures: Java chars, i.e. UTF-16 code units (an emoji counts 2)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


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


def normalised(content: str) -> str:
    """What makes two entries the same: their content with white space collapsed, any case."""
    return " ".join(content.split()).casefold()


def duplicates(entries: Sequence[MemoryEntry]) -> frozenset[int]:
    """Indexes of the entries that repeat an earlier one (after `normalised`)."""
    seen: set[str] = set()
    repeated: set[int] = set()
    for index, entry in enumerate(entries):
        key = normalised(entry.content)
        if key in seen:
            repeated.add(index)
        else:
            seen.add(key)
    return frozenset(repeated)


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


Gaps = Mapping[int, tuple[str, ...]]
NO_GAPS: Gaps = MappingProxyType({})


def with_gaps(lines: Sequence[str], gaps: Gaps, start: int = 0) -> list[str]:
    """Entry lines from `start` on, with the blank lines written between them (`gaps[i]` are
    those just before entry i): the section's text as upstream shows it."""
    if not gaps:
        return list(lines[start:])
    text: list[str] = []
    for index in range(start, len(lines)):
        if index > start:
            text.extend(gaps.get(index, ()))
        text.append(lines[index])
    return text


def trim_edges(lines: list[str], start: bool = True, end: bool = True) -> list[str]:
    """`lines` (changed in place) with the first trimmed at its start and the last at its end:
    upstream strips a section's text as a whole."""
    if lines and start:
        lines[0] = lines[0].lstrip(JAVA_SPACE)
    if lines and end:
        lines[-1] = lines[-1].rstrip(JAVA_SPACE)
    return lines


@dataclass
class MemoryDocument:
    """A parsed MEMORY.md. `lines` are the raw lines (split on '\\n', CR and BOM kept).

    Sections are read as upstream OryxOS reads them: a section runs from the first header of its
    kind to the next core or archival header, or to the end of the file; nothing else ends it,
    so any other heading inside is a line of the section. A later header of the same kind ends
    the section before it and opens none. A section's non-blank lines are its entries; as
    upstream strips the section's text, the first is trimmed at its start, the last at its end.
    """

    lines: list[str]
    # Runs of entry rows of the two sections, as (first row, row after the last): big files are
    # mostly one long run; blank rows separate runs.
    core_spans: list[tuple[int, int]] = field(default_factory=list)
    archival_spans: list[tuple[int, int]] = field(default_factory=list)
    # Every header row; only the first of each kind opens a section.
    core_headers: list[int] = field(default_factory=list)
    archival_headers: list[int] = field(default_factory=list)
    has_cr: bool = True  # some line may end in CR (parse() knows; True is always safe)

    def render(self) -> str:
        return "\n".join(self.lines)

    @cached_property
    def core_lines(self) -> list[str]:
        return trim_edges(self.raw_lines(Scope.CORE))

    @cached_property
    def archival_lines(self) -> list[str]:
        return trim_edges(self.raw_lines(Scope.ARCHIVAL))

    @cached_property
    def core_gaps(self) -> Gaps:
        return self._gaps(self.core_spans)

    @cached_property
    def archival_gaps(self) -> Gaps:
        return self._gaps(self.archival_spans)

    def raw_lines(self, scope: Scope) -> list[str]:
        """The entry lines of `scope` without their CR, not trimmed at the section's edges. (Row
        0, which may carry a BOM, is never an entry: a section starts only after its header.)"""
        lines: list[str] = []
        for start, stop in self.core_spans if scope is Scope.CORE else self.archival_spans:
            lines += self.lines[start:stop]
        if self.has_cr:  # CRLF files: the slow, exact way
            lines = [line[:-1] if line.endswith("\r") else line for line in lines]
        return lines

    def _gaps(self, spans: list[tuple[int, int]]) -> Gaps:
        """The blank rows between runs: every row between two runs of a section is blank."""
        gaps: dict[int, tuple[str, ...]] = {}
        index = 0
        for (start, stop), (following, _) in itertools.pairwise(spans):
            index += stop - start
            rows = range(stop, following)
            gaps[index] = tuple(self.lines[row].removesuffix("\r") for row in rows)
        return gaps

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

    def later_headers(self) -> list[int]:
        """Rows of the headers after the first of their kind: they open no section, so the
        lines under them are memory for neither upstream nor oryxtui."""
        return sorted([*self.core_headers[1:], *self.archival_headers[1:]])

    def with_sections(self, scope: Scope) -> MemoryDocument:
        """This document, or a copy with the header `scope` needs added (a blank file gets
        both): a new entry of `scope` then has a section to go in."""
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


# The only lines parse() must look at one by one: those that may be headers, and blank ones.
# Every other line is a line of the section it is in.
_MARKED_LINE = re.compile(r"\n(?:## [^\n]*|[^\S\n]*)(?=\n|\Z)")


def heading_kind(line: str) -> Scope | None:
    """The section a line opens: upstream's header pattern `(?m)^## 核心记忆\\s*$` (and the
    archival one), i.e. the header at the line's start and nothing after it but `\\s`."""
    if not line.startswith("## "):
        return None
    stripped = line.rstrip(_HEADER_TAIL)
    if stripped == CORE_HEADER:
        return Scope.CORE
    if stripped == ARCHIVAL_HEADER:
        return Scope.ARCHIVAL
    return None


def parse(text: str) -> MemoryDocument:
    """Parse MEMORY.md text; never fails, whatever the text."""
    doc = MemoryDocument(text.split("\n"), has_cr="\r" in text)
    section: Scope | None = None
    opened: set[Scope] = set()
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
        line = doc.lines[row]
        if row == 0 and line.startswith(BOM):
            line = line[1:]  # upstream misses a header after a BOM; oryxtui does not
        if is_blank(line):
            continue
        kind = heading_kind(line)
        if kind is not None:
            (doc.core_headers if kind is Scope.CORE else doc.archival_headers).append(row)
            section = None if kind in opened else kind
            opened.add(kind)
            continue
        run_start = row  # a line of the section after all ('## Notes', or row 0)
        close_run(row + 1)
        run_start = row + 1
    close_run(len(doc.lines))
    return doc


@dataclass(frozen=True, slots=True)
class InjectedWindow:
    """Which archival entries are injected: from entry `start` on, and the text lines that are
    (the entries with the blank lines between them, or only the clipped newest entry)."""

    start: int
    lines: tuple[str, ...]


def _java_tail(text: str, limit: int) -> str:
    """The longest end of `text` at most `limit` Java chars long, never half a character."""
    if limit <= 0:
        return ""
    if text.isascii():
        return text[max(0, len(text) - limit) :]
    count, cut = 0, len(text)
    for index in range(len(text) - 1, -1, -1):
        count += 2 if text[index] > "\uffff" else 1
        if count > limit:
            break
        cut = index
    return text[cut:]


def injected_window(
    archival_lines: Sequence[str], max_chars: int, gaps: Gaps = NO_GAPS
) -> InjectedWindow:
    """The longest run of whole newest entries whose text as injected ('\\n'-joined, with the
    blank lines between them) is at most `max_chars` long, counted in Java chars as upstream
    counts its window. Upstream cuts mid-line; oryxtui keeps whole lines."""
    count = len(archival_lines)
    total, start = -1, count
    for row in range(count - 1, -1, -1):
        total += java_length(archival_lines[row]) + 1
        if gaps and row + 1 < count:
            total += sum(java_length(gap) + 1 for gap in gaps.get(row + 1, ()))
        if total > max_chars:
            break
        start = row
    if start == count and archival_lines:
        return InjectedWindow(count - 1, (ELLIPSIS + _java_tail(archival_lines[-1], max_chars),))
    return InjectedWindow(start, tuple(with_gaps(archival_lines, gaps, start)))


def render_context(
    core_lines: Sequence[str], window: InjectedWindow, core_gaps: Gaps = NO_GAPS
) -> str:
    """The memory block exactly as upstream's load() builds it: each header, a line break, its
    section's text; so an empty section leaves an empty line after its header."""
    core = "\n".join(with_gaps(core_lines, core_gaps))
    return f"{CORE_HEADER}\n{core}\n{ARCHIVAL_HEADER}\n" + "\n".join(window.lines)
