"""The chat pane: the conversation with the selected agent, streamed; tool calls inline."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.markup import escape
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Collapsible, Input, Static

from oryxtui.agent.messages import Message as ChatMessage
from oryxtui.agent.sessions import session_id_for
from oryxtui.errors import OryxError
from oryxtui.terminal import neutralize
from oryxtui.tui.overview import UNSELECTED, Selection, Unselected
from oryxtui.tui.text import display_text
from oryxtui.workspace import AgentName

if TYPE_CHECKING:
    from textual.widgets import Markdown
    from textual.widgets.markdown import MarkdownStream

    from oryxtui.agent.loop import LoopEvent
    from oryxtui.places import Loop

CHAT_CHANNEL = "tui"
TOOL_TEXT_LIMIT = 2000


def _markdown(text: str) -> Markdown:
    """A reply. Textual's Markdown (and markdown-it) is imported with the first one: the
    dashboard's first frame does not wait for it."""
    from textual.widgets import Markdown

    return Markdown(text, classes="chat-reply")


def _tool_title(name: str, arguments: str | None, success: bool | None) -> str:
    mark = "…" if success is None else "✓" if success else "✗"
    return escape(f"{mark} {name} {display_text(arguments or '', 60)[:60]}")


class ChatPane(Vertical):
    """The conversation with the selected agent (bound down as `agent`). It runs the turns and
    loads the history in its own workers, and says `TurnEnded` when a turn is over."""

    agent: reactive[Selection] = reactive[Selection](UNSELECTED, init=False)

    @dataclass
    class TurnEnded(Message):
        agent: AgentName

    @dataclass
    class _Event(Message):
        agent: AgentName
        event: LoopEvent | None  # None: the turn is over

    @dataclass
    class _History(Message):
        agent: AgentName
        messages: list[ChatMessage]
        model: str

    def __init__(self, agent_loop: Callable[[], Loop], user: str, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.agent_loop = agent_loop  # made on first use, in a worker
        self.user = user
        self.chatting: Selection = UNSELECTED  # the agent a turn is running for, if any
        self._failed = False
        self._stream: MarkdownStream | None = None
        self._reply: Markdown | None = None
        self._pending_tool: Collapsible | None = None
        self._sent = ""
        # Turns begun and ended here: they only grow, so a test (or anything else) can wait on
        # "the turn began" or "it ended" however briefly the input was disabled between.
        self.turns_begun = 0
        self.turns_ended = 0
        self.model = ""

    def compose(self) -> ComposeResult:
        yield VerticalScroll(id="chat-log")
        yield Static("", id="chat-status", markup=False)
        yield Input(placeholder="Message the agent… (enter sends)", id="chat-input")

    @property
    def transcript(self) -> VerticalScroll:
        """The scrolling list of messages (not `log`: that is Textual's logger)."""
        return self.query_one("#chat-log", VerticalScroll)

    @property
    def input(self) -> Input:
        return self.query_one("#chat-input", Input)

    def set_status(self, text: str) -> None:
        self.query_one("#chat-status", Static).update(text)

    async def show_history(self, messages: Sequence[ChatMessage], model: str) -> None:
        """A fresh log with the session's past user and assistant messages."""
        # Every child is looked up before the first await: the app may be closing by the time
        # the log is rebuilt, and then only the log's own (no-op) mounting may run.
        log = self.transcript
        self.model = model
        self.set_status(f"model: {model}")
        await log.remove_children()
        widgets: list[Widget] = []
        for message in messages[-40:]:
            if message.role == "user":
                widgets.append(Static(Text(display_text(message.content)), classes="chat-user"))
            elif message.role == "assistant" and message.content:
                widgets.append(_markdown(neutralize(message.content)))
        await log.mount_all(widgets)
        log.scroll_end(animate=False)

    def focus_input(self) -> None:
        # Focus now, not after the next refresh: keys typed right after `c` belong to the input.
        self.screen.set_focus(self.input)
        self.input.focus()

    # Workers: they talk to the model and the database and post what they found -----------------

    def _session_id(self, agent: AgentName) -> str:
        return session_id_for(CHAT_CHANNEL, self.user, agent)

    @work(thread=True, exclusive=True, exit_on_error=False, group="chat-history")
    def _load_history(self, agent: AgentName) -> None:
        try:
            session = self.agent_loop().sessions.load(
                self._session_id(agent), agent, CHAT_CHANNEL, self.user
            )
            messages = session.messages
        except OryxError as exc:
            messages = [ChatMessage("assistant", f"⚠ {exc}")]
        try:
            model = self.agent_loop().provider(agent).label
        except OryxError as exc:
            model = f"not configured: {exc}"
        self.post_message(self._History(agent, messages, model))

    @work(thread=True, exclusive=True, exit_on_error=False, group="chat")
    def _run_turn(self, agent: AgentName, text: str) -> None:
        from oryxtui.agent.loop import LoopEvent

        try:
            for event in self.agent_loop().run(agent, text, CHAT_CHANNEL, self.user):
                self.post_message(self._Event(agent, event))
        except Exception as exc:  # a bug must not leave the chat input locked
            self.post_message(self._Event(agent, LoopEvent("error", f"The turn failed: {exc!r}")))
            raise
        finally:
            self.post_message(self._Event(agent, None))

    # Handlers -----------------------------------------------------------------------------------

    def watch_agent(self, agent: Selection) -> None:
        if not isinstance(agent, Unselected):
            self._load_history(agent)

    @on(_History)
    async def _history_loaded(self, event: _History) -> None:
        if event.agent != self.agent:
            return  # another agent by now
        if event.agent == self.chatting:
            self.model = event.model  # a turn is streaming into the pane: keep it, say the model
            return
        await self.show_history(event.messages, event.model)

    @on(Input.Submitted, "#chat-input")
    async def _send(self, event: Input.Submitted) -> None:
        event.stop()
        agent = self.agent
        if not event.value.strip() or self.input.disabled or isinstance(agent, Unselected):
            return
        if not isinstance(self.chatting, Unselected):
            return  # one turn at a time
        self._sent = event.value
        self.chatting, self._failed = agent, False
        self.turns_begun += 1
        await self.begin_turn(event.value)
        self._run_turn(agent, event.value)

    @on(_Event)
    async def _turn_event(self, event: _Event) -> None:
        shown_here = event.agent == self.agent
        if event.event is None:
            self.chatting = UNSELECTED
            if shown_here:
                await self.end_turn(self._failed, self.model)
            else:
                self.input.disabled = False
            self.turns_ended += 1
            self.post_message(self.TurnEnded(event.agent))
            return
        if event.event.kind == "error":
            self._failed = True
        if shown_here:
            await self.apply(event.event)

    async def begin_turn(self, text: str) -> None:
        self.input.value = ""
        self.input.disabled = True
        self.transcript.anchor()
        await self.transcript.mount(Static(Text(display_text(text)), classes="chat-user"))
        await self._new_reply()
        self.set_status("working…")

    async def _new_reply(self) -> None:
        self._reply = _markdown("")
        await self.transcript.mount(self._reply)
        self._stream = self._reply.get_stream(self._reply)

    async def apply(self, event: LoopEvent) -> None:
        if event.kind == "text" and self._stream is not None:
            await self._stream.write(neutralize(event.text))
        elif event.kind == "tool_call":
            self._pending_tool = Collapsible(
                Static(Text(display_text(event.arguments or "")), classes="chat-tool-body"),
                title=_tool_title(event.tool or "", event.arguments, None),
                classes="chat-tool",
            )
            await self.transcript.mount(self._pending_tool)
        elif event.kind == "tool_result" and self._pending_tool is not None:
            body = display_text(event.text, TOOL_TEXT_LIMIT)[:TOOL_TEXT_LIMIT]
            self._pending_tool.title = _tool_title(event.tool or "", event.arguments, event.success)
            await self._pending_tool.query_one(Collapsible.Contents).mount(
                Static(Text(body), classes="chat-tool-body")
            )
            self._pending_tool.set_class(not event.success, "failed")
            self._pending_tool = None
            await self._close_stream()
            await self._new_reply()
        elif event.kind in ("error", "warning"):
            warning = Text(f"⚠ {display_text(event.text)}")
            await self.transcript.mount(Static(warning, classes=f"chat-{event.kind}"))

    async def _close_stream(self) -> None:
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None

    async def end_turn(self, failed: bool, model: str) -> None:
        await self._close_stream()
        if self._reply is not None and not self._reply.source:
            await self._reply.remove()
        self._reply = None
        self.input.disabled = False
        if failed and not self.input.value:
            self.input.value = self._sent  # nothing typed is lost when a turn fails
        focused = self.app.focused
        if focused is None or self in focused.ancestors_with_self:
            self.input.focus()  # but never take the focus back from where the user went
        self.set_status(f"model: {model}" + (" · the last turn failed" if failed else ""))
