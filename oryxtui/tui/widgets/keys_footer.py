"""The dashboard's footer."""

from __future__ import annotations

from textual.widgets import Footer


class KeysFooter(Footer):
    """Textual's footer, with its keys in the first frame: Textual's own waits a refresh for
    the screen to announce its bindings, so the keys arrive a frame after the content."""

    def __init__(self) -> None:
        super().__init__()
        self._bindings_ready = True  # textual==8.2.8 (pinned): compose the keys at once
