"""Big MEMORY.md files in bounded memory.

A file of a million entries is tens of MB; parsing it whole takes a second and a few hundred MB.
Here the headings are found by scanning the bytes, the newest part of the archival section is
read and parsed on its own, and the rest is walked in chunks of whole lines, each parsed by the
same parser with the heading of its section in front, so every answer is the one `parse` gives.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from oryxtui.memory.document import NO_GAPS, Gaps, MemoryDocument, heading_kind, parse, trim_edges
from oryxtui.memory.format import ARCHIVAL_HEADER, BOM, CORE_HEADER, Scope, is_blank

CHUNK_BYTES = 4 << 20
_PEEK = 4096
_BOM = BOM.encode("utf-8")

Source = int | bytes  # an open file's descriptor, or a file's bytes already in memory


def _pread(source: Source, count: int, offset: int) -> bytes:
    if isinstance(source, bytes):
        return source[offset : offset + count]
    return os.pread(source, count, offset)


@dataclass(frozen=True, slots=True)
class Body:
    """The bytes [start, end) of a core or archival section: after the first header of its
    kind, up to the next core or archival header (or the file's end)."""

    scope: Scope
    start: int
    end: int


def _heading_at(fd: Source, offset: int, size: int) -> Scope | None:
    line = _pread(fd, _PEEK, offset)
    if not line.startswith(b"## ") and not (offset == 0 and line.startswith(_BOM + b"## ")):
        return None
    if b"\n" not in line and offset + len(line) < size:  # a long line: read all of it
        line = _pread(fd, _line_end(fd, offset, size) - offset, offset)
    text = line.split(b"\n", 1)[0].decode("utf-8", errors="replace")
    return heading_kind(text.removeprefix(BOM) if offset == 0 else text)


def section_bodies(fd: Source, size: int) -> list[Body]:
    """The core and the archival section of the file, in order, found without decoding
    entries; as `parse` reads them."""
    headings: list[tuple[int, Scope]] = []
    first = _heading_at(fd, 0, size)
    if first is not None:
        headings.append((0, first))
    position, previous = 0, b""
    while position < size:
        chunk = _pread(fd, CHUNK_BYTES, position)
        if not chunk:
            break
        window = previous + chunk
        base = position - len(previous)
        hit = window.find(b"\n## ")
        while hit >= 0:
            start = base + hit + 1
            kind = _heading_at(fd, start, size)
            if kind is not None:
                headings.append((start, kind))
            hit = window.find(b"\n## ", hit + 1)
        previous = window[-3:]  # a "\n## " may straddle two chunks
        position += len(chunk)
    bodies, opened = [], set()
    for index, (start, kind) in enumerate(headings):
        if kind not in opened:
            opened.add(kind)
            line_end = _line_end(fd, start, size)
            end = headings[index + 1][0] if index + 1 < len(headings) else size
            bodies.append(Body(kind, min(line_end, end), end))
    return bodies


def _line_end(fd: Source, offset: int, size: int) -> int:
    """The offset just after the line break ending the line at `offset` (or the file's end)."""
    while offset < size:
        chunk = _pread(fd, 65536, offset)
        found = chunk.find(b"\n")
        if found >= 0:
            return offset + found + 1
        offset += len(chunk)
    return size


def _piece(scope: Scope, data: bytes, errors: str = "strict") -> MemoryDocument:
    """A piece of a section body (whole lines), parsed as `parse` parses the section."""
    header = CORE_HEADER if scope is Scope.CORE else ARCHIVAL_HEADER
    return parse(header + "\n" + data.decode("utf-8", errors=errors))


def chunks(fd: Source, body: Body) -> Iterator[bytes]:
    """`body` in whole-line pieces of about CHUNK_BYTES (a longer line comes whole)."""
    position = body.start
    while position < body.end:
        data = _pread(fd, min(CHUNK_BYTES, body.end - position), position)
        if not data:
            return
        if position + len(data) < body.end:
            cut = data.rfind(b"\n")
            if cut >= 0:
                data = data[: cut + 1]
            else:  # one line longer than a chunk: read on to its end
                data = _pread(fd, _line_end(fd, position, body.end) - position, position)
        position += len(data)
        yield data


def body_lines(fd: Source, body: Body, errors: str) -> Iterator[list[str]]:
    """The entry lines of `body`, chunk by chunk (`errors` as for bytes.decode), the first and
    the last trimmed as the whole section's text is."""
    held: list[str] | None = None
    for data in chunks(fd, body):
        lines = _piece(body.scope, data, errors).raw_lines(body.scope)  # edges not trimmed
        if not lines:
            continue
        if held is None:
            trim_edges(lines, end=False)
        else:
            yield held
        held = lines
    if held is not None:
        yield trim_edges(held, start=False)


@dataclass(frozen=True)
class Tail:
    """The file's core entries and its newest archival entries (each with the blank lines
    between them); `older_bytes` of the archival section were left out."""

    core_lines: list[str]
    core_gaps: Gaps
    archival_lines: list[str]
    archival_gaps: Gaps
    older_bytes: int


def read_tail(fd: Source, size: int, newest_bytes: int) -> Tail | None:
    """Core plus about `newest_bytes` of the newest archival entries; None when the whole file
    is as cheap (or has no archival section, or the part read is not UTF-8)."""
    bodies = {body.scope: body for body in section_bodies(fd, size)}
    archival = bodies.get(Scope.ARCHIVAL)
    if archival is None or archival.end - archival.start <= newest_bytes:
        return None
    try:
        core_lines: list[str] = []
        core_gaps: Gaps = NO_GAPS
        if Scope.CORE in bodies:
            core = bodies[Scope.CORE]
            document = _piece(Scope.CORE, _pread(fd, core.end - core.start, core.start))
            core_lines, core_gaps = document.core_lines, document.core_gaps
        start = _line_end(fd, archival.end - newest_bytes, archival.end)
        piece = _piece(Scope.ARCHIVAL, _pread(fd, archival.end - start, start))
    except UnicodeDecodeError:
        return None
    # The section is longer than `newest_bytes`, so the piece never starts at its first line.
    lines = trim_edges(piece.raw_lines(Scope.ARCHIVAL), start=False)
    return Tail(core_lines, core_gaps, lines, piece.archival_gaps, start - archival.start)


def all_lines(fd: Source, size: int, errors: str) -> Iterator[tuple[Scope, list[str]]]:
    """Every entry line of the file, section by section, chunk by chunk."""
    for body in section_bodies(fd, size):
        for lines in body_lines(fd, body, errors):
            yield body.scope, lines


def _is_entry(line: bytes) -> bool:
    return not is_blank(line.decode("utf-8", errors="replace"))


def _last_entry_end(fd: Source, body: Body) -> int | None:
    """Where the body's last entry line ends (its line break, or the file's end); None if the
    body holds only blank lines. Reads backwards, a chunk at a time."""
    position, carry = body.end, b""
    while position > body.start:
        start = max(body.start, position - CHUNK_BYTES)
        data = _pread(fd, position - start, start) + carry
        lines = data.split(b"\n")
        whole_from = 0 if start == body.start else 1  # lines[0] may begin before `start`
        end = start + len(data)
        for line in reversed(lines[whole_from:]):
            if _is_entry(line):
                return end
            end -= len(line) + 1
        carry, position = (lines[0] if whole_from else b""), start
    return None


@dataclass(frozen=True, slots=True)
class Insertion:
    """Where new entries go, in bytes: `before`, the entry lines (joined by the file's line
    break `eol`, CRLF or LF) and `after` go in at `offset` (one of `before` and `after` is a
    line break)."""

    offset: int
    before: bytes
    after: bytes
    eol: bytes = b"\n"


def insertion_point(fd: Source, size: int, scope: Scope) -> Insertion | None:
    """The place for a new `scope` entry, where upstream appends it: after that section's last
    entry line, or after its header. None when the file has no header for `scope` yet (see
    `with_entry`)."""
    body = next((body for body in section_bodies(fd, size) if body.scope is scope), None)
    if body is None:
        return None
    line_end = _last_entry_end(fd, body)
    if line_end is None:
        ends_with_break = _pread(fd, 1, body.start - 1) == b"\n"
        line_end = body.start - 1 if ends_with_break else body.start
    first_end = _line_end(fd, 0, size)
    tail = _pread(fd, 2, max(0, first_end - 2))  # the first line's last bytes
    eol = "\r" if tail.removesuffix(b"\n").endswith(b"\r") else ""
    line_break = (eol + "\n").encode()
    if line_end < size:  # the line ends with a line break at `line_end`
        return Insertion(line_end + 1, b"", line_break, line_break)
    # The file's last line, with no line break (perhaps half of one: a CR).
    ends_in_cr = size > 0 and _pread(fd, 1, size - 1) == b"\r"
    return Insertion(size, b"\n" if ends_in_cr else line_break, b"", line_break)


def copy_with(fd: Source, size: int, insertion: Insertion, text: bytes) -> Iterator[bytes]:
    """The file's bytes with `text` put in at the insertion, chunk by chunk; raises
    UnicodeDecodeError (before the end) when the file is not valid UTF-8."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    for start, stop in ((0, insertion.offset), (insertion.offset, size)):
        position = start
        while position < stop:
            data = _pread(fd, min(CHUNK_BYTES, stop - position), position)
            if not data:
                break
            decoder.decode(data)
            position += len(data)
            yield data
        if start == 0:
            yield insertion.before + text + insertion.after
    decoder.decode(b"", final=True)


def with_entry(text: str, line: str, scope: Scope) -> str:
    """A whole MEMORY.md's text with `line` put in as the newest entry of `scope`."""
    return with_entries(text, {scope: [line]})


def with_entries(text: str, lines: Mapping[Scope, Sequence[str]]) -> str:
    """A whole MEMORY.md's text with each scope's `lines` put in, in order, as its newest
    entries, at the `insertion_point` (a missing header is added first): what putting them in
    one by one gives, in one pass over the text per section."""
    data = text.encode("utf-8")
    for scope, new in lines.items():
        if not new:
            continue
        place = insertion_point(data, len(data), scope)
        if place is None:
            data = parse(data.decode("utf-8")).with_sections(scope).render().encode("utf-8")
            place = insertion_point(data, len(data), scope)
            assert place is not None, "with_sections adds the header"
        block = place.eol.join(line.encode("utf-8") for line in new)
        data = b"".join(copy_with(data, len(data), place, block))
    return data.decode("utf-8")
