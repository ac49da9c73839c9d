"""Memory text is data: make it safe to draw (every control character shown, none obeyed)."""

from __future__ import annotations

from oryxtui.terminal import neutralize


def display_text(text: str, limit: int | None = None) -> str:
    """`text` as one row: escape sequences and controls shown visibly (`␛]52;…`), tabs and line
    breaks as spaces."""
    if limit is not None:
        text = text[: limit * 2 + 64]  # a row never shows more; keeps 1 MB lines cheap to draw
    return neutralize(text).replace("\t", " ").replace("\n", " ")
