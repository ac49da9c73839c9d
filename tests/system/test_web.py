"""`oryxtui web` for real: the installed executable serving the dashboard with textual-serve,
refusing foreign hosts and origins, and driven by headless Chromium (Debian's `chromium`; .ci/run
installs it) over the DevTools protocol — the page loads, the agents and the core pane reach it,
and keys typed into it save an entry that lands in MEMORY.md."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import httpx
import pytest

from tests.serve_process import free_port
from tests.support import oryxtui_executable, run_oryxtui

# Real processes, terminals, browsers, installs or scale: one at a time (`--dist loadgroup`),
# so no two of them compete for the machine at the same moment.
pytestmark = [pytest.mark.system, pytest.mark.xdist_group("system")]

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class WebProcess:
    def __init__(self, root: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [oryxtui_executable(), "web", "--root", str(root), "--port", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,  # the dashboards it starts go with it
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                if self.process.poll() is not None:
                    raise AssertionError(self.process.stderr.read().decode()) from None  # type: ignore[union-attr]
                assert time.monotonic() < deadline, "oryxtui web did not come up"
                time.sleep(0.05)

    def stop(self) -> None:
        """SIGTERM to the server and the dashboards it started, as a service manager stops
        it: every one of them ends (one once lived on, waiting on its index keeper)."""
        group = self.process.pid
        os.killpg(group, signal.SIGTERM)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(group, signal.SIGKILL)
        deadline = time.monotonic() + 15
        while living_in_group(group):
            if time.monotonic() > deadline:
                os.killpg(group, signal.SIGKILL)
                raise AssertionError("a dashboard outlived `oryxtui web` after SIGTERM")
            time.sleep(0.05)


def living_in_group(group: int) -> list[int]:
    """The processes of a process group that still run (not the ended ones that an init which
    does not reap leaves as zombies)."""
    living = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # ended meanwhile
            continue
        state, pgrp = fields[0], int(fields[2])
        if pgrp == group and state != "Z":
            living.append(int(stat.parent.name))
    return living


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    assert run_oryxtui("demo", str(tmp_path / "demo"), "--no-open").returncode == 0
    return tmp_path / "demo"


@pytest.fixture
def web(demo: Path) -> Iterator[WebProcess]:
    server = WebProcess(demo)
    yield server
    server.stop()


def upgrade_status(port: int, origin: str | None, host: str = "127.0.0.1") -> int:
    """The status a websocket handshake for /ws gets."""
    lines = [
        "GET /ws HTTP/1.1",
        f"Host: {host}:{port}",
        "Connection: Upgrade",
        "Upgrade: websocket",
        "Sec-WebSocket-Version: 13",
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
    ]
    if origin is not None:
        lines.append(f"Origin: {origin}")
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        first = connection.recv(200).decode("latin-1").split("\r\n")[0]
    return int(first.split()[1])


def test_only_this_machine_and_this_page_are_answered(web: WebProcess) -> None:
    assert httpx.get(web.url + "/", timeout=30).status_code == 200
    for host in ["evil.example", "127.0.0.1.nip.io", "attacker.test:80"]:
        refused = httpx.get(web.url + "/", headers={"Host": host}, timeout=30)
        assert refused.status_code == 403
    foreign = httpx.get(web.url + "/", headers={"Origin": "http://evil.example"}, timeout=30)
    assert foreign.status_code == 403
    assert upgrade_status(web.port, "http://evil.example") == 403
    assert upgrade_status(web.port, None) == 403  # a websocket says where it comes from
    assert upgrade_status(web.port, web.url, host="evil.example") == 403
    assert upgrade_status(web.port, f"http://localhost:{web.port}") == 101


def test_a_non_loopback_bind_is_refused(demo: Path) -> None:
    result = run_oryxtui("web", "--root", str(demo), "--host", "0.0.0.0")
    assert result.returncode == 2 and "this machine only" in result.stderr


class Browser:
    """Headless Chromium, driven over the DevTools protocol (a websocket of its own)."""

    def __init__(self, profile: Path) -> None:
        assert CHROMIUM, "chromium is needed for this test (.ci/run installs it)"
        self.process = subprocess.Popen(
            [
                CHROMIUM,
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--window-size=1400,1000",
                f"--user-data-dir={profile}",
                "--remote-debugging-port=0",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 60
        self.devtools = ""
        while not self.devtools:
            line = self.process.stderr.readline()  # type: ignore[union-attr]
            if found := re.search(r"DevTools listening on (ws://\S+)", line):
                self.devtools = found[1]
            assert line or self.process.poll() is None, "chromium exited"
            assert time.monotonic() < deadline, "chromium did not start"
        self.port = int(re.search(r":(\d+)/", self.devtools)[1])  # type: ignore[index]

    def page_socket(self) -> str:
        pages = httpx.get(f"http://127.0.0.1:{self.port}/json/list", timeout=30).json()
        return next(p["webSocketDebuggerUrl"] for p in pages if p["type"] == "page")

    def close(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


class Page:
    """One page: commands answered by id; what its websockets receive, kept as text."""

    def __init__(self, socket_: aiohttp.ClientWebSocketResponse) -> None:
        self.socket = socket_
        self.next_id = 0
        self.answers: dict[int, asyncio.Future[Any]] = {}
        self.received = ""  # everything the page's websockets were sent, decoded
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for message in self.socket:
            data = json.loads(message.data)
            if "id" in data and data["id"] in self.answers:
                self.answers.pop(data["id"]).set_result(data)
            elif data.get("method") == "Network.webSocketFrameReceived":
                response = data["params"]["response"]
                payload = response["payloadData"]
                if response.get("opcode") == 2:
                    payload = base64.b64decode(payload).decode("utf-8", "replace")
                self.received += payload

    async def send(self, method: str, **params: Any) -> Any:
        self.next_id += 1
        answer = asyncio.get_running_loop().create_future()
        self.answers[self.next_id] = answer
        await self.socket.send_str(
            json.dumps({"id": self.next_id, "method": method, "params": params})
        )
        return (await asyncio.wait_for(answer, 60)).get("result")

    async def wait_for(self, condition: Any, what: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            assert time.monotonic() < deadline, f"timed out waiting for {what}"
            await asyncio.sleep(0.05)

    async def type(self, text: str) -> None:
        await self.send("Input.insertText", text=text)

    async def press_enter(self) -> None:
        for kind in ("keyDown", "keyUp"):
            await self.send(
                "Input.dispatchKeyEvent",
                type=kind,
                key="Enter",
                code="Enter",
                windowsVirtualKeyCode=13,
                **({"text": "\r"} if kind == "keyDown" else {}),
            )


def test_the_dashboard_in_headless_chromium_saves_an_entry(
    web: WebProcess, demo: Path, tmp_path: Path
) -> None:
    memory_file = demo / ".oryxos" / "agents" / "atlas" / "MEMORY.md"
    browser = Browser(tmp_path / "profile")

    async def drive() -> None:
        async with (
            aiohttp.ClientSession() as session,
            session.ws_connect(browser.page_socket(), max_msg_size=0) as socket_,
        ):
            page = Page(socket_)
            await page.send("Network.enable")
            await page.send("Page.enable")
            await page.send("Page.navigate", url=web.url + "/")
            # What the dashboard drew reached the page: the agents and the core pane.
            await page.wait_for(
                lambda: all(w in page.received for w in ("atlas", "ops-bot", "Core · 2")),
                "the dashboard in the page",
            )
            shot = await page.send("Page.captureScreenshot", format="png")
            (tmp_path / "dashboard.png").write_bytes(base64.b64decode(shot["data"]))
            assert (tmp_path / "dashboard.png").stat().st_size > 10_000
            await page.send(
                "Runtime.evaluate",
                expression="document.querySelector('.xterm-helper-textarea').focus()",
            )
            await page.type("s")
            await page.wait_for(lambda: "Save to agent atlas" in page.received, "the dialog")
            await page.type("typed in a browser")
            await page.wait_for(lambda: "typed in a browser" in page.received, "the text")
            await page.press_enter()
            await page.wait_for(
                lambda: "] typed in a browser" in memory_file.read_text(), "the save on disk"
            )
            page.reader.cancel()

    try:
        asyncio.run(drive())
    finally:
        browser.close()
