"""Text from memory, files or models, made safe for a terminal: every control is shown, none obeyed.

An escape sequence in a hand-edited MEMORY.md or a model's reply could set the window title,
write the clipboard (OSC 52) or plant a hyperlink (OSC 8). Shown as `␛]52;…` it does nothing.
"""

from __future__ import annotations

import io
import re
from typing import TextIO

# C0 controls as their Unicode control pictures (ESC is ␛), DEL as ␡, a C1 control as its
# seven-bit form (0x9b, the one-byte CSI, is ␛[); by name, the bidirectional overrides,
# isolates and marks, which reorder what a terminal shows, and the characters that take no
# room at all (zero-width space, non-joiner, word joiner, invisible operators, a BOM inside
# text), which hide what sits between two words. The zero-width joiner is shown too, but
# between two pictographs, where it makes one emoji of them (👩‍💻).
_BIDI = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
_INVISIBLE = (0x180E, 0x200B, 0x200C, *range(0x2060, 0x2065), 0xFEFF)
_VISIBLE = {code: chr(0x2400 + code) for code in range(0x20)}
_VISIBLE[0x7F] = "␡"
_VISIBLE.update({code: "␛" + chr(code - 0x40) for code in range(0x80, 0xA0)})
_VISIBLE.update({code: f"<U+{code:04X}>" for code in (*_BIDI, *_INVISIBLE)})
_PICTOGRAPH = "\u2600-\u27bf\U0001f000-\U0001faff"
_LONE_JOINER = re.compile(f"(?<![{_PICTOGRAPH}])\u200d|\u200d(?![{_PICTOGRAPH}])")
_KEEP_LINES = {**_VISIBLE}
del _KEEP_LINES[0x09], _KEEP_LINES[0x0A]
# Any character `neutralize` may change: a fast test before the work.
UNSAFE = re.compile("[" + "".join(re.escape(chr(code)) for code in sorted(_VISIBLE)) + "\u200d]")


def neutralize(text: str, keep_lines: bool = True) -> str:
    """`text` with every control character, and every character that reorders or hides
    text, shown as a visible stand-in. Tabs and line breaks stay when `keep_lines` (for text
    printed as lines); otherwise they are shown too."""
    shown = text.translate(_KEEP_LINES if keep_lines else _VISIBLE)
    return _LONE_JOINER.sub("<U+200D>", shown) if "\u200d" in shown else shown


def is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (ValueError, io.UnsupportedOperation):
        return False


# JSON escapes only C0 controls; these others, which a terminal may obey or reorder by, are
# written as \uXXXX escapes too (the same text once decoded).
_JSON_ESCAPES = {code: f"\\u{code:04x}" for code in (0x7F, *range(0x80, 0xA0), *_BIDI)}


def json_text(value: object, indent: int | None = 2) -> str:
    """`value` as JSON (one line with `indent=None`), exact once decoded, with no character
    a terminal obeys."""
    import json

    return json.dumps(value, ensure_ascii=False, indent=indent).translate(_JSON_ESCAPES)
