"""A whole MEMORY.md, parsed losslessly: the document keeps every line exactly as read, so
rendering is `'\\n'.join(lines)` and text the parser does not understand survives byte for byte;
entries are views onto those lines. Sections are read as upstream OryxOS reads them."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType

from oryxtui.memory.format import (
    ARCHIVAL_HEADER,
    BOM,
    CORE_HEADER,
    JAVA_SPACE,
    EntrySequence,
    RecallIndex,
    Scope,
    is_blank,
)

# The `\s` a header line may end with in upstream's pattern `(?m)^## 核心记忆\s*$`.
_HEADER_TAIL = " \t\x0b\x0c\r"

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
