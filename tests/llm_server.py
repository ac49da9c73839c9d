"""A real OpenAI-compatible chat-completions server on 127.0.0.1 that plays a script.

Each request takes the next step of the script: {"text": "..."} answers with text,
{"tool_calls": [(name, arguments_dict_or_raw_json), ...]} asks for tools. Streaming requests get
Server-Sent Events split into several chunks (tool-call arguments too), as real servers send them.
Every request body is kept in `requests`.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.local_http import JsonHandler, LocalHttpServer


class ScriptedLLM(LocalHttpServer):
    url_suffix = "/v1"

    def __init__(self, script: list[dict[str, Any]], repeat_last: bool = False) -> None:
        self.script = list(script)
        self.repeat_last = repeat_last
        self.requests: list[dict[str, Any]] = []
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
