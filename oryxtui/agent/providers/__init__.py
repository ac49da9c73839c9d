"""LLM providers behind one small interface, and the choice between them."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from oryxtui.agent.messages import ToolCall
from oryxtui.agent_md import AgentDefinition
from oryxtui.config import Settings
from oryxtui.errors import ConfigError


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ModelTurn:
    """The end of one model call: all its text and the tool calls it asked for, in order."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    # Tokens in and out, as the server reported them (None: it did not), for operators
    usage: tuple[int, int] | None = None


class ChatProvider(Protocol):
    label: str

    def stream(
        self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]
    ) -> Iterator[TextDelta | ModelTurn]:
        """Text deltas as they come, then exactly one ModelTurn."""
        ...


def create_provider(settings: Settings, definition: AgentDefinition | None) -> ChatProvider:
    """AGENT.md `provider` wins over `[llm]`; with nothing configured, the offline model."""
    llm = settings.llm
    spec = definition.provider if definition else None
    name = (spec.name if spec and spec.name else None) or llm.provider
    if name is None:
        name = "openai" if llm.base_url else "offline"
    if name == "offline":
        from oryxtui.agent.providers.offline import OfflineModel

        return OfflineModel()
    if name != "openai":
        raise ConfigError(f"Unknown LLM provider '{name}': use 'openai' or 'offline'.")
    from oryxtui.agent.providers.openai_compatible import OpenAICompatibleProvider

    if not llm.base_url:
        raise ConfigError("llm.base_url is not set: point it at an OpenAI-compatible endpoint.")
    model = (spec.model if spec and spec.model else None) or llm.model
    if not model:
        raise ConfigError("llm.model is not set (nor provider.model in AGENT.md).")
    api_key = None
    if llm.api_key_env:
        api_key = os.environ.get(llm.api_key_env)
        if not api_key:
            raise ConfigError(
                f"llm.api_key_env names {llm.api_key_env}, but that environment variable is empty."
            )
    temperature = spec.temperature if spec and spec.temperature is not None else llm.temperature
    return OpenAICompatibleProvider(
        base_url=llm.base_url,
        model=model,
        api_key=api_key,
        temperature=temperature,
        timeout=llm.timeout_seconds,
        streaming=llm.stream,
    )
