"""The REST API served from a thread of the test's own process, on 127.0.0.1 (a real HTTP
server: uvicorn, a free port, an httpx client)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable

import httpx
import uvicorn
from fastapi import FastAPI

from oryxtui.api.app import create_api
from oryxtui.config import Settings
from oryxtui.workspace import Workspace
from tests.serve_process import free_port


class RunningApi:
    def __init__(
        self, workspace: Workspace, token: str | None = None, app: FastAPI | None = None
    ) -> None:
        config = uvicorn.Config(
            app or create_api(workspace, Settings(), token),
            host="127.0.0.1",
            port=free_port(),
            log_level="warning",
            timeout_graceful_shutdown=1,  # event streams end only when cut, as `serve` does
        )
        self.server = uvicorn.Server(config)
        self.url = f"http://127.0.0.1:{config.port}"
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> httpx.Client:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.01)
        self.client = httpx.Client(base_url=self.url, timeout=10)
        return self.client

    def __exit__(self, *_: object) -> None:
        self.client.close()
        self.server.should_exit = True
        self.thread.join(timeout=10)


def as_served(workspace: Workspace) -> RunningApi:
    """The API as `oryxtui serve` makes it for this workspace (its config.toml read), in this
    process: for tests of what the API answers rather than of the `serve` command."""
    from oryxtui.config import load_settings

    return RunningApi(workspace, app=create_api(workspace, load_settings(workspace.config_path)))


class EventReader:
    """A client of `/api/v1/events`: the events as (id, data), read with a deadline. Parsed
    here, apart from oryxtui's own client, so a fault in one is not hidden by the other."""

    def __init__(
        self, url: str, headers: dict[str, str] | None = None, since: str | None = None
    ) -> None:
        self._client = httpx.Client(base_url=url, timeout=httpx.Timeout(10, read=10))
        params = {"since": since} if since else {}
        self._stream = self._client.stream(
            "GET", "/api/v1/events", headers=headers or {}, params=params
        )
        self.response = self._stream.__enter__()
        self._lines = self.response.iter_lines()
        self.comments = 0

    def next(self) -> tuple[str | None, dict]:
        event_id, data = None, []
        for line in self._lines:
            if line == "" and data:
                return event_id, json.loads("\n".join(data))
            if line.startswith(":"):
                self.comments += 1
            elif line.startswith("id: "):
                event_id = line[4:]
            elif line.startswith("data: "):
                data.append(line[6:])
        raise AssertionError("the event stream ended")

    def until(self, wanted: Callable[[dict], bool], deadline_s: float = 10) -> list:
        """Events up to and including the first that `wanted` accepts."""
        seen = []
        deadline = time.monotonic() + deadline_s
        while time.monotonic() < deadline:
            event = self.next()
            seen.append(event)
            if wanted(event[1]):
                return seen
        raise AssertionError(f"no such event within {deadline_s} s; saw {seen}")

    def close(self) -> None:
        self._stream.__exit__(None, None, None)
        self._client.close()

    def __enter__(self) -> EventReader:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
