"""A tmux server of the tests' own, to run the real `oryxtui` in a terminal, type keys and read
the screen."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable

# What a tmux client says when the server it started went away before answering. Seen once in CI
# on a fresh machine (tmux just installed, four workers starting servers at once); starting the
# terminal is the harness, not what a test checks, so it is tried again on a fresh socket.
SERVER_LOST = ("server exited unexpectedly", "lost server", "no server running")


class Terminal:
    """A tmux server of our own (its own socket file, no user configuration), one session,
    120x40."""

    def __init__(self, socket: str) -> None:
        self.socket = socket

    def tmux(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["tmux", "-S", self.socket, "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            timeout=30,
        )

    def start(self, command: str, width: int = 120, height: int = 40) -> None:
        size = ("-x", str(width), "-y", str(height))
        errors = []
        for _attempt in range(3):
            result = self.tmux("new-session", "-d", "-s", "e2e", *size, command)
            if result.returncode == 0:
                return
            errors.append(result.stderr.strip())
            if not any(lost in result.stderr for lost in SERVER_LOST):
                break
            self.tmux("kill-server")
        raise AssertionError(f"tmux did not start: {errors}")

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "e2e").stdout

    def keys(self, *keys: str, literal: bool = False) -> None:
        self.tmux("send-keys", "-t", "e2e", *(["-l"] if literal else []), *keys)

    def alive(self) -> bool:
        return self.tmux("has-session", "-t", "e2e").returncode == 0

    def wait(self, condition: Callable[[], object], what: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; screen:\n{self.screen()}")
            time.sleep(0.05)
