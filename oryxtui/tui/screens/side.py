"""The dashboard's chat/prompt column: shown and hidden by the screen's classes (`side-open`,
`side-hidden`; narrow terminals show it only when opened)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.widgets import TabbedContent

if TYPE_CHECKING:
    from oryxtui.tui.screens.dashboard import DashboardScreen


class Side:
    def __init__(self, screen: DashboardScreen) -> None:
        self.screen = screen

    def open(self, tab: str | None = None) -> None:
        """Show the column (whatever hid it) on `tab` (None: the tab it was on): a key never
        types into something the user cannot see."""
        screen = self.screen
        screen.add_class("side-open")
        screen.remove_class("side-hidden")
        tabs = screen.query_one(TabbedContent)
        tabs.active = tab or tabs.active or "chat-tab"

    def hide(self) -> None:
        """Hide the column; the focus leaves it for the memory panes."""
        screen = self.screen
        side = screen.query_one("#side")
        focused = screen.focused
        screen.remove_class("side-open")
        screen.add_class("side-hidden")
        if focused is not None and side in focused.ancestors_with_self:
            screen.memory_view.focus_entries()

    @property
    def shown(self) -> bool:
        """The column is on screen."""
        screen = self.screen
        narrow = screen.has_class("narrow")
        return screen.has_class("side-open") if narrow else not screen.has_class("side-hidden")
