"""`oryxtui mcp --agent NAME` as a client launches it: a real process on stdio, driven by the
SDK's own client; told of a save made by the real `oryxtui memory save`; answering lines that
are not JSON-RPC; leaving nothing half-written when its client goes away mid-call."""

from __future__ import annotations

import json
import subprocess
import time
import warnings
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters

from oryxtui.config import Settings
from oryxtui.mcp.server import memory_uri
from oryxtui.memory import MemoryService
from oryxtui.workspace import Workspace
from tests.mcp_support import initialize
from tests.support import agents_with_notes, oryxtui_executable

pytestmark = [pytest.mark.system, pytest.mark.xdist_group("system")]


@pytest.fixture
def ops(workspace: Workspace) -> Workspace:
    return agents_with_notes(workspace, "ops")


def launched(workspace: Workspace, agent: str = "ops") -> StdioServerParameters:
    """What Claude Code's `claude mcp add oryx -- oryxtui mcp --agent ops` runs."""
    return StdioServerParameters(
        command=oryxtui_executable(), args=["mcp", "--agent", agent, "--root", str(workspace.root)]
    )


async def test_a_client_launches_it_saves_recalls_and_hears_a_cli_save(ops: Workspace) -> None:
    told: list[str] = []

    async def heard(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            told.append(message.params.uri)

    codex = types.Implementation(name="codex-mcp-client", version="0.9")
    async with Client(
        launched(ops), mode="legacy", client_info=codex, message_handler=heard
    ) as client:
        saved = await client.call_tool("save_memory", {"content": "the build cache is in S3"})
        assert not saved.is_error and json.loads(saved.content[0].text)["held"]  # type: ignore[union-attr]
        found = await client.call_tool("recall_memory", {"query": "note"})
        assert "note of ops" in found.content[0].text  # type: ignore[union-attr]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the 2025 protocol's subscribe
            await client.session.subscribe_resource(memory_uri("ops"))
        root = ("--root", str(ops.root))
        done = await anyio.run_process(
            [oryxtui_executable(), "memory", "save", "--agent", "ops", *root, "a CLI fact"]
        )
        assert done.returncode == 0
        with anyio.fail_after(15):
            while memory_uri("ops") not in told:
                await anyio.sleep(0.02)
        block = await client.read_resource(memory_uri("ops"))
        assert "a CLI fact" in block.contents[0].text  # type: ignore[union-attr]
    held = MemoryService.open(ops, Settings()).held("ops")
    assert [(i.entry.content, i.record.actor) for i in held] == [
        ("the build cache is in S3", "mcp:codex-mcp-client")
    ]


def test_lines_that_are_not_json_rpc_are_answered_and_serving_goes_on(ops: Workspace) -> None:
    lines = [
        "not json at all",
        json.dumps({"jsonrpc": "2.0", "id": 0, "method": 5}),
        json.dumps(initialize("raw")),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "no/such/method"}),
        json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}),
    ]
    process = subprocess.Popen(
        [*launched_command(ops)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write("\n".join(lines) + "\n")
    process.stdin.flush()
    answers = [json.loads(process.stdout.readline()) for _ in range(5)]  # stdout: only JSON
    process.stdin.close()
    assert process.wait(timeout=30) == 0
    assert [a.get("id") for a in answers] == [None, None, 1, 2, 3]
    assert answers[0]["error"]["code"] == -32700 and answers[1]["error"]["code"] == -32600
    for answer in answers[:2]:
        assert answer["error"]["message"].endswith(".") and "\n" not in answer["error"]["message"]
    assert answers[3]["error"]["code"] == -32601
    assert "save_memory" in {tool["name"] for tool in answers[4]["result"]["tools"]}
    assert "Traceback" not in process.stderr.read()  # type: ignore[union-attr]


def test_a_client_gone_mid_call_leaves_nothing_half_written(ops: Workspace) -> None:
    before = MemoryService.open(ops, Settings()).snapshot("ops")
    for round_ in range(5):
        process = subprocess.Popen(
            launched_command(ops), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert process.stdin is not None
        calls = [
            initialize("gone"),
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            *(
                {
                    "jsonrpc": "2.0",
                    "id": 10 + n,
                    "method": "tools/call",
                    "params": {"name": "save_memory", "arguments": {"content": f"r{round_}-{n}"}},
                }
                for n in range(20)
            ),
        ]
        process.stdin.write("".join(json.dumps(c) + "\n" for c in calls))
        process.stdin.flush()
        time.sleep(0.05 * round_)  # the client goes away at another moment each round
        process.stdin.close()  # …with its calls in flight
        assert process.wait(timeout=30) == 0
    service = MemoryService.open(ops, Settings())
    after = service.snapshot("ops")
    assert after.core == before.core and after.archival == before.archival  # all were held
    held = service.held("ops")
    assert all(item.record.actor == "mcp:gone" for item in held)
    contents = [item.entry.content for item in held]
    assert len(contents) == len(set(contents))  # each at most once, each whole
    assert all(c.startswith("r") and c.count("-") == 1 for c in contents)
    assert service.history_problems("ops") is None


def launched_command(workspace: Workspace) -> list[str]:
    params = launched(workspace)
    return [params.command, *params.args]


def test_the_command_refuses_an_unknown_agent_in_one_sentence(ops: Workspace) -> None:
    done = subprocess.run(
        [oryxtui_executable(), "mcp", "--agent", "opz", "--root", str(ops.root)],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert "ops" in done.stderr and len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "client", ["claude-code", "claude-desktop", "cursor", "windsurf", "vscode", "codex"]
)
async def test_each_clients_snippet_works_as_pasted(ops: Workspace, client: str) -> None:
    """`oryxtui mcp config CLIENT` (issue 46): what it prints parses as that client reads it
    (a shell line, JSON, TOML), names this oryxtui and workspace by absolute paths, and what
    it launches answers `initialize` and lists the tools, through the SDK's own client."""
    import shlex
    import tomllib

    printed = subprocess.run(
        [oryxtui_executable(), "mcp", "config", client, "--agent", "ops", "--root", str(ops.root)],
        capture_output=True, text=True, timeout=60, cwd="/",
    )  # fmt: skip
    assert printed.returncode == 0, printed.stderr
    assert printed.stderr.startswith("oryxtui: ") and printed.stderr.count("\n") == 1
    text = printed.stdout
    if client == "claude-code":
        words = shlex.split(text)
        assert words[:4] == ["claude", "mcp", "add", "oryx"] and words[4] == "--"
        command, args = words[5], words[6:]
    elif client == "codex":
        server = tomllib.loads(text)["mcp_servers"]["oryx"]
        command, args = server["command"], server["args"]
    else:
        key = "servers" if client == "vscode" else "mcpServers"
        server = json.loads(text)[key]["oryx"]
        command, args = server["command"], server["args"]
    assert command.startswith("/") and str(ops.root) in args  # works from any folder
    params = StdioServerParameters(command=command, args=args, cwd="/")
    async with Client(params, mode="legacy") as session:
        info = session.server_info
        assert info is not None and info.name == "oryxtui"
        names = {tool.name for tool in (await session.list_tools()).tools}
        assert {"save_memory", "recall_memory", "replace_memory"} <= names
