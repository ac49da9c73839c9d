"""The one way into a memory. Every entry that goes in — saved, edited, imported, brought back,
restored, a digest, a tool's save — passes here before anything is changed: its text is
flattened to one clean line (no forged header, no second line) and held to
`memory.max_entry_chars`, so that no path can put a document into the injected window."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from oryxtui.config import DEFAULT_MAX_ENTRY_CHARS
from oryxtui.errors import Unprocessable, UsageError
from oryxtui.memory.format import (
    MemoryEntry,
    entry_from_line,
    entry_line,
    is_entry_time,
    sanitize_content,
)


@dataclass(frozen=True)
class Admission:
    """What an entry must be to go into a memory."""

    max_chars: int = DEFAULT_MAX_ENTRY_CHARS

    def text(self, content: str) -> str:
        """`content` as an entry's text: one clean line, not empty, not too long."""
        clean = sanitize_content(content)
        if not clean:
            raise UsageError("Nothing to save: the content is empty.")
        if len(clean) > self.max_chars:
            # One pasted document would fill the injected window and push every other
            # archival entry out of the prompt.
            raise UsageError(
                f"The entry is {len(clean):,} characters, over the limit of "
                f"{self.max_chars:,} (memory.max_entry_chars); shorten it or save it as "
                "several entries."
            )
        return clean

    def entry(self, entry: MemoryEntry) -> MemoryEntry:
        """An entry that keeps its time (exported, recorded, lost), cleaned as a save is."""
        content = self.text(entry.content)
        time = sanitize_content(entry.time or "")
        if len(time) == 16 and is_entry_time(time):
            time += ":00"  # to the second, as every store keeps times (a table cannot do less)
        line = entry_line(time, content) if is_entry_time(time) else f"- {content}"
        return entry_from_line(line, entry.scope)

    def entries(self, entries: Sequence[MemoryEntry], what: str) -> list[MemoryEntry]:
        """All of `entries` admitted, empty ones left out; or, if one is too long, a
        UsageError naming it (`what` says where they come from), and none."""
        admitted: list[MemoryEntry] = []
        for number, entry in enumerate(entries, 1):
            if not sanitize_content(entry.content):
                continue
            try:
                admitted.append(self.entry(entry))
            except UsageError as exc:
                raise UsageError(
                    f"Entry {number:,} of {what} is refused, so nothing was written: {exc}"
                ) from None
        return admitted


def searchable(query: str, what: str = "keyword") -> str:
    """A recall keyword or a search as every store can take it: a NUL character (which no
    entry holds, and PostgreSQL refuses) is bad input, said in one sentence — never a store
    failing."""
    if "\x00" in query:
        raise Unprocessable(
            f"The {what} holds a NUL character, which no entry can hold; remove it."
        )
    return query
