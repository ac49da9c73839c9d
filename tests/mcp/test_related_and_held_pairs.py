"""Facts that change, as agents use them (issue 56, items 1 and 3): every save answer names the
entries most likely about the same thing — held ones included — for the calling model to judge;
under the default MCP hold a fact and its update wait as a pair, are merged when saved twice,
and one replace (a person's) lands the newest only, the old one recorded as replaced."""

from __future__ import annotations

from mcp import Client

from oryxtui.config import Settings
from oryxtui.mcp.server import MemoryServer
from oryxtui.places import Here
from oryxtui.workspace import Workspace
from tests.mcp.test_tools import CLIENT, call
from tests.support import agents_with_notes, cli

OLD = "The staging database is db-stg-3 in eu-west-1."
NEW = "The staging database is db-stg-7 in eu-west-1."
OTHERS = [
    "Marco is on call for ledger this week.",
    "Chloe prefers tea to coffee in the afternoon.",
    "Billing deploys happen on Tuesdays after the standup.",
]


def _place(workspace: Workspace) -> Here:
    return Here(workspace, Settings.model_validate({}))  # [mcp] hold: on by default


async def test_a_save_names_what_is_related_and_the_mcp_tool_says_so(
    workspace: Workspace,
) -> None:
    workspace = agents_with_notes(workspace, "ops")
    place = Here(workspace, Settings.model_validate({"mcp": {"hold": False}}))
    for text in [*OTHERS, OLD]:
        place.memory.save("ops", text)
    async with Client(MemoryServer(place, "ops"), mode="legacy", client_info=CLIENT) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert "related" in (tools["save_memory"].description or "")
        failed, answer = await call(client, "save_memory", {"content": NEW})
    assert not failed and answer["saved"] is True
    related = answer["related"]
    assert 1 <= len(related) <= 5
    assert related[0]["content"] == OLD and related[0]["held"] is False
    assert {"id", "content", "time", "scope", "held"} <= set(related[0])
    assert NEW not in [item["content"] for item in related]  # never the save itself


async def test_a_held_fact_and_its_update_wait_as_a_pair_and_one_replace_lands_the_newest(
    workspace: Workspace,
) -> None:
    workspace = agents_with_notes(workspace, "ops")
    place = _place(workspace)
    memory = place.memory
    for text in OTHERS:
        memory.save("ops", text)
    async with Client(MemoryServer(place, "ops"), mode="legacy", client_info=CLIENT) as client:
        failed, first = await call(client, "save_memory", {"content": OLD})
        assert not failed and first["held"] is True
        failed, again = await call(client, "save_memory", {"content": OLD})  # said twice
        assert not failed and again["held"] is True and again["id"] == first["id"]
        failed, second = await call(client, "save_memory", {"content": NEW})
    assert not failed and second["held"] is True
    # The update is checked against the held fact: both the sure check and related name it.
    assert [item["id"] for item in second["may_update"]] == [first["id"]]
    assert second["may_update"][0]["held"] is True and "hint" not in second  # a pair: nothing
    # to replace yet, the person sees them together
    assert [item["id"] for item in second["related"] if item["held"]] == [first["id"]]
    waiting = [item for item in memory.awaiting_review("ops") if item.held]
    assert sorted(item.entry.content for item in waiting) == sorted([OLD, NEW])  # merged
    # The inbox shows the pair (the CLI's review lists the replace command for it).
    [(old, new, _)] = memory.suggestions("ops")
    assert (old.content, new.content) == (OLD, NEW)
    listed = cli("memory", "review", "--agent", "ops", "--root", str(workspace.root))
    assert listed.code == 0 and f"memory replace --agent ops {old.id} --by {new.id}" in (
        listed.stdout + listed.stderr
    )

    # A person replaces: what of the pair waits is approved, the old leaves as replaced.
    replaced = cli(
        "memory", "replace", "--agent", "ops", old.id, "--by", new.id, "--root", str(workspace.root)
    )
    assert replaced.code == 0, replaced.stderr
    fresh = _place(workspace).memory
    block = fresh.build_context("ops")
    assert NEW in block and OLD not in block
    assert fresh.awaiting_review("ops") == [] or all(
        not item.held for item in fresh.awaiting_review("ops")
    )
    [version] = fresh.replaced_versions("ops")
    assert version.entry.content == OLD and version.successor.content == NEW


async def test_approving_a_held_update_checks_it_again_against_the_memory_now(
    workspace: Workspace,
) -> None:
    workspace = agents_with_notes(workspace, "ops")
    place = _place(workspace)
    async with Client(MemoryServer(place, "ops"), mode="legacy", client_info=CLIENT) as client:
        failed, held = await call(client, "save_memory", {"content": NEW})
    assert not failed and held["held"] is True and held["may_update"] == []
    # Meanwhile the fact it updates lands, written by another program at its own, older time.
    memory_file = workspace.memory_file("ops")
    with memory_file.open("a", encoding="utf-8") as opened:
        opened.write(f"- [2026-01-05 09:00] {OLD}\n")
    memory = _place(workspace).memory
    assert memory.suggestions("ops") == []
    memory.approve("ops", [held["id"]])
    [(old, new, _)] = memory.suggestions("ops")
    assert (old.content, new.content) == (OLD, NEW)
