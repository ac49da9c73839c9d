"""The ReAct loop: user message → prompt → model → tools → … → reply, streamed as events."""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from typing import Any

from oryxtui import telemetry
from oryxtui.agent.compaction import HistoryCompactor
from oryxtui.agent.consolidation import summariser_of
from oryxtui.agent.episodes import episode_store, finished_turns
from oryxtui.agent.messages import Message
from oryxtui.agent.prompt import Prompt, PromptBuilder
from oryxtui.agent.providers import ChatProvider, ModelTurn, TextDelta, create_provider
from oryxtui.agent.sessions import Session, SessionStore, session_id_for
from oryxtui.agent.tools import ToolExecutor, builtin_tools
from oryxtui.agent.turns import TurnRecorder
from oryxtui.agent_md import AgentDefinition
from oryxtui.config import Settings
from oryxtui.errors import OryxError
from oryxtui.memory import MemoryService
from oryxtui.memory.digest import Summariser
from oryxtui.memory.history import acting_agent, current_actor
from oryxtui.workspace import Workspace

FOOTPRINT_PART_MAX = 200


@dataclass(frozen=True)
class LoopEvent:
    """kind: text (a delta), tool_call, tool_result, warning, final, error."""

    kind: str
    text: str = ""
    tool: str | None = None
    arguments: str | None = None
    success: bool | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind, "text": self.text}
        if self.tool is not None:
            data.update(tool=self.tool, arguments=self.arguments)
        if self.success is not None:
            data["success"] = self.success
        return data


def _one_line(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= FOOTPRINT_PART_MAX else flat[:FOOTPRINT_PART_MAX] + "…"


def footprint(user_message: str, reply: str) -> str:
    return f"触发「{_one_line(user_message)}」⇒ {_one_line(reply)}"


ProviderFactory = Callable[[Settings, AgentDefinition | None], ChatProvider]


class AgentLoop:
    """Everything a turn needs for one workspace: memory, sessions, tools, prompts, providers."""

    def __init__(
        self,
        workspace: Workspace,
        settings: Settings,
        memory: MemoryService,
        sessions: SessionStore,
        provider_factory: ProviderFactory = create_provider,
    ) -> None:
        self.workspace = workspace
        self.settings = settings
        self.memory = memory
        self.sessions = sessions
        self.episodes = episode_store(sessions.database, settings, sessions.clock)
        self.turns = TurnRecorder(sessions.database, sessions.clock)
        self.tools = builtin_tools(memory, self.episodes)
        self.executor = ToolExecutor(self.tools, sessions.record_tool_call)
        compactor = HistoryCompactor(self._summariser)
        self.prompts = PromptBuilder(workspace, settings, memory, self.tools, compactor)
        self.provider_factory = provider_factory

    def provider(self, agent: str | None) -> ChatProvider:
        return self.provider_factory(self.settings, self.prompts.definition(agent))

    def prompt(self, agent: str | None, session_id: str, ask: bool = True) -> Prompt:
        """The prompt the session's next turn would send (`ask`: see `PromptBuilder.build`)."""
        channel, user = session_id.split(":")[:2]
        session = self.sessions.load(session_id, agent, channel, user, to_write=False)
        return self.prompts.build(agent, session.messages, ask)

    def turn_view(self, session_id: str, turn: int) -> dict[str, Any] | None:
        """What the model received in that turn of the session, as recorded (None: nothing
        recorded for it)."""
        from oryxtui.agent.turns import turn_view

        return turn_view(self.turns, session_id, turn)

    def _summariser(self, agent: str | None) -> Summariser | None:
        """The agent's LLM as the summariser of earlier turns (none: the extractive one)."""
        provider = self.provider_factory(self.settings, self.prompts.definition(agent))
        return summariser_of(provider, [])[0]

    def run(
        self, agent: str | None, user_message: str, channel: str, user: str
    ) -> Iterator[LoopEvent]:
        """One trigger. The user's message is saved first, so a failure never loses it."""
        session_id = session_id_for(channel, user, agent)
        turn = telemetry.begin(
            f"invoke_agent {agent or 'global'}",
            {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": agent or "global",
                "gen_ai.conversation.id": session_id,
            },
        )
        error = None
        try:
            for event in self._turn(agent, user_message, channel, user, session_id, turn):
                if event.kind == "error":
                    error = event.text
                yield event
        finally:
            telemetry.end(turn, error=error)

    def _turn(
        self,
        agent: str | None,
        user_message: str,
        channel: str,
        user: str,
        session_id: str,
        span: Any,
    ) -> Iterator[LoopEvent]:
        begun = yield from self._begin(agent, session_id, channel, user, user_message)
        if begun is None:
            return
        session, number, provider, max_iterations = begun
        produced: list[Message] = []
        reply, stopped = "", True
        warned: set[str] = set()
        for attempt in range(max_iterations):
            prompt: Prompt | None = None
            started = time.perf_counter()
            try:
                prompt = self.prompts.build(agent, [*session.messages, *produced])
                for warning in prompt.warnings:
                    if warning not in warned:
                        warned.add(warning)
                        yield LoopEvent("warning", warning)
                started = time.perf_counter()
                turn = yield from self._ask(provider, prompt, span)
            except OryxError as exc:  # the model failing included
                if prompt is not None:
                    yield from self._recorded(
                        session, number, attempt, prompt, provider, started, str(exc)
                    )
                yield from self._store(session, produced)
                yield LoopEvent("error", str(exc))
                return
            yield from self._recorded(session, number, attempt, prompt, provider, started, None)
            assert turn is not None, "a provider must end with a ModelTurn"
            produced.append(Message("assistant", turn.text, tool_calls=turn.tool_calls))
            if not turn.tool_calls:
                reply, stopped = turn.text, False
                break
            yield from self._call_tools(turn, agent, session_id, number, produced, span)
        if stopped:
            reply = f"Stopped after {max_iterations} iterations without a final answer."
            produced.append(Message("assistant", reply))
        stored = yield from self._store(session, produced)
        if not stored:
            return
        try:
            self.episodes.index_session(session)  # searchable from now on
        except OryxError as exc:
            yield LoopEvent("warning", f"The turn is stored, but not yet searchable: {exc}")
        if not stopped:
            yield from self._after_reply(agent, provider, session_id, number, user_message, reply)
        yield LoopEvent("final", reply)

    @staticmethod
    def _ask(
        provider: ChatProvider, prompt: Prompt, span: Any
    ) -> Generator[LoopEvent, None, ModelTurn | None]:
        """One model call, its text told as it comes; its span a child of the turn's."""
        with telemetry.within(span):
            call = telemetry.begin(*_inference(provider, prompt.messages))
        turn, error = None, None
        try:
            for event in provider.stream(prompt.messages, prompt.tools):
                if isinstance(event, TextDelta):
                    yield LoopEvent("text", event.text)
                elif isinstance(event, ModelTurn):
                    turn = event
        except OryxError as exc:
            error = str(exc)
            raise
        finally:  # (ended too when the turn is abandoned: its client left)
            telemetry.end(call, _inferred(turn), error)
        return turn

    def _begin(
        self, agent: str | None, session_id: str, channel: str, user: str, user_message: str
    ) -> Generator[LoopEvent, None, tuple[Session, int, ChatProvider, int] | None]:
        """The session with the user's message stored, this turn's number (as the sessions
        view and episodes count them: finished ones), the agent's provider and how many
        model calls a turn may take; None (and the error said) when one cannot be had."""
        try:
            session = self.sessions.load(session_id, agent, channel, user)
            number = len(finished_turns(session.messages))
            self.sessions.append(session, Message("user", user_message))
        except OryxError as exc:
            yield LoopEvent("error", f"Nothing was sent: {exc}")
            return None
        try:
            definition = self.prompts.definition(agent)
            provider = self.provider_factory(self.settings, definition)
        except OryxError as exc:
            yield LoopEvent("error", str(exc))
            return None
        return session, number, provider, definition.settings.max_iterations if definition else 10

    def _call_tools(
        self,
        turn: ModelTurn,
        agent: str | None,
        session_id: str,
        number: int,
        produced: list[Message],
        span: Any = None,
    ) -> Iterator[LoopEvent]:
        """The tools the model called, in order, each result added to the turn's messages
        (each call's span a child of the turn's `span`)."""
        for call in turn.tool_calls:
            yield LoopEvent("tool_call", tool=call.name, arguments=call.arguments_json)
            with telemetry.within(span):
                result = self.executor.execute(call, agent, session_id, number)
            produced.append(
                Message("tool", result.content, tool_name=call.name, tool_call_id=call.id)
            )
            yield LoopEvent(
                "tool_result",
                result.content,
                tool=call.name,
                arguments=call.arguments_json,
                success=result.success,
            )

    def _after_reply(
        self,
        agent: str | None,
        provider: ChatProvider,
        session_id: str,
        number: int,
        user_message: str,
        reply: str,
    ) -> Iterator[LoopEvent]:
        """What follows a final reply when configured: its footprint, and a digest."""
        if self.settings.memory.footprint:
            yield from self._footprint(agent, session_id, number, user_message, reply)
        if self.settings.memory.consolidate.auto:
            yield from self._consolidate(agent, provider, session_id, number)

    def _footprint(
        self, agent: str | None, session_id: str, turn: int, user_message: str, reply: str
    ) -> Iterator[LoopEvent]:
        """The turn's footprint, written as the agent's (its session and turn): held for
        review like any of the agent's saves when `[memory.review]` holds them."""
        acting = current_actor.set(acting_agent(session_id, turn))
        try:
            self.memory.save(agent, footprint(user_message, reply), "archival")
        except OryxError as exc:
            problem: OryxError | None = exc
        else:
            problem = None
        finally:
            current_actor.reset(acting)
        if problem is not None:
            yield LoopEvent("warning", f"The reply is kept, but the footprint was not: {problem}")

    def _consolidate(
        self, agent: str | None, provider: ChatProvider, session_id: str, turn: int
    ) -> Iterator[LoopEvent]:
        """A digest once enough entries have left the window since the last one (by the
        agent's LLM; a failure is a warning: the turn is done and stored)."""
        warnings: list[str] = []
        summarise, method = summariser_of(provider, warnings)
        acting = current_actor.set(acting_agent(session_id, turn))
        try:
            self.memory.consolidate(
                agent,
                summarise=summarise,
                method=method,
                min_entries=self.settings.memory.consolidate.min_entries,
            )
        except OryxError as exc:
            warnings.append(f"The reply is kept, but no digest was written: {exc}")
        finally:
            current_actor.reset(acting)
        for warning in warnings:
            yield LoopEvent("warning", warning)

    def _recorded(
        self,
        session: Session,
        turn: int,
        call: int,
        prompt: Prompt,
        provider: ChatProvider,
        started: float,
        error: str | None,
    ) -> Iterator[LoopEvent]:
        """What the model received in this call, recorded to be shown exactly later; a
        failure to record is a warning, never the turn's end."""
        duration = int((time.perf_counter() - started) * 1000)
        model = str(getattr(provider, "model", provider.label))
        kind = "openai" if hasattr(provider, "model") else "offline"
        try:
            self.turns.record(
                session.session_id,
                prompt.agent,
                turn,
                call,
                prompt,
                kind,
                model,
                error is None,
                error,
                duration,
                self.memory.by.kind,
            )
        except OryxError as exc:
            yield LoopEvent("warning", f"What the model received is not recorded: {exc}")

    def _store(self, session: Session, produced: list[Message]) -> Generator[LoopEvent, None, bool]:
        """Save the turn's messages and any audit rows kept back; an error event if the
        database fails (what was stored before stays, and memory saves already landed)."""
        try:
            if produced:
                self.sessions.append(session, *produced)
            self.sessions.flush_tool_calls()
        except OryxError as exc:
            yield LoopEvent("error", f"The reply could not be stored: {exc}")
            return False
        return True


def _inference(provider: ChatProvider, messages: Any) -> tuple[str, dict[str, Any]]:
    """A model call's span, as the GenAI conventions name it (the prompt only with
    capture_content)."""
    model = getattr(provider, "model", None) or provider.label
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": getattr(provider, "provider_name", "openai"),
        "gen_ai.request.model": model,
    }
    if telemetry.content():
        import json

        attributes["gen_ai.input.messages"] = json.dumps(list(messages), ensure_ascii=False)
    return f"chat {model}", attributes


def _inferred(turn: ModelTurn | None) -> dict[str, Any]:
    """What a model call's span says of its answer."""
    if turn is None:
        return {}
    told: dict[str, Any] = {
        "gen_ai.response.finish_reasons": ("tool_calls",) if turn.tool_calls else ("stop",),
    }
    if turn.usage is not None:
        told["gen_ai.usage.input_tokens"], told["gen_ai.usage.output_tokens"] = turn.usage
    if telemetry.content():
        told["gen_ai.output.messages"] = turn.text
    return told
