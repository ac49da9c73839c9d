"""The dashboard's footer."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Footer
from textual.widgets._footer import FooterKey, FooterLabel  # textual==8.2.8 (pinned)

MORE = "…more (?)"
NARROW = 100  # columns


class KeysFooter(Footer):
    """Textual's footer, with its keys in the first frame: Textual's own waits a refresh for
    the screen to announce its bindings, so the keys arrive a frame after the content. And it
    is composed again only when what it shows changed: Textual's recomposes on every
    announcement, and a start or an agent's load makes several in a row. Each key is made in
    the footer's style: Textual's are made compact and then bound to the footer's (not
    compact), two restyles of every key on the way to the first frame. Keys are shown whole or
    not at all: where they do not all fit, the last ones give way to "…more (?)"."""

    def __init__(self) -> None:
        super().__init__()
        self._bindings_ready = True  # textual==8.2.8 (pinned): compose the keys at once
        self._drawn: tuple[object, ...] | None = None  # the bindings the keys were made from

    def _shown(self) -> tuple[object, ...]:
        keys = self.screen.active_bindings.items()
        return (
            self.compact,
            self.show_command_palette,
            *((key, binding, enabled, tip) for key, (_, binding, enabled, tip) in keys),
        )

    def compose(self) -> ComposeResult:
        self._drawn = self._shown()
        more = FooterLabel(MORE, id="footer-more")
        more.display = False
        for widget in super().compose():
            if isinstance(widget, FooterKey) and widget.has_class("-command-palette"):
                yield more  # after the keys, before the palette's (docked right)
                more = None  # type: ignore[assignment]
            elif isinstance(widget, FooterKey):
                widget.set_reactive(FooterKey.compact, self.compact)  # the palette's is not bound
            yield widget
        if more is not None:
            yield more

    async def recompose(self) -> None:
        if self.is_attached and self._shown() == self._drawn:
            return
        await super().recompose()
        self.call_after_refresh(self._fit)

    def on_mount(self) -> None:
        self.call_after_refresh(self._fit)

    def on_resize(self) -> None:
        # Narrow (80 columns): keys closer together, and the palette's key left out (ctrl+p
        # still opens it; help lists it), so the place's keys and Help and Quit fit.
        narrow = self.size.width < NARROW
        if narrow != self.compact:
            self.compact = narrow
            self.show_command_palette = not narrow
        self._fit()

    def _fit(self) -> None:
        """Every key shown again, then cut where they do not fit (once laid out)."""
        for key in self._keys():
            key.display = True
        self.query_one("#footer-more").display = False
        self.call_after_refresh(self._cut)

    def _keys(self) -> list[FooterKey]:
        return [k for k in self.query(FooterKey) if not k.has_class("-command-palette")]

    def _cut(self, tries: int = 20) -> None:
        palette = [k for k in self.query(FooterKey) if k.has_class("-command-palette")]
        keys = self._keys()
        laid_out = all(key.size.width for key in [*keys, *palette]) and self.region.width
        if not laid_out:  # not laid out yet (a recompose under way): look again next frame
            if tries:
                self.call_after_refresh(self._cut, tries - 1)
            return
        edge = palette[0].region.x if palette else self.region.right
        # Past the footer's edge a key is laid out but not shown: its virtual place tells.
        if not keys or keys[-1].virtual_region.right <= edge:
            return
        room = edge - len(MORE) - 1
        cut = next((i for i, k in enumerate(keys) if k.virtual_region.right > room), len(keys))
        for key in keys[cut:]:
            key.display = False
        self.query_one("#footer-more").display = True
