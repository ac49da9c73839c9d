"""Any OpenAI-compatible chat-completions endpoint, through the official `openai` SDK."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any
from urllib.parse import urlsplit

import openai

from oryxtui.addresses import masked_text
from oryxtui.agent.messages import ToolCall
from oryxtui.agent.providers import ModelTurn, TextDelta
from oryxtui.errors import ProviderError


class OpenAICompatibleProvider:
    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None,
        temperature: float | None,
        timeout: float,
        streaming: bool = True,
    ) -> None:
        self.base_url = base_url
        self.shown = masked_text(base_url)  # what messages name it by: no password in it
        self.model = model
        self.temperature = temperature
        self.timeout = timeout
        self.streaming = streaming
        # Local servers (Ollama, llama.cpp, vLLM) need no key, but the SDK insists on one.
        self.client = openai.OpenAI(
            base_url=base_url, api_key=api_key or "no-key", timeout=timeout, max_retries=0
        )
        self.label = f"{model} @ {urlsplit(base_url).netloc.rpartition('@')[2] or self.shown}"

    def stream(
        self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]
    ) -> Iterator[TextDelta | ModelTurn]:
        request: dict[str, Any] = {"model": self.model, "messages": list(messages)}
        if tools:
            request["tools"] = list(tools)
        if self.temperature is not None:
            request["temperature"] = self.temperature
        try:
            if self.streaming:
                yield from self._streamed(request)
            else:
                yield from self._whole(request)
        except openai.APITimeoutError:
            raise ProviderError(
                f"The LLM at {self.shown} did not answer within {self.timeout:g} s; "
                "check that it is running, or raise llm.timeout_seconds."
            ) from None
        except openai.APIConnectionError:
            raise ProviderError(
                f"Cannot reach the LLM at {self.shown}; check llm.base_url and that the "
                "server is running."
            ) from None
        except openai.AuthenticationError:
            raise ProviderError(
                f"The LLM at {self.shown} refused the API key; put the key in the "
                "environment variable that llm.api_key_env names."
            ) from None
        except openai.APIStatusError as exc:
            raise ProviderError(
                f"The LLM at {self.shown} answered HTTP {exc.status_code}: {exc.message}"
            ) from None
        except openai.OpenAIError as exc:
            raise ProviderError(f"The LLM at {self.shown} failed: {exc}") from None
        except (AttributeError, TypeError, KeyError, IndexError, ValueError) as exc:
            # What a server sends is untrusted: an answer of another shape is its failure.
            raise ProviderError(
                f"The LLM at {self.shown} sent an answer oryxtui cannot read "
                f"({type(exc).__name__}); check that llm.base_url is an OpenAI-compatible "
                "chat-completions endpoint."
            ) from None

    def _streamed(self, request: dict[str, Any]) -> Iterator[TextDelta | ModelTurn]:
        text: list[str] = []
        calls: dict[int, dict[str, str]] = {}
        usage = None
        for chunk in self.client.chat.completions.create(**request, stream=True):
            usage = _usage(getattr(chunk, "usage", None)) or usage  # (a server may send it)
            if not chunk.choices:
                continue
            delta = chunk.choices[0].delta
            if delta.content:
                text.append(_text(delta.content))
                yield TextDelta(delta.content)
            for part in delta.tool_calls or ():
                slot = calls.setdefault(int(part.index), {"id": "", "name": "", "arguments": ""})
                if part.id:
                    slot["id"] = _text(part.id)
                if part.function and part.function.name:
                    slot["name"] += _text(part.function.name)
                if part.function and part.function.arguments:
                    slot["arguments"] += _text(part.function.arguments)
        yield ModelTurn(
            "".join(text),
            tuple(
                ToolCall(slot["id"] or f"call_{index}", slot["name"], slot["arguments"])
                for index, slot in sorted(calls.items())
            ),
            usage,
        )

    def _whole(self, request: dict[str, Any]) -> Iterator[TextDelta | ModelTurn]:
        response = self.client.chat.completions.create(**request)
        message = response.choices[0].message
        content = _text(message.content or "")
        calls = tuple(
            ToolCall(
                _text(call.id), _text(call.function.name), _text(call.function.arguments or "")
            )
            for call in message.tool_calls or ()
            if getattr(call, "function", None) is not None
        )
        if content:
            yield TextDelta(content)
        yield ModelTurn(content, calls, _usage(getattr(response, "usage", None)))


def _usage(reported: object) -> tuple[int, int] | None:
    """(prompt tokens, completion tokens) as the server says, if it says them as counts."""
    counts = (
        getattr(reported, "prompt_tokens", None),
        getattr(reported, "completion_tokens", None),
    )
    if all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in counts):
        return counts  # type: ignore[return-value]
    return None


def _text(value: object) -> str:
    """A field of the server's answer that must be text (the SDK does not check its shape)."""
    if not isinstance(value, str):
        raise TypeError(f"expected text, got {type(value).__name__}")
    return value
