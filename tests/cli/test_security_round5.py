"""Security round 5 (issue 57) at the command line: a hold names the real agent, whatever
linked folder the agent was opened through."""

from __future__ import annotations

import json

from oryxtui.workspace import Workspace
from tests.support import agents_with_notes, cli


def test_a_hold_on_an_agent_holds_it_opened_through_a_link(workspace: Workspace) -> None:
    agents_with_notes(workspace, "ops-bot")
    (workspace.agents_dir / "ops-alias").symlink_to("ops-bot", target_is_directory=True)
    workspace.config_path.write_text('[memory.review]\nhold_agents = ["ops-bot"]\n')
    root = ("--root", str(workspace.root))
    memory = workspace.agents_dir / "ops-bot" / "MEMORY.md"
    before = memory.read_bytes()
    said = cli("chat", "--agent", "ops-alias", "remember that the vault code is 1234", *root)
    assert said.code == 0, said.stderr
    assert memory.read_bytes() == before  # nothing reached the memory: it waits
    listed = cli("memory", "review", "--agent", "ops-bot", "--json", *root)
    (held,) = json.loads(listed.stdout)["awaiting"]
    assert held["held"] and held["content"] == "the vault code is 1234"
