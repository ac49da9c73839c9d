"""The REST API served from a thread of the test's own process, on 127.0.0.1 (a real HTTP
server: uvicorn, a free port, an httpx client)."""

from __future__ import annotations

import threading
import time

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
