"""The injected window: which archival entries the memory block holds (the newest whole lines
within `archival_max_chars`, counted as upstream counts), and the block itself."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from oryxtui.memory.document import NO_GAPS, Gaps, with_gaps
from oryxtui.memory.format import ARCHIVAL_HEADER, CORE_HEADER, ELLIPSIS, java_length


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
