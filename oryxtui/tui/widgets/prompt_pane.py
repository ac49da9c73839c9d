"""The prompt preview: the blocks with sizes, their share of the context window, and what
changed since the previous prompt."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.markup import escape
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Collapsible, Static

from oryxtui.agent.sessions import session_id_for
from oryxtui.errors import OryxError
from oryxtui.phrases import entries
from oryxtui.tui.overview import UNSELECTED, Selection, Unselected
from oryxtui.tui.text import display_text
from oryxtui.tui.widgets.chat_pane import CHAT_CHANNEL
from oryxtui.workspace import AgentName

if TYPE_CHECKING:
    from oryxtui.agent.prompt import Prompt
    from oryxtui.places import Loop

BAR_WIDTH = 40
BLOCK_STYLES = {
    "identity": "bold magenta",
    "time": "bold blue",
    "memory": "bold cyan",
    "summary": "yellow",
    "history": "bold yellow",
    "tools": "bold green",
}
BLOCK_GLYPHS = {
    "identity": "█",
    "time": "▌",
    "memory": "▓",
    "summary": "▚",  # the earlier turns, summarised: the start of the history
    "history": "▒",
    "tools": "░",
}
TEXT_LIMIT = 20_000


def budget_bar(prompt: Prompt, context_window: int) -> Text:
    """One glyph per block (so it reads without colour), sized by its share of the window."""
    bar = Text()
    used = 0
    for block in prompt.blocks:
        cells = round(BAR_WIDTH * block.tokens / context_window)
        cells = min(cells, BAR_WIDTH - used)
        used += cells
        bar.append(BLOCK_GLYPHS[block.name] * cells, style=BLOCK_STYLES[block.name])
    bar.append("·" * (BAR_WIDTH - used), style="dim")
    share = 100 * prompt.tokens / context_window
    bar.append(f"  ~{prompt.tokens} of {context_window} tokens ({share:.0f}%)")
    for block in prompt.blocks:
        bar.append(f"\n{BLOCK_GLYPHS[block.name]} ", style=BLOCK_STYLES[block.name])
        bar.append(f"{block.name:<9}{block.chars:>7} chars {block.tokens:>6} tokens")
    return bar


def marked_text(text: str, previous: str | None) -> Text:
    """The block's text; lines that were not in the previous prompt's block start with '+'."""
    old = set(previous.split("\n")) if previous is not None else None
    shown = Text()
    for index, line in enumerate(text[:TEXT_LIMIT].split("\n")):
        if index:
            shown.append("\n")
        fresh = old is not None and line not in old
        shown.append("+ " if fresh else "  ", style="bold green" if fresh else "dim")
        shown.append(display_text(line), style="green" if fresh else "")
    if len(text) > TEXT_LIMIT:
        shown.append(f"\n… {len(text) - TEXT_LIMIT} more characters", style="dim")
    return shown


RECALL_SHOWN = 5  # entries of each recall listed in the preview


def recall_text(prompt: Prompt) -> Text | None:
    """What recall_memory gave the model in the last turn, or None if it was not called."""
    if not prompt.recalls:
        return None
    text = Text("Recall in the last turn", style="bold")
    for use in prompt.recalls:
        count = len(use.entries)
        text.append(f"\n  recall_memory({display_text(use.keyword)!r}) → ")
        text.append(entries(count))
        if use.notice:
            text.append(f"  ⚠ {display_text(use.notice, 300)}", style="yellow")
        for entry in use.entries[:RECALL_SHOWN]:
            text.append(f"\n    {display_text(entry, 300)}", style="dim")
        if count > RECALL_SHOWN:
            text.append(f"\n    … {count - RECALL_SHOWN} more", style="dim")
    return text


class PromptPane(VerticalScroll):
    """The prompt the selected agent (bound down as `agent`) would receive now. It builds it in
    a worker when asked (`rebuild`), keeps the last one of each agent to mark what changed, and
    is drawn whole on every new prompt; which blocks are open survives the redraw."""

    agent: reactive[Selection] = reactive[Selection](UNSELECTED, init=False)

    @dataclass
    class _Built(Message):
        agent: AgentName
        prompt: Prompt | None
        error: str | None = None

    def __init__(
        self, agent_loop: Callable[[], Loop], user: str, context_window: int, **kwargs: object
    ) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.agent_loop = agent_loop  # made on first use, in a worker
        self.user = user
        self.context_window = context_window
        self.open_blocks = {"time", "memory"}
        self.shown: Prompt | None = None
        self.built: dict[AgentName, Prompt] = {}  # the newest prompt of each agent
        self._stale = False  # asked to build while not on screen: built when shown

    def compose(self) -> ComposeResult:
        yield Static("No prompt yet.", id="prompt-summary")

    def watch_agent(self) -> None:
        self.rebuild()

    def rebuild(self, lazily: bool = False) -> None:
        """Build the agent's prompt again (its memory or history changed); `lazily`: only if
        the pane is on screen, else when it is shown (a server's prompt is fetched whole: a
        hidden pane does not fetch it on every change)."""
        if isinstance(self.agent, Unselected):
            return
        if lazily and not self.is_on_screen:
            self._stale = True
            return
        self._stale = False
        self._build(self.agent)

    def on_show(self) -> None:
        if self._stale:
            self.rebuild()

    @work(thread=True, exclusive=True, exit_on_error=False, group="prompt")
    def _build(self, agent: AgentName) -> None:
        try:
            prompt = self.agent_loop().prompt(agent, session_id_for(CHAT_CHANNEL, self.user, agent))
        except OryxError as exc:
            self.post_message(self._Built(agent, None, str(exc)))
            return
        self.post_message(self._Built(agent, prompt))

    @on(_Built)
    async def _built(self, event: _Built) -> None:
        if event.agent != self.agent:
            return
        if event.prompt is None:
            self.query_one("#prompt-summary", Static).update(
                Text(f"⚠ {display_text(event.error or '')}")
            )
            return
        previous = self.built.get(event.agent)
        if previous is not None and previous.to_json() == event.prompt.to_json():
            if self.shown is not None and self.shown.agent == event.agent:
                return  # nothing changed
            previous = None
        self.built[event.agent] = event.prompt
        if self.shown is not None and self.shown.agent != event.agent:
            previous = None  # a different agent: nothing to compare with
        await self._show(event.prompt, previous)

    async def _show(self, prompt: Prompt, previous: Prompt | None) -> None:
        context_window = self.context_window
        for collapsible in self.query(Collapsible):
            name = collapsible.id.removeprefix("block-") if collapsible.id else ""
            if collapsible.collapsed:
                self.open_blocks.discard(name)
            else:
                self.open_blocks.add(name)
        self.shown = prompt
        self.query_one("#prompt-summary", Static).update(budget_bar(prompt, context_window))
        await self.query(".prompt-part").remove()
        widgets: list[Widget] = []
        recalled = recall_text(prompt)
        if recalled is not None:
            widgets.append(Static(recalled, id="prompt-recall", classes="prompt-part"))
        for block in prompt.blocks:
            before = previous.block(block.name).text if previous else None
            changed = before is not None and before != block.text
            label = f"{block.name} · {block.chars} chars · ~{block.tokens} tokens"
            if changed:
                delta = block.chars - len(before or "")
                label += f" · changed ({delta:+d} chars)"
            widgets.append(
                Collapsible(
                    Static(marked_text(block.text, before), classes="prompt-text"),
                    title=escape(label),
                    collapsed=block.name not in self.open_blocks,
                    id=f"block-{block.name}",
                    classes="prompt-part changed" if changed else "prompt-part",
                )
            )
        for warning in prompt.warnings:
            widgets.append(
                Static(Text(f"⚠ {display_text(warning)}"), classes="prompt-warning prompt-part")
            )
        await self.mount_all(widgets)
