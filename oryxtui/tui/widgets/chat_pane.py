"""The chat pane: the conversation with the selected agent, streamed; tool calls inline."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.markup import escape
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Collapsible, Input, Markdown, Static
from textual.widgets.markdown import MarkdownStream

from oryxtui.agent.loop import LoopEvent
from oryxtui.agent.messages import Message as ChatMessage
from oryxtui.terminal import neutralize
from oryxtui.tui.text import display_text

TOOL_TEXT_LIMIT = 2000


def _tool_title(name: str, arguments: str | None, success: bool | None) -> str:
    mark = "…" if success is None else "✓" if success else "✗"
    return escape(f"{mark} {name} {display_text(arguments or '', 60)[:60]}")


class ChatPane(Vertical):
    """Attributes down (what to show), messages up (`Submitted` when the user sends a line)."""

    @dataclass
    class Submitted(Message):
        text: str

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._stream: MarkdownStream | None = None
        self._reply: Markdown | None = None
        self._pending_tool: Collapsible | None = None
        self._sent = ""
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
                widgets.append(Markdown(neutralize(message.content), classes="chat-reply"))
        await log.mount_all(widgets)
        log.scroll_end(animate=False)

    @on(Input.Submitted, "#chat-input")
    def _send(self, event: Input.Submitted) -> None:
        event.stop()
        if not event.value.strip() or self.input.disabled:
            return
        self._sent = event.value
        self.post_message(self.Submitted(event.value))

    async def begin_turn(self, text: str) -> None:
        self.input.value = ""
        self.input.disabled = True
        self.transcript.anchor()
        await self.transcript.mount(Static(Text(display_text(text)), classes="chat-user"))
        await self._new_reply()
        self.set_status("working…")

    async def _new_reply(self) -> None:
        self._reply = Markdown("", classes="chat-reply")
        await self.transcript.mount(self._reply)
        self._stream = Markdown.get_stream(self._reply)

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
