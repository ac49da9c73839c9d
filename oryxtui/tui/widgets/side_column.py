"""The chat/prompt column: the chat and the prompt preview of the agent shown, in two tabs. It
owns both panes and the agent they follow; whether it is on screen is the screen's layout."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.widgets import TabbedContent, TabPane

from oryxtui.tui.overview import UNSELECTED, Selection
from oryxtui.tui.widgets.chat_pane import ChatPane
from oryxtui.tui.widgets.prompt_pane import PromptPane

if TYPE_CHECKING:
    from oryxtui.places import Loop


class SideColumn(TabbedContent):
    def __init__(
        self, agent_loop: Callable[[], Loop], user: str, window: int, id: str | None = None
    ) -> None:
        # Chat is the first tab, so it is the one shown; no `initial`: an app that exits while
        # the column is still mounting made Textual look for that tab after its tabs were gone
        # (a ValueError seen once under load in CI).
        super().__init__(id=id)
        self.agent: Selection = UNSELECTED
        self._mounted = False  # (`is_mounted` is not yet true in `on_mount`)
        self.chat_pane = ChatPane(agent_loop, user, id="chat")
        self.prompt_pane = PromptPane(agent_loop, user, window, id="prompt")
        self.compose_add_child(TabPane("Chat", self.chat_pane, id="chat-tab"))
        self.compose_add_child(TabPane("Prompt", self.prompt_pane, id="prompt-tab"))

    def on_mount(self) -> None:
        self._mounted = True
        self.follow(self.agent)

    def follow(self, agent: Selection) -> None:
        """Chat and prompt show `agent` (once mounted: until then it is only remembered)."""
        self.agent = agent
        if self._mounted:
            self.chat_pane.agent = agent
            self.prompt_pane.agent = agent
