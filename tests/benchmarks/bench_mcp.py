"""The MCP server (issue 33). Prints JSON.

- `save_memory` and `recall_memory` round trips over stdio (`oryxtui mcp`, launched by the SDK's
  client) and over streamable HTTP (`/mcp` of a real `oryxtui serve`), p50/p95, against the
  same operation through the Python API (`MemoryService.save` / `recall` + `find_core`, what the
  tools call) in the same run; target: stdio ≤ 2× the in-process call + 5 ms.
- a resource-updated notification after a save by another writer (the Python API, as the CLI
  saves), to a client subscribed over stdio, p50/p95; target ≤ 300 ms.

Saves are not held for review here ([mcp] hold = false), so each side writes an entry and its
history record: the same work.

Run: python tests/benchmarks/bench_mcp.py [--calls N]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests.* helpers

from timing import summarize

QUERY = "deploy window"


def workspace_at(folder: Path) -> Any:
    from oryxtui.config import Settings
    from oryxtui.memory import MemoryService
    from oryxtui.workspace import init_workspace
    from tests.support import make_agent

    workspace = init_workspace(folder / "project")
    workspace.config_path.write_text("[mcp]\nhold = false\n")
    make_agent(workspace, "ops")
    memory = MemoryService.open(workspace, Settings())
    for n in range(200):  # an agent with some history to recall from
        memory.save("ops", f"note {n}: the deploy window for service {n % 17} is at {n % 24}:00")
    return workspace


def in_process(workspace: Any, calls: int) -> dict[str, Any]:
    from oryxtui.config import Settings
    from oryxtui.memory import MemoryService

    memory = MemoryService.open(workspace, Settings.model_validate({"mcp": {"hold": False}}))
    saves, recalls = [], []
    memory.recall("ops", QUERY)  # warm: the index built, as a running server has it
    for n in range(calls):
        started = time.perf_counter()
        memory.save("ops", f"in-process fact {n}")
        saves.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        memory.find_core("ops", QUERY)
        memory.recall("ops", QUERY)
        recalls.append((time.perf_counter() - started) * 1000)
    return {"save": summarize(saves), "recall": summarize(recalls)}


async def round_trips(client: Any, calls: int, name: str) -> dict[str, Any]:
    saves, recalls = [], []
    await client.call_tool("recall_memory", {"query": QUERY})  # warm
    for n in range(calls):
        started = time.perf_counter()
        result = await client.call_tool("save_memory", {"content": f"{name} fact {n}"})
        saves.append((time.perf_counter() - started) * 1000)
        assert not result.is_error, result.content
        started = time.perf_counter()
        result = await client.call_tool("recall_memory", {"query": QUERY})
        recalls.append((time.perf_counter() - started) * 1000)
        assert not result.is_error, result.content
    return {"save": summarize(saves), "recall": summarize(recalls)}


def launched(workspace: Any) -> Any:
    from mcp import StdioServerParameters

    from tests.support import oryxtui_executable

    return StdioServerParameters(
        command=oryxtui_executable(), args=["mcp", "--agent", "ops", "--root", str(workspace.root)]
    )


async def over_stdio(workspace: Any, calls: int) -> dict[str, Any]:
    import mcp_types as types
    from mcp import Client

    info = types.Implementation(name="bench", version="1")
    async with Client(launched(workspace), mode="legacy", client_info=info) as client:
        return await round_trips(client, calls, "stdio")


async def over_http(workspace: Any, calls: int) -> dict[str, Any]:
    import httpx
    import mcp_types as types
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    from tests.serve_process import ServeProcess

    info = types.Implementation(name="bench", version="1")
    with ServeProcess(workspace.root) as server:
        async with (
            httpx.AsyncClient(timeout=60) as http,
            Client(
                streamable_http_client(f"{server.url}/mcp/agents/ops", http_client=http),
                mode="legacy",
                client_info=info,
            ) as client,
        ):
            return await round_trips(client, calls, "http")


async def notification(workspace: Any, saves: int) -> dict[str, Any]:
    """From the start of another writer's save to the subscribed client hearing of it."""
    import mcp_types as types
    from mcp import Client

    from oryxtui.config import Settings
    from oryxtui.mcp.server import memory_uri
    from oryxtui.memory import MemoryService

    heard = anyio.Event()

    async def handler(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            heard.set()

    writer = MemoryService.open(workspace, Settings())  # as `oryxtui memory save` writes
    samples = []
    info = types.Implementation(name="bench", version="1")
    async with Client(
        launched(workspace), mode="legacy", client_info=info, message_handler=handler
    ) as client:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            await client.session.subscribe_resource(memory_uri("ops"))
        await anyio.sleep(1.0)  # the server's watcher armed
        for n in range(saves):
            heard = anyio.Event()
            started = time.perf_counter()
            await anyio.to_thread.run_sync(writer.save, "ops", f"written elsewhere {n}")
            with anyio.fail_after(10):
                await heard.wait()
            samples.append((time.perf_counter() - started) * 1000)
            await anyio.sleep(0.15)  # past the watcher's debounce: one save, one notification
    return summarize(samples)


def run(calls: int = 100, notifications: int = 30) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        workspace = workspace_at(Path(folder))
        python_api = in_process(workspace, calls)
        stdio = anyio.run(over_stdio, workspace, calls)
        http = anyio.run(over_http, workspace, calls)
        told = anyio.run(notification, workspace, notifications)
    api_save, stdio_save = python_api["save"]["median_ms"], stdio["save"]["median_ms"]
    api_recall, stdio_recall = python_api["recall"]["median_ms"], stdio["recall"]["median_ms"]
    return {
        "python_api": python_api,
        "stdio": stdio,
        "http": http,
        "stdio_save_target_ms": round(2 * api_save + 5, 3),
        "stdio_save_within_target": stdio_save <= 2 * api_save + 5,
        "stdio_recall_target_ms": round(2 * api_recall + 5, 3),
        "stdio_recall_within_target": stdio_recall <= 2 * api_recall + 5,
        "notification_after_save": told,
        "notification_within_300_ms": told["p95_ms"] <= 300,
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--notifications", type=int, default=30)
    options = parser.parse_args()
    print(json.dumps(run(options.calls, options.notifications), indent=2))
