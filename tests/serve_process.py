"""The real `oryxtui serve` in its own process, on a free port of 127.0.0.1."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

import httpx

from tests.support import oryxtui_executable


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class ServeProcess:
    """`with ServeProcess(root) as server:` — up and answering, stopped on exit."""

    def __init__(
        self, root: Path, *args: str, env: dict[str, str] | None = None, port: int | None = None
    ) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.command = [
            oryxtui_executable(),
            "serve",
            "--root",
            str(root),
            "--port",
            str(self.port),
            *args,
        ]
        # Only what the test gives: a server a module shares starts before the per-test
        # isolation (conftest), so no user's ORYXTUI_* setting may reach it from here.
        inherited = {
            name: value
            for name, value in os.environ.items()
            if not name.startswith("ORYXTUI_") and name != "ORYXOS_ROOT"
        }
        self.env = {**inherited, **(env or {})}

    def __enter__(self) -> ServeProcess:
        self.process = subprocess.Popen(
            self.command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return self
            except OSError:
                if self.process.poll() is not None:
                    raise AssertionError(self.process.stderr.read().decode()) from None
                assert time.monotonic() < deadline, "oryxtui serve did not come up"
                time.sleep(0.05)

    def client(self, **headers: str) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=30, headers=headers)

    def rss_kb(self) -> int:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        return int(
            next(line for line in status.splitlines() if line.startswith("VmRSS")).split()[1]
        )

    def crash(self) -> None:
        """Killed at once, as a crash or a lost host: no goodbye to any client."""
        self.process.kill()
        self.process.wait()

    def __exit__(self, *_: object) -> None:
        if self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
