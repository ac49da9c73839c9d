"""The MCP server in-process, driven by the SDK's own client (`mcp.Client` on the server
object): every tool, resource and refusal, what is recorded (history actor, audit rows, the
review inbox), and subscriptions of both protocols told of changes by other writers."""

from __future__ import annotations

import json
import os
import sqlite3
import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from oryxtui.config import Settings
from oryxtui.mcp.server import MemoryServer, core_uri, memory_uri
from oryxtui.memory import MemoryService
from oryxtui.memory.history import Actor
from oryxtui.memory.recall.results import NOTHING_FOUND
from oryxtui.places import Here
from oryxtui.workspace import Workspace
from tests.backends import BACKENDS, backend_settings, on_database
from tests.dashboard_support import upstream_append
from tests.mcp_support import until
from tests.support import agents_with_notes, oryxtui_executable

CLIENT = types.Implementation(name="Claude Code", version="2.1")


@pytest.fixture
def ops(workspace: Workspace) -> Workspace:
    return agents_with_notes(workspace, "ops", "atlas")


def place_of(workspace: Workspace, **mcp: Any) -> Here:
    return Here(workspace, Settings.model_validate({"mcp": mcp}))


@asynccontextmanager
async def connected(
    place: Here, agent: str | None = "ops", mode: str = "legacy", **options: Any
) -> AsyncIterator[Client]:
    async with Client(
        MemoryServer(place, agent), mode=mode, client_info=CLIENT, **options
    ) as client:
        yield client


async def call(client: Client, name: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
    """(is_error, the answer: JSON read, or the refusal's sentence)."""
    result = await client.call_tool(name, arguments)
    assert len(result.content) == 1 and isinstance(result.content[0], types.TextContent)
    text = result.content[0].text
    return bool(result.is_error), text if result.is_error else json.loads(text)


def audit(workspace: Workspace) -> list[tuple[Any, ...]]:
    with sqlite3.connect(workspace.db_path) as db:
        return db.execute(
            "SELECT session_id, tool_name, success, error_message FROM tool_invocations ORDER BY id"
        ).fetchall()


async def test_the_tools_a_client_sees_are_described_for_a_model(ops: Workspace) -> None:
    async with connected(place_of(ops)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert sorted(tools) == [
            "recall_memory",
            "replace_memory",
            "save_memory",
            "search_conversations",
            "show_memory",
        ]
        replace = tools["replace_memory"]
        assert replace.input_schema["required"] == ["id", "content"]
        assert replace.annotations is not None and replace.annotations.destructive_hint
        assert replace.annotations.read_only_hint is False
        save = tools["save_memory"]
        assert save.input_schema["required"] == ["content"]
        assert set(save.input_schema["properties"]) == {"content", "scope"}
        assert "one self-contained line" in (save.description or "")
        assert save.annotations is not None and save.annotations.read_only_hint is False
        recall = tools["recall_memory"].input_schema["properties"]
        assert set(recall) == {"query", "limit"} and recall["limit"]["maximum"] == 50
        assert tools["show_memory"].annotations.read_only_hint  # type: ignore[union-attr]
        info = client.server_info
        assert info is not None and info.name == "oryxtui"
    async with connected(place_of(ops, edits=True)) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert {"edit_memory", "delete_memory"} <= names


async def test_a_replacement_is_held_then_made_and_a_save_names_what_it_may_replace(
    ops: Workspace,
) -> None:
    place = place_of(ops)
    memory = place.memory
    old = memory.save("ops", "Staging host for ledger is stg-11.internal.")
    async with connected(place) as client:
        failed, answer = await call(
            client, "replace_memory", {"id": old.id, "content": "Staging host is stg-14."}
        )
        assert not failed and answer["held"] is True and answer["replaced"] is False
        assert "stg-11" in ops.memory_file("ops").read_text()  # held: the old one stays
        failed, refused = await call(
            client, "replace_memory", {"id": "000000000000", "content": "x"}
        )
        assert failed and "No entry 000000000000" in refused
    (held,) = [item for item in memory.held("ops") if item.proposes == "replace"]
    memory.approve("ops", [held.id])
    text = ops.memory_file("ops").read_text()
    assert "stg-11" not in text and "Staging host is stg-14." in text
    assert [v.actor for v in memory.replaced_versions("ops")] == ["mcp:Claude-Code"]
    trusted = place_of(ops, hold=False)
    for n in range(30):  # a memory that has lived a little: its words weigh by rarity
        trusted.memory.save("ops", f"Routine check {n} of service s{n}: all green.")
    base = trusted.memory.save("ops", "Primary region for ledger is eu-west-1.")
    async with connected(trusted) as client:
        failed, answer = await call(
            client, "save_memory", {"content": "Primary region for ledger is now us-east-2."}
        )
    assert not failed and answer["saved"] is True
    assert [item["id"] for item in answer["may_update"]] == [base.id]
    assert "replace_memory" in answer["hint"]
    assert "update_memory" not in answer["hint"]  # a tool this server does not list
    async with connected(trusted) as client:  # nothing it may replace: said, never guessed
        failed, answer = await call(client, "save_memory", {"content": "A wholly new note."})
    assert not failed and answer["may_update"] == [] and "hint" not in answer


async def test_a_save_waits_for_a_person_and_is_recorded_as_the_client(ops: Workspace) -> None:
    place = place_of(ops)
    before = ops.memory_file("ops").read_bytes()
    async with connected(place) as client:
        failed, answer = await call(client, "save_memory", {"content": "deploys go out Tuesdays"})
    assert not failed and answer["held"] is True and answer["saved"] is False
    assert "awaits a person's approval" in answer["note"]
    assert ops.memory_file("ops").read_bytes() == before  # not in memory, nor in any prompt
    held = place.memory.held("ops")
    assert [item.entry.content for item in held] == ["deploys go out Tuesdays"]
    assert held[0].record.actor == "mcp:Claude-Code" and held[0].record.op == "hold"
    assert audit(ops) == [("mcp:Claude-Code", "save_memory", 1, None)]
    place.memory.approve("ops")
    history = place.memory.history("ops")
    saved = [record for record in history if record.op == "save"]
    assert saved[-1].actor == "mcp:Claude-Code"  # approved: written as the client's save
    assert "deploys go out Tuesdays" in ops.memory_file("ops").read_text()


async def test_a_trusted_client_saves_at_once_and_still_awaits_review(ops: Workspace) -> None:
    place = place_of(ops, hold=False)
    async with connected(place) as client:
        failed, answer = await call(
            client, "save_memory", {"content": "the pager rota is in Opsgenie", "scope": "Core"}
        )
        assert not failed and answer["saved"] is True and answer["scope"] == "core"
        failed, shown = await call(client, "show_memory", {})
    assert not failed
    assert "\n".join(shown["lines"]) == place.memory.build_context("ops")
    assert any("pager rota" in line for line in shown["lines"])
    waiting = place.memory.awaiting_review("ops")
    assert [item.record.actor for item in waiting] == ["mcp:Claude-Code"]


async def test_what_a_client_sends_passes_the_one_entry_path(ops: Workspace) -> None:
    place = place_of(ops, hold=False)
    async with connected(place) as client:
        failed, answer = await call(
            client, "save_memory", {"content": "red\x1b[31m alert\nsecond line\x07"}
        )
        assert not failed
        assert "\x1b" not in answer["entry"] and "\x07" not in answer["entry"]
        assert answer["entry"].endswith("red alert second line")  # the sequence gone whole
        limit = place.memory.max_entry_chars
        failed, said = await call(client, "save_memory", {"content": "x" * (limit + 1)})
        assert failed and str(limit) in said.replace(",", "") and "\n" not in said
    text = ops.memory_file("ops").read_text()
    assert text.count("\n- ") == 3 and "\x1b" not in text  # one entry more, one line


@pytest.mark.parametrize(
    ("name", "arguments", "said"),
    [
        ("save_memory", {"content": 5}, "content: Input should be a valid string"),
        ("save_memory", {}, "content: Field required"),
        ("save_memory", {"content": "x", "scope": "nope"}, "scope"),
        ("save_memory", {"content": "x", "agent": "atlas"}, "agent: Extra inputs"),
        ("recall_memory", {"query": "x", "limit": 0}, "limit"),
        ("recall_memory", {"query": "   "}, "Nothing to recall"),
        ("search_conversations", {"query": "x", "since": "soon"}, "not an ISO date"),
        ("forget_everything", {}, "Unknown tool 'forget_everything'"),
        ("edit_memory", {"id": "x", "content": "y"}, "[mcp] edits = true"),
        ("save_memory", {"content": "x" * 300_000}, "over the 262,144"),
    ],
)
async def test_bad_calls_are_one_sentence_and_write_nothing(
    ops: Workspace, name: str, arguments: dict[str, Any], said: str
) -> None:
    place = place_of(ops, hold=False)
    before = ops.memory_file("ops").read_bytes()
    async with connected(place) as client:
        failed, sentence = await call(client, name, arguments)
        assert failed and said in sentence, sentence
        assert "\n" not in sentence and "Traceback" not in sentence
        assert sentence.endswith(".")
        again, _ = await call(client, "recall_memory", {"query": "note"})  # still serving
        assert not again
    assert ops.memory_file("ops").read_bytes() == before
    rows = audit(ops)
    assert rows[0][:3] == ("mcp:Claude-Code", name, 0) and said in rows[0][3]  # audited
    assert all(row[0] == "mcp:Claude-Code" for row in rows)


async def test_recall_puts_matching_core_first_then_archival_best_first(ops: Workspace) -> None:
    service = MemoryService.open(ops, Settings())
    service.save("ops", "the ops deploy window is Tuesday 10:00", "core")
    for n in range(12):
        service.save("ops", f"unrelated note {n} about lunch")
    service.save("ops", "the deploy window moved to Wednesday")
    async with connected(place_of(ops)) as client:
        failed, found = await call(client, "recall_memory", {"query": "deploy window", "limit": 3})
    assert not failed and found["count"] == len(found["entries"]) <= 3
    first, second = found["entries"][:2]
    assert first["scope"] == "core" and "Tuesday" in first["content"]
    assert second["scope"] == "archival" and "Wednesday" in second["content"]
    assert first["id"] and first["time"]


async def test_edit_and_delete_are_compare_and_set_by_id(ops: Workspace) -> None:
    place = place_of(ops, edits=True, hold=False)  # a trusted client: changes land at once
    [note] = place.memory.snapshot("ops").archival
    async with connected(place) as client:
        failed, edited = await call(
            client, "edit_memory", {"id": note.id, "content": "note of ops, corrected"}
        )
        assert not failed and edited["edited"] and edited["id"] != note.id
        failed, said = await call(client, "delete_memory", {"id": note.id})  # stale: changed
        assert failed and note.id in said
        failed, deleted = await call(client, "delete_memory", {"id": edited["id"]})
        assert not failed and "corrected" in deleted["entry"]
    assert place.memory.snapshot("ops").archival == []
    history = sorted(place.memory.history("ops"), key=lambda record: record.n)
    changes = [(record.op, record.actor) for record in history][-2:]
    assert changes == [("edit", "mcp:Claude-Code"), ("delete", "mcp:Claude-Code")]
    assert [item.record.op for item in place.memory.awaiting_review("ops")] == []


async def test_the_memory_and_its_core_are_resources(ops: Workspace) -> None:
    place = place_of(ops)
    async with connected(place) as client:
        listed = {str(r.uri): r for r in (await client.list_resources()).resources}
        assert sorted(listed) == [memory_uri("ops"), core_uri("ops")]
        block = (await client.read_resource(memory_uri("ops"))).contents[0]
        assert isinstance(block, types.TextResourceContents)
        assert block.text == place.memory.build_context("ops")
        core = (await client.read_resource(core_uri("ops"))).contents[0]
        assert isinstance(core, types.TextResourceContents)
        assert core.text == "- [2026-07-20 08:00:00] core of ops\n"
        with pytest.raises(MCPError):
            await client.read_resource("oryx://agents/atlas/memory")  # another agent's: none
        assert client.server_capabilities.resources is not None
        assert client.server_capabilities.resources.subscribe


async def test_the_global_memory_is_served_when_no_agent_is_named(ops: Workspace) -> None:
    async with connected(place_of(ops, hold=False), agent=None) as client:
        failed, _ = await call(client, "save_memory", {"content": "a global fact"})
    assert not failed and "a global fact" in ops.global_memory_file.read_text()


async def test_a_legacy_subscriber_is_told_of_changes_by_any_writer(ops: Workspace) -> None:
    place = place_of(ops)
    told: list[str] = []

    async def heard(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            told.append(message.params.uri)

    server = MemoryServer(place, "ops")
    async with (
        server.following(),
        Client(server, mode="legacy", client_info=CLIENT, message_handler=heard) as client,
    ):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # resources/subscribe: the 2025 protocol's way
            await client.session.subscribe_resource(memory_uri("ops"))
            await client.session.subscribe_resource(core_uri("ops"))
        dashboard = MemoryService.open(ops, Settings(), actor=Actor("dashboard"))
        await anyio.to_thread.run_sync(dashboard.save, "ops", "from the dashboard")
        await until(lambda: memory_uri("ops") in told)
        assert core_uri("ops") not in told  # an archival save leaves core as it was
        told.clear()
        upstream_append(ops.memory_file("ops"), "- [2026-12-01 10:00:00] from upstream")
        await until(lambda: memory_uri("ops") in told)
        told.clear()
        await anyio.to_thread.run_sync(dashboard.save, "ops", "a core fact", "core")
        await until(lambda: core_uri("ops") in told)
        told.clear()
        failed, _ = await call(client, "save_memory", {"content": "held, not in memory"})
        assert not failed
        await anyio.to_thread.run_sync(dashboard.save, "atlas", "another agent's")
        await anyio.sleep(0.5)  # (nothing to wait for: what must not come)
        assert told == []


async def test_a_listening_client_is_told_too(ops: Workspace) -> None:
    server = MemoryServer(place_of(ops), "ops")
    async with server.following(), Client(server, mode="auto", client_info=CLIENT) as client:
        assert client.protocol_version >= "2026"
        async with client.listen(resource_subscriptions=[memory_uri("ops")]) as listening:
            dashboard = MemoryService.open(ops, Settings(), actor=Actor("dashboard"))
            await anyio.to_thread.run_sync(dashboard.save, "ops", "from the dashboard")
            with anyio.fail_after(15):
                async for event in listening:
                    assert event.uri == memory_uri("ops")  # type: ignore[union-attr]
                    break


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_subscriber_hears_another_process_on_every_backend(
    request: pytest.FixtureRequest, ops: Workspace, backend: str
) -> None:
    """Another process (another host, on a shared database) saves: the subscriber hears it."""
    settings = backend_settings(request, backend)
    told: list[str] = []

    async def heard(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            told.append(message.params.uri)

    env = on_database(str(settings.database.url)) if backend == "postgres" else {}
    if backend == "sqlite":
        ops.config_path.write_text('[memory]\nbackend = "sqlite"\n')
    server = MemoryServer(Here(ops, settings), "ops")
    async with (
        server.following(),
        Client(server, mode="legacy", client_info=CLIENT, message_handler=heard) as client,
    ):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            await client.session.subscribe_resource(memory_uri("ops"))
        saved = await anyio.run_process(
            [
                oryxtui_executable(),
                "memory",
                "save",
                "--agent",
                "ops",
                "--root",
                str(ops.root),
                "from another process",
            ],
            env={**os.environ, **env},
        )
        assert saved.returncode == 0
        await until(lambda: memory_uri("ops") in told)
        block = (await client.read_resource(memory_uri("ops"))).contents[0]
        assert "from another process" in block.text  # type: ignore[union-attr]


async def test_nothing_found_is_said_in_a_sentence(ops: Workspace) -> None:
    async with connected(place_of(ops)) as client:
        failed, found = await call(client, "recall_memory", {"query": "zzzz-no-such"})
        assert not failed and found["count"] == 0 and found["entries"] == []
        assert found["note"] == NOTHING_FOUND
        failed, found = await call(client, "recall_memory", {"query": "note"})
        assert not failed and found["count"] and "note" not in found  # hits: no such sentence
