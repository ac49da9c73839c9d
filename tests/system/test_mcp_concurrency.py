"""Many MCP clients on one agent at once, with the dashboard open: 4 stdio servers (one process
each, as four clients launch them) and 2 HTTP sessions on `oryxtui serve`, 50 saves each —
300 entries and 300 history records, none lost, none torn, on each backend."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters

from oryxtui.memory import MemoryService
from oryxtui.memory.history import is_mcp
from oryxtui.workspace import Workspace
from tests.backends import BACKENDS, backend_settings, on_database
from tests.dashboard_support import archival_pane, make_app, wait_for
from tests.mcp_support import http_session
from tests.serve_process import ServeProcess
from tests.support import make_agent, make_key, oryxtui_executable

pytestmark = [pytest.mark.system, pytest.mark.xdist_group("system")]

SAVES = 50


@asynccontextmanager
async def stdio_client(workspace: Workspace, n: int, env: dict[str, str]) -> AsyncIterator[Client]:
    params = StdioServerParameters(
        command=oryxtui_executable(),
        args=["mcp", "--agent", "ops", "--root", str(workspace.root)],
        env={**os.environ, **env},
    )
    info = types.Implementation(name=f"stdio-{n}", version="1")
    async with Client(params, mode="legacy", client_info=info) as client:
        yield client


def http_client(url: str, key: str, n: int) -> Any:
    info = types.Implementation(name=f"http-{n}", version="1")
    return http_session(url, key, "ops", info, timeout=60)


async def saving(opened: AsyncIterator[Client], name: str) -> None:
    async with opened as client:  # type: ignore[attr-defined]
        for n in range(SAVES):
            result = await client.call_tool("save_memory", {"content": f"{name} fact {n:03d}"})
            assert not result.is_error, result.content


@pytest.mark.parametrize("backend", BACKENDS)
async def test_six_clients_saving_at_once_lose_nothing(
    request: pytest.FixtureRequest,
    workspace: Workspace,
    backend: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = backend_settings(request, backend)
    env = on_database(str(settings.database.url)) if backend == "postgres" else {}
    for name, value in env.items():  # the key too is made in the shared database
        monkeypatch.setenv(name, value)
    config = "[mcp]\nhold = false\n" + (
        '[memory]\nbackend = "sqlite"\n' if backend == "sqlite" else ""
    )
    workspace.config_path.write_text(config)
    settings = settings.model_copy(update={"mcp": settings.mcp.model_copy(update={"hold": False})})
    make_agent(workspace, "ops")
    key = make_key(workspace, "writer", "write")
    app = make_app(workspace, settings)
    with ServeProcess(workspace.root, env=env) as server:
        async with app.run_test(size=(120, 40)) as pilot:
            async with anyio.create_task_group() as clients:
                for n in range(4):
                    clients.start_soon(saving, stdio_client(workspace, n, env), f"stdio-{n}")
                for n in range(2):
                    clients.start_soon(saving, http_client(server.url, key, n), f"http-{n}")
            # The dashboard, open all along, shows them all (it reloaded as they came).
            await wait_for(pilot, lambda: archival_pane(app).view.row_count == 6 * SAVES, 60)
    service = MemoryService.open(workspace, settings)
    archival = [entry.content for entry in service.snapshot("ops").archival]
    wanted = [
        f"{who}-{n} fact {s:03d}"
        for who in ("stdio", "http")
        for n in range(4 if who == "stdio" else 2)
        for s in range(SAVES)
    ]
    assert sorted(archival) == sorted(wanted)  # 300, each once, whole
    for who in [*(f"stdio-{n}" for n in range(4)), *(f"http-{n}" for n in range(2))]:
        mine = [c for c in archival if c.startswith(f"{who} ")]
        assert mine == sorted(mine)  # each client's saves in the order it made them
    saves = [r for r in service.history("ops") if r.op == "save" and is_mcp(r.actor)]
    assert len(saves) == 6 * SAVES
    assert {r.actor for r in saves} == {f"mcp:stdio-{n}" for n in range(4)} | {
        f"mcp:http-{n}" for n in range(2)
    }
    assert {r.via for r in saves if r.actor.startswith("mcp:http")} == {"api:writer"}
    assert service.history_problems("ops") is None
