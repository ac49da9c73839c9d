"""Upstream OryxOS's MarkdownMemoryStore (oryx-labs/oryxos a27474c), ported line for line to
Python as the oracle for "oryxtui reads MEMORY.md exactly as upstream does".

Java's semantics are kept where they differ from Python's: `strip()` and `isBlank()` use
Character.isWhitespace, `\\s` is `[ \\t\\n\\x0B\\f\\r]`, `String.lines()` splits at `\\n`, `\\r\\n`
and `\\r`, and `length()` counts UTF-16 code units. Python's `re` treats only `\\n` as a line
break for `^` and `$`, where Java also takes a lone `\\r`, U+0085, U+2028 and U+2029: texts with
those are outside what this port models (oryxtui's README lists the difference).
"""

from __future__ import annotations

import re

CORE_HEADER = "## 核心记忆"
ARCHIVE_HEADER = "## 归档记忆"
MAX_ARCHIVE_CHARS = 4000
_CORE_HEADER_LINE = re.compile("(?m)^" + re.escape(CORE_HEADER) + r"[ \t\n\x0b\f\r]*$")
_ARCHIVE_HEADER_LINE = re.compile("(?m)^" + re.escape(ARCHIVE_HEADER) + r"[ \t\n\x0b\f\r]*$")
# Character.isWhitespace
JAVA_WHITESPACE = (
    " \t\n\x0b\x0c\r\x1c\x1d\x1e\x1f\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2008\u2009\u200a\u2028\u2029\u205f\u3000"
)


def java_strip(text: str) -> str:
    return text.strip(JAVA_WHITESPACE)


def java_is_blank(text: str) -> bool:
    return not java_strip(text)


def java_lines(text: str) -> list[str]:
    """String.lines(): split at \\n, \\r\\n and \\r; no empty last line."""
    lines = re.split(r"\r\n|\r|\n", text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _java_substring_from_end(text: str, units: int) -> str:
    """archive.substring(archive.length() - units), on UTF-16 code units (it may split an
    emoji's surrogate pair: the half is kept as a lone surrogate)."""
    encoded = text.encode("utf-16-le", "surrogatepass")
    return encoded[len(encoded) - 2 * units :].decode("utf-16-le", "surrogatepass")


def java_length(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def extract_section(raw: str, header: str) -> str:
    header_line = _CORE_HEADER_LINE if header == CORE_HEADER else _ARCHIVE_HEADER_LINE
    start = header_line.search(raw)
    if start is None:
        return ""
    content_start = start.end()
    end = len(raw)
    next_core = _CORE_HEADER_LINE.search(raw, content_start)
    if next_core is not None:
        end = min(end, next_core.start())
    next_archive = _ARCHIVE_HEADER_LINE.search(raw, content_start)
    if next_archive is not None:
        end = min(end, next_archive.start())
    return java_strip(raw[content_start:end])


def truncate_if_needed(archive: str, max_chars: int = MAX_ARCHIVE_CHARS) -> str:
    if java_length(archive) <= max_chars:
        return archive
    return _java_substring_from_end(archive, max_chars)


def load(raw: str, max_chars: int = MAX_ARCHIVE_CHARS) -> str:
    core = extract_section(raw, CORE_HEADER)
    archive = truncate_if_needed(extract_section(raw, ARCHIVE_HEADER), max_chars)
    return CORE_HEADER + "\n" + core + "\n" + ARCHIVE_HEADER + "\n" + archive


def recall_by_keyword(raw: str, keyword: str) -> list[str]:
    needle = keyword.lower()
    return [
        line
        for line in java_lines(extract_section(raw, ARCHIVE_HEADER))
        if not java_is_blank(line) and needle in line.lower()
    ]


def archival_entries(raw: str) -> list[str]:
    return [
        line for line in java_lines(extract_section(raw, ARCHIVE_HEADER)) if not java_is_blank(line)
    ]


def core_entries(raw: str) -> list[str]:
    return [
        line for line in java_lines(extract_section(raw, CORE_HEADER)) if not java_is_blank(line)
    ]
