"""Memory text is data: make it safe to draw (no escape sequences, no control characters)."""

from __future__ import annotations

import re

_ESCAPE_SEQUENCE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor movement
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC: titles, hyperlinks, clipboard
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"  # DCS, SOS, PM, APC
    r"|\x1b[@-Z\\-_]"  # two-character sequences
    r"|\x9b[0-?]*[ -/]*[@-~]"  # 8-bit CSI
)
_CONTROL = {code: " " for code in [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)]}


def display_text(text: str, limit: int | None = None) -> str:
    """`text` with escape sequences removed and other control characters shown as spaces."""
    if limit is not None:
        text = text[: limit * 2 + 64]  # a row never shows more; keeps 1 MB lines cheap to draw
    return _ESCAPE_SEQUENCE.sub("", text).translate(_CONTROL)
