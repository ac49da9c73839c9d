"""The vocabulary of memory: scopes, entries and their lines, sanitising (so no text can forge
a section or an entry), the lengths upstream measures, and recall's matching rule. The parser
of a whole MEMORY.md is `document`; the injected window is `window`."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import overload

from oryxtui.errors import UsageError

CORE_HEADER = "## 核心记忆"
ARCHIVAL_HEADER = "## 归档记忆"
BOM = "\ufeff"
ELLIPSIS = "…"
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"
Clock = Callable[[], datetime]  # what time it is: now, or a test's fixed time


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


# Terminal escape sequences, taken out whole (only their ESC would go with the controls, and
# `[31m` stay as text): CSI (ESC [ or 0x9B, parameters, a final byte); OSC, DCS, SOS, PM and
# APC (ESC ] P X ^ _, or 0x9D 0x90 0x98 0x9E 0x9F) up to their BEL or string terminator, or
# the end of the text; and the other ESC sequences a terminal obeys (ESC ( B, ESC 7, ESC M,
# ESC c; a stray ESC before a plain lowercase letter leaves the letter: it is no sequence).
_ESCAPES = re.compile(
    r"(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b(?:[\x20-\x2f]+[\x30-\x7e]?|[\x30-\x5fcno|}~])"
)

_INTRODUCER = re.compile("[\x1b\x90-\x9f]")  # what starts a sequence: checked before the work


def sanitize_content(text: str) -> str:
    """Flatten `text` to one safe line: it can never forge a section header or an entry, and
    carries no terminal escape sequence (taken out whole)."""
    if _INTRODUCER.search(text):
        text = _ESCAPES.sub("", text)
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

    def positions(self, keyword: str, word_start: bool = False) -> list[int]:
        """Indexes of the lines that contain `keyword`, case-insensitively, in order;
        `word_start`: only where it begins a word (no letter or digit just before it)."""
        needle = keyword.lower()
        if not needle or "\n" in needle or not self._rows:
            return []
        text = self._text
        hits: list[int] = []
        row, counted = 0, 0  # `row` is the row of position `counted`
        position = 0
        while (found := text.find(needle, position)) >= 0:
            if word_start and found and text[found - 1].isalnum():
                position = found + 1  # inside a word: look further along the line
                continue
            row += text.count("\n", counted, found)
            counted = found
            hits.append(row)
            end = text.find("\n", found + len(needle))
            if end < 0:
                break
            row += 1  # a keyword holds no line break: the line ends at `end`
            counted = position = end + 1
        return hits


def parse_scope(scope: str | Scope | None) -> Scope:
    """The one rule for a scope, wherever it comes from (CLI, REST, a tool call), as upstream
    reads it: any case, blank or missing means archival."""
    if scope is None or not str(scope).strip():
        return Scope.ARCHIVAL
    try:
        return Scope(str(scope).strip().lower())
    except ValueError:
        raise UsageError(f"Unknown scope {str(scope)!r}: use 'core' or 'archival'.") from None
