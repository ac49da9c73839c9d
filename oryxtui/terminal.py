"""Text from memory, files or models, made safe for a terminal: every control is shown, none obeyed.

An escape sequence in a hand-edited MEMORY.md or a model's reply could set the window title,
write the clipboard (OSC 52) or plant a hyperlink (OSC 8). Shown as `␛]52;…` it does nothing.
"""

from __future__ import annotations

import io
from typing import TextIO

# C0 controls as their Unicode control pictures (ESC is ␛), DEL as ␡, a C1 control as its
# seven-bit form (0x9b, the one-byte CSI, is ␛[), and the bidirectional overrides and isolates,
# which reorder what a terminal shows, by name.
_VISIBLE = {code: chr(0x2400 + code) for code in range(0x20)}
_VISIBLE[0x7F] = "␡"
_VISIBLE.update({code: "␛" + chr(code - 0x40) for code in range(0x80, 0xA0)})
_VISIBLE.update(
    {code: f"<U+{code:04X}>" for code in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))}
)
_KEEP_LINES = {**_VISIBLE}
del _KEEP_LINES[0x09], _KEEP_LINES[0x0A]


def neutralize(text: str, keep_lines: bool = True) -> str:
    """`text` with every control character shown as a visible stand-in. Tabs and line breaks
    stay when `keep_lines` (for text printed as lines); otherwise they are shown too."""
    return text.translate(_KEEP_LINES if keep_lines else _VISIBLE)


def is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (ValueError, io.UnsupportedOperation):
        return False
