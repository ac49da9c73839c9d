"""The dashboard's chat/prompt column: shown and hidden by the screen's classes (`side-open`,
`side-hidden`; narrow terminals show it only when opened).

It starts hidden, so the first frame does not wait for it: the screen mounts it right after
that frame (`ready`), and whatever opens it before then waits for that mount. Mounted, its two
panes follow the agent shown."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.containers import Horizontal
from textual.widgets import TabbedContent, TabPane

if TYPE_CHECKING:
    from textual.widget import AwaitMount

    from oryxtui.tui.overview import Selection
    from oryxtui.tui.screens.dashboard import DashboardScreen


class Side:
    def __init__(self, screen: DashboardScreen) -> None:
        self.screen = screen
        # Chat is the first tab, so it is the one shown; no `initial`: an app that exits while
        # the column is still mounting made Textual look for that tab after its tabs were gone
        # (a ValueError seen once under load in CI).
        self.column = TabbedContent(id="side")  # mounted by `ready`
        self.column.compose_add_child(TabPane("Chat", screen.chat_pane, id="chat-tab"))
        self.column.compose_add_child(TabPane("Prompt", screen.prompt_pane, id="prompt-tab"))
        self._mounting: AwaitMount | None = None
        self._mounted = False

    async def ready(self) -> TabbedContent:
        """The column, mounted (the first call mounts it) and following the agent shown."""
        if self._mounting is None:
            self._mounting = self.screen.query_one("#body", Horizontal).mount(self.column)
        await self._mounting
        self._mounted = True
        self.follow(self.screen.shown)
        return self.column

    def follow(self, agent: Selection) -> None:
        """Chat and prompt show `agent` (once the column is mounted)."""
        if self._mounted:
            self.screen.chat_pane.agent = agent
            self.screen.prompt_pane.agent = agent

    async def open(self, tab: str | None = None) -> None:
        """Show the column (whatever hid it) on `tab` (None: the tab it was on): a key never
        types into something the user cannot see."""
        column = await self.ready()
        screen = self.screen
        screen.add_class("side-open")
        screen.remove_class("side-hidden")
        column.active = tab or column.active or "chat-tab"

    def hide(self) -> None:
        """Hide the column; the focus leaves it for the memory panes."""
        screen = self.screen
        focused = screen.focused
        screen.remove_class("side-open")
        screen.add_class("side-hidden")
        if focused is not None and self.column in focused.ancestors_with_self:
            screen.memory_view.focus_entries()

    @property
    def shown(self) -> bool:
        """The column is on screen."""
        screen = self.screen
        narrow = screen.has_class("narrow")
        return screen.has_class("side-open") if narrow else not screen.has_class("side-hidden")
