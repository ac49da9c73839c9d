"""The `mem0` backend: a mem0 server over HTTP, spoken the way upstream OryxOS speaks it."""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import httpx

from oryxtui.addresses import masked_text
from oryxtui.config import Mem0Settings
from oryxtui.errors import ConfigError, ServiceUnavailable
from oryxtui.memory.format import (
    TIME_FORMAT,
    EntrySequence,
    MemoryEntry,
    Scope,
    clean_entry_line,
    entry_from_line,
    entry_line,
)
from oryxtui.memory.history import CLI, Actor, Key
from oryxtui.memory.snapshot import MemoryRead, Section
from oryxtui.memory.store import Watch

ARCHIVAL_KEEP = 100
_SCOPES = {Scope.CORE: "CORE", Scope.ARCHIVAL: "ARCHIVAL"}


def _items(payload: Any) -> list[dict[str, Any]]:
    """mem0 versions answer with `results`, `results.items`, `items` or a bare list."""
    if isinstance(payload, dict):
        payload = payload.get("results", payload.get("items", []))
        if isinstance(payload, dict):
            payload = payload.get("items", [])
    return [item for item in payload if isinstance(item, dict)] if isinstance(payload, list) else []


def _scope_of(item: dict[str, Any]) -> str:
    metadata = item.get("metadata") or {}
    scope = metadata.get("scope") if isinstance(metadata, dict) else None
    return str(scope or "ARCHIVAL").upper()  # untagged counts as archival


def _time_of(item: dict[str, Any]) -> str | None:
    raw = item.get("created_at") or item.get("createdAt")
    if not isinstance(raw, str):
        return None
    try:
        stamp = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        return None
    if stamp.tzinfo is not None:
        stamp = stamp.astimezone()  # shown in local time, like every other backend
    return stamp.strftime(TIME_FORMAT)


def _line(item: dict[str, Any]) -> str:
    return clean_entry_line(_time_of(item), str(item.get("memory") or item.get("text") or ""))


class Mem0MemoryStore:
    name = "mem0"
    watch = Watch.POLL
    windowed = True
    ranked = True  # the server's /search orders by relevance
    archival_list_limit = ARCHIVAL_KEEP

    def __init__(self, settings: Mem0Settings) -> None:
        self.settings = settings
        headers = {}
        if settings.api_key_env:
            key = os.environ.get(settings.api_key_env)
            if not key:
                raise ConfigError(
                    f"memory.mem0.api_key_env names {settings.api_key_env}, "
                    "but that environment variable is empty."
                )
            headers = {"Authorization": f"Bearer {key}", "X-API-Key": key}
        self.client = httpx.Client(
            base_url=settings.base_url.rstrip("/"),
            headers=headers,
            timeout=settings.timeout_seconds,
        )

    def user(self, agent: str | None) -> str:
        return f"{self.settings.user_id}:{agent}" if agent else self.settings.user_id

    def _request(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            response = self.client.request(method, path, **kwargs)
            response.raise_for_status()
            return response.json() if response.content else None
        except httpx.TimeoutException:
            problem = f"did not answer within {self.settings.timeout_seconds:g} s"
        except httpx.HTTPStatusError as exc:
            problem = f"answered HTTP {exc.response.status_code}"
        except httpx.HTTPError:
            problem = "cannot be reached"
        except ValueError:
            problem = "answered something that is not JSON"
        raise ServiceUnavailable(
            f"The mem0 server at {masked_text(self.settings.base_url)} {problem}; check "
            "memory.mem0.base_url and that the server is running."
        )

    def _lines(self, agent: str | None) -> tuple[list[str], list[str]]:
        items = _items(self._request("GET", "/memories", params={"user_id": self.user(agent)}))
        items.sort(key=lambda item: str(item.get("created_at") or ""))  # oldest first
        core = [_line(item) for item in items if _scope_of(item) == "CORE"]
        archival = [_line(item) for item in items if _scope_of(item) != "CORE"]
        return core, archival[-ARCHIVAL_KEEP:]

    def append(
        self,
        agent: str | None,
        time: str,
        content: str,
        scope: Scope,
        by: Actor = CLI,
        op: str = "save",
        may_update: Sequence[Key] = (),
    ) -> MemoryEntry:
        """Stored by the server, which keeps no history oryxtui can read (`by` is not kept)."""
        self._request(
            "POST",
            "/memories",
            json={
                "messages": [{"role": "user", "content": content}],
                "user_id": self.user(agent),
                "metadata": {"scope": _SCOPES[scope]},
                "infer": scope is Scope.ARCHIVAL,
            },
        )
        return entry_from_line(entry_line(time, content), scope)

    def search(self, agent: str | None, keyword: str) -> list[MemoryEntry]:
        found = _items(
            self._request(
                "POST",
                "/search",
                json={
                    "query": keyword,
                    "user_id": self.user(agent),
                    "filters": {"scope": "ARCHIVAL"},
                },
            )
        )
        # In the server's order, most relevant first, as upstream returns them.
        hits = [item for item in found if _scope_of(item) != "CORE"]
        return [entry_from_line(_line(item), Scope.ARCHIVAL) for item in hits]

    def read(
        self, agent: str | None, newest_bytes: int | None = None, above_bytes: int | None = None
    ) -> MemoryRead:
        core, archival = self._lines(agent)
        return MemoryRead(
            core=EntrySequence(core, Scope.CORE),
            archival=EntrySequence(archival, Scope.ARCHIVAL),
            core_block=Section(core),
            archival_block=Section(archival),
        )

    def count_archival(self, agent: str | None) -> int:
        return len(self.read(agent).archival)
