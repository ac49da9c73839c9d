"""What an MCP client writes, seen in the dashboard as it happens: a trusted client's save
arrives live in the pane marked `+`, its history names `mcp:<client>`, and it waits in the
review inbox; a held save (the default) waits in the inbox only, with the client's name."""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp import Client
from textual.widgets import OptionList, Static

from oryxtui.config import Settings
from oryxtui.mcp.server import MemoryServer
from oryxtui.places import Here
from oryxtui.tui.screens.history import HistoryScreen
from oryxtui.tui.screens.review import ReviewScreen
from oryxtui.workspace import Workspace
from tests.dashboard_support import (
    agent_list,
    archival_pane,
    build_workspace,
    make_app,
    shown_text,
    wait_for,
)
from tests.tui.test_dashboard import loaded

ZED = types.Implementation(name="Zed Editor", version="0.190")


async def mcp_save(workspace: Workspace, settings: Settings, content: str) -> None:
    """A client's save through the MCP server (its own place: another writer than the app)."""
    server = MemoryServer(Here(workspace, settings), "alpha")
    async with Client(server, mode="legacy", client_info=ZED) as client:
        result = await client.call_tool("save_memory", {"content": content})
        assert not result.is_error, result.content


async def open_inbox(pilot: Any, app: Any) -> tuple[ReviewScreen, Any]:
    """`I`, and the one entry that awaits review in it."""
    await pilot.press("I")
    await wait_for(pilot, lambda: isinstance(app.screen, ReviewScreen))
    inbox = app.screen
    assert isinstance(inbox, ReviewScreen)
    await wait_for(pilot, lambda: len(inbox.items) == 1)
    return inbox, inbox.items[0]


async def test_a_trusted_clients_save_arrives_live_and_awaits_review(workspace: Workspace) -> None:
    build_workspace(workspace)
    settings = Settings.model_validate({"mcp": {"hold": False}})
    app = make_app(workspace, settings)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(pilot, lambda: loaded(app, "alpha"))
        archival = archival_pane(app)
        rows = archival.view.row_count
        await mcp_save(workspace, settings, "the staging db moved to eu-west-2")
        await wait_for(pilot, lambda: archival.view.row_count == rows + 1)
        await wait_for(
            pilot,
            lambda: any(
                line.lstrip().startswith("+") and "eu-west-2" in line
                for line in shown_text(app, "#archival-pane EntryView")
            ),
        )
        await pilot.press("h")
        await wait_for(pilot, lambda: isinstance(app.screen, HistoryScreen))
        history = app.screen
        assert isinstance(history, HistoryScreen)
        await wait_for(pilot, lambda: any(r.actor == "mcp:Zed-Editor" for r in history.shown))
        diff = str(history.query_one("#history-diff", Static).render())
        assert "saved by mcp:Zed-Editor" in diff and "eu-west-2" in diff
        await pilot.press("f")  # who: step through to the MCP clients
        while history.who != "mcp":
            await pilot.press("f")
        await wait_for(pilot, lambda: [r.actor for r in history.shown] == ["mcp:Zed-Editor"])
        await pilot.press("escape")
        inbox, item = await open_inbox(pilot, app)
        assert item.agent == "alpha" and item.awaiting.record.actor == "mcp:Zed-Editor"
        listed = row_text(inbox.query_one(OptionList).get_option_at_index(1).prompt)
        assert "eu-west-2" in listed and "saved by mcp:Zed-Editor" in listed


def row_text(prompt: object) -> str:
    """A row of the inbox as a person reads it."""
    from rich.console import Console

    console = Console(width=200, record=True, color_system=None)
    console.print(prompt)
    return console.export_text()


async def test_a_held_save_waits_in_the_inbox_with_the_clients_name(workspace: Workspace) -> None:
    build_workspace(workspace)
    settings = Settings()  # [mcp] hold = true: the default
    app = make_app(workspace, settings)
    memory_file = workspace.memory_file("alpha")
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(pilot, lambda: loaded(app, "alpha"))
        before = memory_file.read_bytes()
        await mcp_save(workspace, settings, "rotate the on-call pager on Mondays")
        agents = agent_list(app)
        await wait_for(pilot, lambda: agents.summaries["alpha"].held_count == 1)
        assert memory_file.read_bytes() == before
        inbox, item = await open_inbox(pilot, app)
        assert item.awaiting.held and item.awaiting.record.actor == "mcp:Zed-Editor"
        listed = row_text(inbox.query_one(OptionList).get_option_at_index(1).prompt)
        assert "held for review by mcp:Zed-Editor" in listed
        await pilot.press("a")  # approve: now it is in the memory, as the client's save
        await wait_for(pilot, lambda: len(inbox.items) == 0)
    assert "rotate the on-call pager on Mondays" in memory_file.read_text()
