"""The dashboard's footer."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Footer
from textual.widgets._footer import FooterKey  # textual==8.2.8 (pinned)


class KeysFooter(Footer):
    """Textual's footer, with its keys in the first frame: Textual's own waits a refresh for
    the screen to announce its bindings, so the keys arrive a frame after the content. And it
    is composed again only when what it shows changed: Textual's recomposes on every
    announcement, and a start or an agent's load makes several in a row. Each key is made in
    the footer's style: Textual's are made compact and then bound to the footer's (not
    compact), two restyles of every key on the way to the first frame."""

    def __init__(self) -> None:
        super().__init__()
        self._bindings_ready = True  # textual==8.2.8 (pinned): compose the keys at once
        self._drawn: tuple[object, ...] | None = None  # the bindings the keys were made from

    def _shown(self) -> tuple[object, ...]:
        return tuple(
            (key, binding, enabled, tooltip)
            for key, (_, binding, enabled, tooltip) in self.screen.active_bindings.items()
        )

    def compose(self) -> ComposeResult:
        self._drawn = self._shown()
        for widget in super().compose():
            if isinstance(widget, FooterKey) and not widget.has_class("-command-palette"):
                widget.set_reactive(FooterKey.compact, self.compact)  # the palette's is not bound
            yield widget

    async def recompose(self) -> None:
        if self.is_attached and self._shown() == self._drawn:
            return
        await super().recompose()
