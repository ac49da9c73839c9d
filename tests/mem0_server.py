"""A small mem0-compatible server on 127.0.0.1, in memory, for the mem0 backend's tests.

It implements what oryxtui (and upstream OryxOS) use: POST /memories, GET /memories?user_id=,
POST /search (a case-insensitive substring match, ranked, standing in for mem0's semantic search).
Timestamps come from an injected clock. `fail_with` makes every request answer that status.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from datetime import datetime
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlparse

from tests.local_http import JsonHandler, LocalHttpServer


class Mem0Server(LocalHttpServer):
    def __init__(self, clock: Callable[[], datetime], api_key: str | None = None) -> None:
        self.clock = clock
        self.api_key = api_key
        self.memories: list[dict[str, Any]] = []
        self.requests: list[tuple[str, str, dict[str, Any] | None, dict[str, str]]] = []
        self.fail_with: int | None = None
        self.list_shape = "results"  # results | results.items | items | bare
        self._lock = threading.Lock()
        super().__init__()

    def _shape(self, items: list[dict[str, Any]]) -> Any:
        return {
            "results": {"results": items},
            "results.items": {"results": {"items": items}},
            "items": {"items": items},
            "bare": items,
        }[self.list_shape]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        mem0 = self

        class Handler(JsonHandler):
            def _handle(self, method: str) -> None:
                url = urlparse(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                with mem0._lock:
                    mem0.requests.append((method, url.path, body, dict(self.headers)))
                if mem0.fail_with:
                    self.reply_json(mem0.fail_with, {"detail": "failing on purpose"})
                    return
                if mem0.api_key and self.headers.get("X-API-Key") != mem0.api_key:
                    self.reply_json(401, {"detail": "bad key"})
                    return
                if method == "POST" and url.path == "/memories":
                    with mem0._lock:
                        item = {
                            "id": str(len(mem0.memories) + 1),
                            "memory": body["messages"][0]["content"],
                            "user_id": body["user_id"],
                            "metadata": body.get("metadata"),
                            "created_at": mem0.clock().isoformat(),
                        }
                        mem0.memories.append(item)
                    self.reply_json(200, {"results": [{"id": item["id"], "event": "ADD"}]})
                elif method == "GET" and url.path == "/memories":
                    user = parse_qs(url.query).get("user_id", [""])[0]
                    items = [m for m in mem0.memories if m["user_id"] == user]
                    self.reply_json(200, mem0._shape(items))
                elif method == "POST" and url.path == "/search":
                    # Ranked as mem0 ranks, most relevant first: here, by how often the query
                    # occurs (ties keep the order of storing), with the score mem0 reports.
                    query = body["query"].lower()
                    scored = []
                    for m in mem0.memories:
                        text = (m.get("memory") or m.get("text") or "").lower()
                        if m["user_id"] == body["user_id"] and query in text:
                            scored.append({**m, "score": text.count(query) / (1 + len(text))})
                    scored.sort(key=lambda m: -m["score"])
                    self.reply_json(200, mem0._shape(scored))
                else:
                    self.reply_json(404, {"detail": "not found"})

            def do_GET(self) -> None:
                self._handle("GET")

            def do_POST(self) -> None:
                self._handle("POST")

        return Handler
