"""A real OpenAI-compatible server on 127.0.0.1: chat completions that play a script, and
embeddings that mean something.

Each chat request takes the next step of the script: {"text": "..."} answers with text,
{"tool_calls": [(name, arguments_dict_or_raw_json), ...]} asks for tools. Streaming requests get
Server-Sent Events split into several chunks (tool-call arguments too), as real servers send them.
Every request body is kept in `requests`. {"raw_events": [...]} sends those Server-Sent Events
data lines first, as they are (malformed ones included).

`/v1/embeddings` answers deterministic vectors from `concept_vector`: texts that share a concept
(deploy / release / rollout / 上线) point the same way, whatever their words, so the semantic
route finds what the keyword and lexical routes cannot. Its requests are kept in `embeddings`.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.local_http import JsonHandler, LocalHttpServer


class ScriptedLLM(LocalHttpServer):
    url_suffix = "/v1"

    def __init__(
        self,
        script: list[dict[str, Any]],
        repeat_last: bool = False,
        embedding_answer: Callable[[dict[str, Any]], Any] | None = None,
    ) -> None:
        self.script = list(script)
        self.repeat_last = repeat_last
        # What /embeddings answers instead of `_embeddings` (bytes: sent as they are).
        self.embedding_answer = embedding_answer
        self.requests: list[dict[str, Any]] = []
        self.embeddings: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        super().__init__()

    def next_step(self, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.requests.append(body)
            if not self.script:
                return {"text": "(script exhausted)"}
            if self.repeat_last and len(self.script) == 1:
                return self.script[0]
            return self.script.pop(0)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        llm = self

        class Handler(JsonHandler):
            def do_POST(self) -> None:
                if self.path.endswith("/embeddings"):
                    body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                    with llm._lock:
                        llm.embeddings.append(body)
                    answer = (llm.embedding_answer or _embeddings)(body)
                    if isinstance(answer, bytes):
                        self.send_response(200)
                        self.send_header("Content-Type", "application/json")
                        self.send_header("Content-Length", str(len(answer)))
                        self.end_headers()
                        self.wfile.write(answer)
                    else:
                        self.reply_json(200, answer)
                    return
                if not self.path.endswith("/chat/completions"):
                    self.send_error(404)
                    return
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                step = llm.next_step(body)
                if step.get("delay"):
                    time.sleep(step["delay"])
                if step.get("status"):
                    error = {"error": {"message": step.get("text", "boom")}}
                    self.reply_json(step["status"], error)
                elif body.get("stream"):
                    self._stream(body["model"], step)
                else:
                    self.reply_json(200, _completion(body["model"], step))

            def _stream(self, model: str, step: dict[str, Any]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                for raw in step.get("raw_events", ()):  # sent as they are, however malformed
                    self.wfile.write(f"data: {raw}\n\n".encode())
                    self.wfile.flush()
                for delta, finish in _chunks(step):
                    chunk = {
                        "id": "chatcmpl-test",
                        "object": "chat.completion.chunk",
                        "created": 0,
                        "model": model,
                        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                    }
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                if step.get("usage"):  # as OpenAI sends it (stream_options.include_usage)
                    prompt, completion = step["usage"]
                    usage = {"prompt_tokens": prompt, "completion_tokens": completion}
                    last = {
                        "id": "chatcmpl-test",
                        "object": "chat.completion.chunk",
                        "created": 0,
                        "model": model,
                        "choices": [],
                        "usage": usage,
                    }
                    self.wfile.write(f"data: {json.dumps(last)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

        return Handler


def _arguments(raw: Any) -> str:
    return raw if isinstance(raw, str) else json.dumps(raw)


def _chunks(step: dict[str, Any]) -> list[tuple[dict[str, Any], str | None]]:
    chunks: list[tuple[dict[str, Any], str | None]] = [({"role": "assistant", "content": ""}, None)]
    text = step.get("text", "")
    for start in range(0, len(text), max(1, len(text) // 3 or 1)):
        chunks.append(({"content": text[start : start + max(1, len(text) // 3 or 1)]}, None))
    for index, (name, raw) in enumerate(step.get("tool_calls", [])):
        arguments = _arguments(raw)
        half = len(arguments) // 2
        first = {
            "index": index,
            "id": f"call_{index}",
            "type": "function",
            "function": {"name": name, "arguments": arguments[:half]},
        }
        chunks.append(({"tool_calls": [first]}, None))
        chunks.append(
            ({"tool_calls": [{"index": index, "function": {"arguments": arguments[half:]}}]}, None)
        )
    chunks.append(({}, "tool_calls" if step.get("tool_calls") else "stop"))
    return chunks


def _completion(model: str, step: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": step.get("text") or None}
    if step.get("tool_calls"):
        message["tool_calls"] = [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {"name": name, "arguments": _arguments(raw)},
            }
            for i, (name, raw) in enumerate(step["tool_calls"])
        ]
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if step.get("tool_calls") else "stop",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


# Each concept is one direction of the vector; the words that evoke it, in any language.
CONCEPTS = (
    ("deploy", "release", "rollout", "ship", "上线", "发布"),
    ("incident", "outage", "page", "故障", "告警"),
    ("cat", "kitten", "feline", "猫"),
    ("database", "postgres", "sqlite", "数据库"),
    ("lunch", "dinner", "food", "午饭"),
)
NOISE_DIMENSIONS = 8


def concept_vector(text: str) -> list[float]:
    """One dimension per concept the text evokes (strongly), plus a little noise from its hash
    so that different texts are different vectors; unit length."""
    lowered = text.lower()
    vector = [3.0 if any(word in lowered for word in words) else 0.0 for words in CONCEPTS]
    digest = hashlib.sha256(text.encode()).digest()
    vector += [(digest[i] - 128) / 512 for i in range(NOISE_DIMENSIONS)]
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


def _embeddings(body: dict[str, Any]) -> dict[str, Any]:
    texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
    return {
        "object": "list",
        "model": body["model"],
        "data": [
            {"object": "embedding", "index": index, "embedding": concept_vector(text)}
            for index, text in enumerate(texts)
        ],
        "usage": {"prompt_tokens": 1, "total_tokens": 1},
    }
