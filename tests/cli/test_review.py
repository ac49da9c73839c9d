"""Review: what agents and outside writers wrote awaits approval; strict mode holds an agent's
saves outside the memory until approved; the state lives in the history (every process, every
restart), on the markdown and sqlite backends alike."""

from __future__ import annotations

import contextlib
import json

import pytest

from oryxtui.config import Settings
from oryxtui.database import connect
from oryxtui.memory import MemoryService
from oryxtui.memory.format import ARCHIVAL_HEADER, CORE_HEADER
from oryxtui.workspace import Workspace
from tests.support import cli, make_agent

BACKENDS = ["markdown", "sqlite"]


def configure(workspace: Workspace, backend: str, hold: bool = False) -> None:
    review = '\n[memory.review]\nhold_agents = ["ops"]\n' if hold else ""
    workspace.config_path.write_text(f'[memory]\nbackend = "{backend}"\n{review}')


def awaiting(workspace: Workspace, agent: str = "ops") -> list[dict]:
    listed = cli("memory", "review", "--agent", agent, "--json", "--root", str(workspace.root))
    assert listed.code == 0, listed.stderr
    return json.loads(listed.stdout)["awaiting"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_agent_writes_await_review_until_approved_or_rejected(
    workspace: Workspace, backend: str
) -> None:
    configure(workspace, backend)
    make_agent(workspace, "ops")
    root = ("--root", str(workspace.root))
    cli("chat", "--agent", "ops", "remember that the pager code is 4711", *root)
    cli("chat", "--agent", "ops", "remember that deploys are on Tuesday", *root)
    cli("memory", "save", "a person's own note", "--agent", "ops", *root)  # not for review
    items = awaiting(workspace)
    assert [i["content"] for i in items] == ["deploys are on Tuesday", "the pager code is 4711"]
    assert items[0]["turn"] == 1 and items[0]["turn_text"]["user"].startswith("remember that")
    assert not any(i["held"] for i in items)

    rejected = cli("memory", "review", "reject", items[1]["id"], "--agent", "ops", *root)
    assert rejected.code == 0 and "Rejected 1 entry" in rejected.stdout
    approved = cli("memory", "review", "approve", "--agent", "ops", *root)
    assert "Approved 1 entry" in approved.stdout
    assert awaiting(workspace) == []
    shown = cli("memory", "show", "--agent", "ops", *root).stdout
    assert "pager code" not in shown and "deploys are on Tuesday" in shown
    log = cli("memory", "log", "--agent", "ops", *root).stdout
    assert "rejected by cli" in log and "approved by cli" in log
    # Acting on what is not waiting (any more) changes nothing, in one sentence.
    again = cli("memory", "review", "reject", items[1]["id"], "--agent", "ops", *root)
    assert again.code == 1 and "list them again" in again.stderr


@pytest.mark.parametrize("backend", BACKENDS)
def test_strict_mode_holds_saves_outside_the_memory_until_approved(
    workspace: Workspace, backend: str
) -> None:
    configure(workspace, backend, hold=True)
    make_agent(workspace, "ops")
    make_agent(workspace, "atlas")
    root = ("--root", str(workspace.root))
    turn = cli("chat", "--agent", "ops", "remember that the vault code is 1234", "--json", *root)
    events = json.loads(turn.stdout)["events"]
    result = json.loads(next(e["text"] for e in events if e["kind"] == "tool_result"))
    assert result["held"] is True and result["saved"] is False and "review" in result["note"]
    assert "vault" not in cli("memory", "show", "--agent", "ops", *root).stdout
    prompt = cli("prompt", "--agent", "ops", "--json", *root)
    blocks = {b["name"]: b["text"] for b in json.loads(prompt.stdout)["blocks"]}
    assert "vault" not in blocks["memory"] and "1 saved entry awaits review" in prompt.stderr
    recalled = cli("memory", "recall", "vault", "--agent", "ops", *root)
    assert "vault" not in recalled.stdout
    (held,) = awaiting(workspace)
    assert held["held"] is True and held["op"] == "hold" and held["turn"] == 0
    # Another agent is not held.
    cli("chat", "--agent", "atlas", "remember that papers are due Friday", *root)
    assert "due Friday" in cli("memory", "show", "--agent", "atlas", *root).stdout
    # A new process (a restart) sees the same; approving writes it, as the agent's save.
    service = MemoryService.open(
        workspace, Settings.model_validate({"memory": {"backend": backend}})
    )
    (item,) = service.held("ops")
    assert item.entry.content == "the vault code is 1234"
    cli("memory", "review", "approve", held["id"], "--agent", "ops", *root)
    assert "vault code is 1234" in cli("memory", "show", "--agent", "ops", *root).stdout
    origins = json.loads(cli("memory", "show", "--agent", "ops", "--json", *root).stdout)
    origin = origins["archival"][0]["origin"]
    assert origin["by"] == "agent" and origin["turn"] == 0
    assert awaiting(workspace) == [] and service.held("ops") == []


def test_a_held_save_rejected_is_never_written(workspace: Workspace) -> None:
    configure(workspace, "markdown", hold=True)
    make_agent(workspace, "ops")
    root = ("--root", str(workspace.root))
    cli("chat", "--agent", "ops", "remember that nothing", *root)
    (held,) = awaiting(workspace)
    before = (
        workspace.memory_file("ops").read_bytes() if workspace.memory_file("ops").exists() else b""
    )
    assert cli("memory", "review", "reject", held["id"], "--agent", "ops", *root).code == 0
    assert awaiting(workspace) == []
    after = (
        workspace.memory_file("ops").read_bytes() if workspace.memory_file("ops").exists() else b""
    )
    assert after == before
    assert "rejected before it was written" in cli("memory", "log", "--agent", "ops", *root).stdout


def test_an_outside_edit_awaits_review_and_a_hand_written_file_does_not(
    workspace: Workspace,
) -> None:
    memory = make_agent(workspace, "ops") / "MEMORY.md"
    memory.write_text(f"{CORE_HEADER}\n{ARCHIVAL_HEADER}\n- [2026-07-21 09:00:00] old\n")
    assert awaiting(workspace) == []  # from before the history: unknown, not for review
    with memory.open("a") as handle:
        handle.write("- [2026-07-21 10:00:00] appended by upstream\n")
    (item,) = awaiting(workspace)
    assert item["by"] == "outside" and item["content"] == "appended by upstream"
    assert "via" not in item  # no save_memory call holds it
    with contextlib.closing(connect(workspace.db_path)) as db:
        db.execute(
            "INSERT INTO tool_invocations (session_id, tool_name, input_json, success, "
            "created_at) VALUES ('web:mei:ops', 'save_memory', ?, 1, '2026-07-21 10:00:00')",
            (json.dumps({"content": "appended by upstream"}),),
        )
    (item,) = awaiting(workspace)
    assert item["via"] == "upstream" and item["session"] == "web:mei:ops"


def test_a_forged_review_record_cannot_hide_or_invent_entries(workspace: Workspace) -> None:
    configure(workspace, "markdown", hold=True)
    make_agent(workspace, "ops")
    root = ("--root", str(workspace.root))
    cli("chat", "--agent", "ops", "remember that real", *root)
    history = workspace.memory_file("ops").with_name("MEMORY.md.history.jsonl")
    history = next(workspace.memory_file("ops").parent.glob("*.history*"), history)
    with history.open("a") as handle:
        handle.write('{"n": "x", "op": "review", "after": [{"scope": "archival"}]}\n')
        handle.write("not json\n")
    (held,) = awaiting(workspace)
    assert held["content"] == "real"


def test_review_origins_and_past_prompts_on_the_shared_database(
    workspace: Workspace, database_url: str
) -> None:
    from tests.backends import on_database
    from tests.support import run_oryxtui

    env = on_database(database_url)
    workspace.config_path.write_text('[memory.review]\nhold_agents = ["ops"]\n')
    make_agent(workspace, "ops")
    root = ("--root", str(workspace.root))

    def run(*args: str) -> str:
        done = run_oryxtui(*args, *root, env=env)
        assert done.returncode == 0, done.stderr
        return done.stdout

    run("chat", "--agent", "ops", "remember that the vault code is 1234")
    (held,) = json.loads(run("memory", "review", "--agent", "ops", "--json"))["awaiting"]
    assert held["held"] and held["turn"] == 0
    assert "vault" not in run("memory", "show", "--agent", "ops")
    run("memory", "review", "approve", "--agent", "ops")
    shown = json.loads(run("memory", "show", "--agent", "ops", "--json"))
    assert shown["archival"][0]["origin"]["turn"] == 0
    session = json.loads(run("sessions", "list", "--agent", "ops", "--json"))["sessions"][0]
    view = json.loads(
        run("sessions", "show", session["session"], "--turn", "0", "--prompt", "--json")
    )
    assert view["calls"][0]["messages"][-1] == {
        "role": "user",
        "content": "remember that the vault code is 1234",
    }


def test_an_approved_held_save_lands_where_its_time_puts_it(workspace: Workspace) -> None:
    """Issue 58: a held save approved later goes among the entries at its own time, not at
    the end of the section, every other byte kept."""
    from oryxtui.config import load_settings
    from oryxtui.memory.history import Actor, current_actor
    from tests.support import Ticking

    configure(workspace, "markdown", hold=True)
    make_agent(workspace, "ops")
    memory = workspace.memory_file("ops")
    memory.write_text(f"# notes kept by hand\n{CORE_HEADER}\n{ARCHIVAL_HEADER}\n")
    clock = Ticking()
    service = MemoryService.open(workspace, load_settings(workspace.config_path), clock=clock)
    acting = current_actor.set(Actor("agent"))
    try:
        held = service.save("ops", "the agent's note, written first")
    finally:
        current_actor.reset(acting)
    later = [service.save("ops", f"a person's note {n}") for n in range(2)]
    service.approve("ops")
    lines = memory.read_text().splitlines()
    assert lines[0] == "# notes kept by hand"
    archival = lines[lines.index(ARCHIVAL_HEADER) + 1 :]
    assert archival == [held.line, *(entry.line for entry in later)]
