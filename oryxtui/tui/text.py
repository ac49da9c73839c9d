"""Text on the dashboard's screen is data: no control character or escape sequence in it is
ever obeyed by the terminal.

`Neutralised` is the one place that guarantees it: a Textual line filter, applied to every line
every widget renders (panes, tables, notifications, titles, modals, the browser mode's frames
too), after rendering and before anything is written to the terminal. Widgets that lay text out
in rows use `display_text` so that the visible stand-ins are counted in the layout; the filter
catches everything else, whatever widget drew it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.segment import Segment
from rich.style import Style
from textual.color import Color
from textual.filter import LineFilter

from oryxtui.terminal import UNSAFE, neutralize

if TYPE_CHECKING:
    from textual.app import App
    from textual.notifications import SeverityLevel
    from textual.widget import Widget


def display_text(text: str, limit: int | None = None) -> str:
    """`text` as one row: escape sequences and controls shown visibly (`␛]52;…`), tabs and line
    breaks as spaces."""
    if limit is not None:
        text = text[: limit * 2 + 64]  # a row never shows more; keeps 1 MB lines cheap to draw
    return neutralize(text).replace("\t", " ").replace("\n", " ")


def tell(
    node: Widget | App[Any], message: str, title: str = "", severity: SeverityLevel = "information"
) -> None:
    """A notification: its text shown as one row of data (never markup, never a control
    sequence), from the app's thread or a worker's (Textual's `notify` is thread-safe)."""
    node.notify(display_text(message), title=title, severity=severity, markup=False)


class Neutralised(LineFilter):
    """Every control character in a rendered line shown as its visible stand-in (`␛`, `␇`,
    `<U+202E>`), and links that would carry one dropped. A control takes no cell on a
    terminal, its stand-in one: the line is cut back to the width it was laid out with."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        if not any(UNSAFE.search(text) or _unsafe_link(style) for text, style, _ in segments):
            return segments
        width = Segment.get_line_length(segments)
        safe = [
            Segment(
                neutralize(text, keep_lines=False),
                style.update_link(None) if _unsafe_link(style) else style,  # type: ignore[union-attr]
                control,
            )
            for text, style, control in segments
        ]
        return Segment.adjust_line_length(safe, width, pad=False)


def _unsafe_link(style: Style | None) -> bool:
    link = style.link if style is not None else None
    return link is not None and UNSAFE.search(link) is not None
