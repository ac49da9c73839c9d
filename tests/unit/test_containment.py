"""Reads stay inside the workspace: nothing a link points to outside `.oryxos/` reaches a prompt."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from oryxtui.memory.format import ARCHIVAL_HEADER, CORE_HEADER
from oryxtui.workspace import Workspace
from tests.api_server import as_served
from tests.dashboard_support import (
    agent_list,
    build_workspace,
    make_app,
    prompts,
    shown_memory,
    wait_for,
)
from tests.support import make_agent, run_oryxtui

SECRET = "root:x:0:0:TOP-SECRET"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "AGENT.md").write_text(f"---\nname: leak\n---\n{SECRET} identity\n")
    (folder / "MEMORY.md").write_text(f"{CORE_HEADER}\n- {SECRET} core\n{ARCHIVAL_HEADER}\n")
    (folder / "secret.txt").write_text(f"{SECRET}\n")
    return folder


def link_agent_md(workspace: Workspace, outside: Path) -> None:
    folder = workspace.agents_dir / "leak"
    folder.mkdir(parents=True)
    (folder / "AGENT.md").symlink_to(outside / "AGENT.md")


def link_agent_folder(workspace: Workspace, outside: Path) -> None:
    workspace.agents_dir.mkdir(parents=True, exist_ok=True)
    (workspace.agents_dir / "leak").symlink_to(outside, target_is_directory=True)


def link_memory_md(workspace: Workspace, outside: Path) -> None:
    folder = make_agent(workspace, "leak")
    (folder / "MEMORY.md").symlink_to(outside / "MEMORY.md")


LINKS = [link_agent_md, link_agent_folder, link_memory_md]


COMMANDS = [("prompt",), ("memory", "show"), ("chat", "hello"), ("memory", "recall", "x")]


@pytest.mark.parametrize(
    ("link", "command"),
    [
        (link, command)
        for link in LINKS
        for command in COMMANDS
        if not (link is link_agent_md and command[0] == "memory")  # they never read AGENT.md
    ],
)
def test_the_cli_refuses_with_one_sentence(
    workspace: Workspace, outside: Path, link, command: tuple
) -> None:
    link(workspace, outside)
    result = run_oryxtui(*command, "--root", str(workspace.root), "--agent", "leak")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "outside the workspace" in result.stderr and result.stderr.count("\n") == 1
    assert SECRET not in result.stdout + result.stderr


@pytest.mark.parametrize("link", LINKS)
def test_the_api_answers_409(workspace: Workspace, outside: Path, link) -> None:
    link(workspace, outside)
    with as_served(workspace) as client:
        for path in ("/api/v1/agents/leak/prompt", "/api/v1/agents/leak/memory"):
            if link is link_agent_md and path.endswith("/memory"):
                continue
            response = client.get(path)
            assert response.status_code == 409, response.text
            assert SECRET not in response.text
        listing = client.get("/api/v1/agents").text
        assert SECRET not in listing


@pytest.mark.parametrize("link", LINKS)
async def test_the_dashboard_shows_the_reason(workspace: Workspace, outside: Path, link) -> None:
    build_workspace(workspace)
    link(workspace, outside)
    app = make_app(workspace)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_for(pilot, lambda: agent_list(app).summaries.get("leak") is not None)
        await wait_for(pilot, lambda: agent_list(app).summaries["leak"].error is not None)
        assert "outside the workspace" in agent_list(app).summaries["leak"].error
        app.dashboard.select("leak")
        await wait_for(
            pilot,
            lambda: shown_memory(app) is not None and shown_memory(app).summary.name == "leak",
        )
        await wait_for(pilot, lambda: "leak" in prompts(app) or shown_memory(app).summary.error)
        banner = str(app.query_one("#agent-banner").render())
        assert "⚠" in banner and SECRET not in banner
        for prompt in prompts(app).values():
            assert all(SECRET not in block.text for block in prompt.blocks)


async def test_edit_refuses_a_symlinked_memory_file(
    workspace: Workspace, outside: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build_workspace(workspace)
    target = workspace.agents_dir / "beta" / "MEMORY.md"
    inside = workspace.root / "elsewhere.md"
    inside.write_bytes(target.read_bytes())
    target.unlink()
    target.symlink_to(inside)  # a link that stays inside: still never written through
    ran = tmp_path / "editor-ran"
    editor = tmp_path / "editor.sh"
    editor.write_text(f"#!/bin/sh\ntouch {ran}\n")
    editor.chmod(0o755)
    monkeypatch.setenv("VISUAL", str(editor))
    app = make_app(workspace)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_for(pilot, lambda: shown_memory(app) is not None)
        app.dashboard.select("beta")
        await wait_for(
            pilot, lambda: shown_memory(app).summary.name == "beta" and shown_memory(app).snapshot
        )
        await pilot.press("e")
        await wait_for(pilot, lambda: any("symbolic link" in n.message for n in app._notifications))
    assert not ran.exists()


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs")
def test_bootstrap_entries_that_are_not_regular_files_are_skipped(workspace: Workspace) -> None:
    os.mkfifo(workspace.root / "pipe.md")
    (workspace.root / "folder.md").mkdir()
    (workspace.root / "USER.md").write_text("the user is Ada\n")
    make_agent(
        workspace,
        "ops",
        'bootstrap: [pipe.md, folder.md, "nul\\0byte.md", USER.md, ../../etc/hostname]\n',
    )
    result = run_oryxtui("prompt", "--root", str(workspace.root), "--agent", "ops")  # 60 s cap
    assert result.returncode == 0, result.stderr
    assert "the user is Ada" in result.stdout
    warnings = result.stderr
    assert "pipe.md is not a regular file" in warnings
    assert "folder.md is not a regular file" in warnings
    assert "is not a file name" in warnings and "outside the workspace" in warnings
    assert "Traceback" not in warnings
