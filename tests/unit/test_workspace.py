"""Finding the workspace, listing agents, reading AGENT.md, and where memory may be written."""

from __future__ import annotations

from pathlib import Path

import pytest

from oryxtui.errors import AgentDefinitionError, WorkspaceNotFound
from oryxtui.workspace import Workspace, find_workspace, init_workspace, is_valid_agent_name
from tests.support import make_agent


@pytest.mark.parametrize("name", ["a", "ops-bot", "A_1", "__global_", "_global__"])
def test_valid_agent_names(name: str) -> None:
    assert is_valid_agent_name(name)


@pytest.mark.parametrize(
    "name", ["", "../x", "a.b", "名字", "/abs", "a b", "a/b", ".", None, 3, "__global__"]
)
def test_invalid_agent_names_fall_back_to_the_global_memory(
    name: object, workspace: Workspace
) -> None:
    assert not is_valid_agent_name(name)
    assert workspace.memory_file(name) == workspace.global_memory_file  # type: ignore[arg-type]


def test_root_discovery_order(tmp_path: Path) -> None:
    project = init_workspace(tmp_path / "p")
    other = init_workspace(tmp_path / "o")
    nested = tmp_path / "p" / "src" / "deep"
    nested.mkdir(parents=True)
    assert find_workspace(cwd=nested, environ={}).root == project.root
    assert find_workspace(cwd=nested, environ={"ORYXOS_ROOT": str(other.root)}).root == other.root
    assert find_workspace(tmp_path / "o", cwd=nested, environ={}).root == other.root
    assert find_workspace(project.root, environ={}).root == project.root


def test_a_root_named_otherwise_is_accepted_when_it_looks_like_a_workspace(tmp_path: Path) -> None:
    data = tmp_path / "oryx-data"
    (data / "agents").mkdir(parents=True)
    assert find_workspace(data, environ={}).root == data


def test_missing_workspace_says_how_to_create_one(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(WorkspaceNotFound, match="oryxtui init"):
        find_workspace(empty, environ={})
    with pytest.raises(WorkspaceNotFound, match="oryxtui demo"):
        find_workspace(cwd=empty, environ={})


def test_init_never_overwrites(tmp_path: Path) -> None:
    workspace = init_workspace(tmp_path)
    (workspace.root / "USER.md").write_text("mine")
    init_workspace(tmp_path)
    assert (workspace.root / "USER.md").read_text() == "mine"
    assert all((workspace.root / d).is_dir() for d in ("agents", "memory", "skills"))


def test_list_agents_needs_an_agent_file_and_a_valid_name(workspace: Workspace) -> None:
    make_agent(workspace, "zeta")
    make_agent(workspace, "Alpha")
    (workspace.agents_dir / "no-agent-file").mkdir()
    (workspace.agents_dir / "bad.name").mkdir()
    (workspace.agents_dir / "bad.name" / "AGENT.md").write_text("x")
    assert workspace.list_agents() == ["Alpha", "zeta"]


def test_agent_front_matter_and_body(workspace: Workspace) -> None:
    folder = make_agent(workspace, "ops")
    (folder / "AGENT.md").write_text(
        "---\nname: Ops\ndescription: d\nidentity:\n  prompt: You are Ops.\n"
        "provider:\n  name: openai\n  model: m\n  temperature: 0.2\n"
        "tools: [save_memory]\nbootstrap: [USER.md, SOUL.md]\n"
        "settings:\n  max_iterations: 4\n  max_history_turns: 6\n"
        "future_key: kept\n---\n\nBody text\n"
    )
    agent = workspace.read_agent("ops")
    assert (agent.name, agent.identity.prompt, agent.provider.model) == ("Ops", "You are Ops.", "m")
    assert agent.tools == ["save_memory"] and agent.bootstrap == ["USER.md", "SOUL.md"]
    assert (agent.settings.max_iterations, agent.settings.max_history_turns) == (4, 6)
    assert agent.body == "Body text"
    assert agent.model_extra == {"future_key": "kept"}


def test_missing_closing_fence_means_all_body(workspace: Workspace) -> None:
    folder = make_agent(workspace, "x")
    (folder / "AGENT.md").write_text("---\nname: y\nno closing fence\n")
    agent = workspace.read_agent("x")
    assert agent.name == "x" and "no closing fence" in agent.body


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("---\nname: [unclosed\n---\n", "not valid YAML"),
        ("---\n- a list\n---\n", "mapping"),
        ("---\nsettings:\n  max_iterations: many\n---\n", "settings.max_iterations"),
    ],
)
def test_malformed_agent_files_give_a_clear_error(
    workspace: Workspace, content: str, message: str
) -> None:
    folder = make_agent(workspace, "bad")
    (folder / "AGENT.md").write_text(content)
    with pytest.raises(AgentDefinitionError, match=message):
        workspace.read_agent("bad")


def test_undecodable_agent_file(workspace: Workspace) -> None:
    folder = make_agent(workspace, "bad")
    (folder / "AGENT.md").write_bytes(b"---\nname: \xff\n---\n")
    with pytest.raises(AgentDefinitionError, match="UTF-8"):
        workspace.read_agent("bad")
