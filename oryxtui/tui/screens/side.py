"""Where the dashboard's chat/prompt column is: shown and hidden by its screen's classes
(`side-open`, `side-hidden`; narrow terminals show it only when opened).

It starts hidden, so the first frame does not wait for it: it is mounted right after that frame
(`ready`), and whatever opens it before then waits for that mount. What it shows is its own
(`SideColumn`); this is only the layout, of any screen with a `#body` to mount it in."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.containers import Horizontal

from oryxtui.tui.widgets.side_column import SideColumn

if TYPE_CHECKING:
    from textual.screen import Screen
    from textual.widget import AwaitMount


class Side:
    def __init__(self, screen: Screen[None], column: SideColumn, left: Callable[[], None]) -> None:
        """`left` is called when hiding takes the focus out of the column."""
        self.screen = screen
        self.column = column  # mounted by `ready`
        self.left = left
        self._mounting: AwaitMount | None = None

    async def ready(self) -> SideColumn:
        """The column, mounted (the first call mounts it)."""
        if self._mounting is None:
            body = self.screen.query_one("#body", Horizontal)
            if not body.is_attached:  # the screen closed first (a quit before the first frame)
                return self.column
            self._mounting = body.mount(self.column)
        await self._mounting
        return self.column

    async def open(self, tab: str | None = None) -> None:
        """Show the column (whatever hid it) on `tab` (None: the tab it was on): a key never
        types into something the user cannot see."""
        column = await self.ready()
        screen = self.screen
        screen.add_class("side-open")
        screen.remove_class("side-hidden")
        column.active = tab or column.active or "chat-tab"

    def hide(self) -> None:
        """Hide the column; the focus, if it was there, leaves it (`left`)."""
        screen = self.screen
        focused = screen.focused
        screen.remove_class("side-open")
        screen.add_class("side-hidden")
        if focused is not None and self.column in focused.ancestors_with_self:
            self.left()

    @property
    def shown(self) -> bool:
        """The column is on screen."""
        screen = self.screen
        narrow = screen.has_class("narrow")
        return screen.has_class("side-open") if narrow else not screen.has_class("side-hidden")
