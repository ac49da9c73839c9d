"""What a new user hit in the first hour (issue 23), through the CLI and the REST API."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from oryxtui.workspace import Workspace
from tests.support import cli


@pytest.fixture
def demo(tmp_path: Path) -> Workspace:
    made = cli("demo", str(tmp_path / "demo"), "--no-open")
    assert made.code == 0, made.stderr
    return Workspace(tmp_path / "demo" / ".oryxos")


def test_the_offline_model_answers_with_the_best_hits(demo: Workspace) -> None:
    root = ("--root", str(demo.root), "--agent", "ops-bot")
    said = cli("chat", *root, "remember that the deploy freeze starts Friday")
    assert said.code == 0 and "Noted" in said.stdout
    asked = cli("chat", *root, "what do you remember about deploy", "--json")
    reply = json.loads(asked.stdout)["reply"]
    first = reply.split("\n")[1]  # after "I remember N thing(s) about deploy:"
    assert "deploy freeze starts Friday" in first  # what recall ranks first is said first


AGENT_COMMANDS = [
    ("memory", "show"),
    ("memory", "recall", "deploy"),
    ("memory", "log"),
    ("memory", "save", "x"),
    ("memory", "consolidate"),
    ("memory", "doctor"),
    ("memory", "export"),
    ("memory", "edit", "0123456789ab", "x"),
    ("prompt",),
    ("chat", "hello"),
    ("sessions", "list"),
    ("sessions", "search", "deploy"),
]


@pytest.mark.parametrize("command", AGENT_COMMANDS)
@pytest.mark.parametrize("name", ["atlsa", "ops bot", "ops.bot", "x" * 300])
def test_every_command_refuses_an_unknown_or_invalid_agent(
    demo: Workspace, command: tuple[str, ...], name: str
) -> None:
    before = state(demo)
    result = cli(*command[:2], "--root", str(demo.root), "--agent", name, *command[2:])
    assert result.code == 2, (command, result.stderr)
    assert result.stderr.startswith("oryxtui: error:") and result.stderr.count("\n") == 1
    if name == "atlsa":
        assert "atlas" in result.stderr  # the closest
    assert state(demo) == before  # nothing made: no file, no agent, no session


def state(workspace: Workspace) -> tuple[object, ...]:
    """The workspace's files (but SQLite's own beside oryxos.db) and their bytes, and its
    sessions."""
    files = {
        path.relative_to(workspace.root): path.read_bytes()
        for path in workspace.root.rglob("*")
        if path.is_file() and not path.name.startswith("oryxos.db")
    }
    with sqlite3.connect(workspace.db_path) as connection:
        sessions = connection.execute("SELECT session_id, messages_json FROM sessions").fetchall()
    return files, sorted(sessions)


def test_agents_are_listed_and_made(demo: Workspace) -> None:
    root = ("--root", str(demo.root))
    listed = json.loads(cli("agents", "list", *root, "--json").stdout)["agents"]
    assert [a["name"] for a in listed] == ["atlas", "ops-bot", "scribe"]
    assert listed[1]["core"] == 3 and listed[1]["archival"] == 70 and listed[1]["has_agent_md"]
    assert "On-call helper" in listed[1]["description"]
    made = cli("agents", "new", *root, "notes-bot", "--description", "Keeps meeting notes")
    assert made.code == 0, made.stderr
    definition = demo.read_agent("notes-bot")
    assert definition is not None and definition.description == "Keeps meeting notes"
    assert definition.body == ""  # nothing in the prompt until someone writes it
    text = cli("agents", "list", *root).stdout
    assert "notes-bot" in text and "Keeps meeting notes" in text
    for name in ("notes-bot", "ops bot", "__global__", "x" * 129):
        refused = cli("agents", "new", *root, name)
        assert refused.code == 2 and refused.stderr.count("\n") == 1, name
    assert sorted(demo.list_agents()) == ["atlas", "notes-bot", "ops-bot", "scribe"]
    saved = cli("memory", "save", *root, "--agent", "notes-bot", "first note")
    assert saved.code == 0  # an agent from the start, no --create needed


def test_bring_back_a_change_by_its_number(demo: Workspace) -> None:
    from tests.api_server import RunningApi

    root = ("--root", str(demo.root), "--agent", "scribe")
    shown = json.loads(cli("memory", "show", *root, "--json").stdout)
    entry = shown["archival"][0]
    assert cli("memory", "delete", *root, entry["id"]).code == 0
    change = json.loads(cli("memory", "log", *root, "--json").stdout.splitlines()[0])
    assert change["op"] == "delete"  # the newest change (the demo's history came before it)
    brought = cli("memory", "bring-back", *root, str(change["n"]), "--json")
    assert brought.code == 0, brought.stderr
    (back,) = json.loads(brought.stdout)["brought_back"]
    assert back["content"] == entry["content"] and back["time"] == entry["time"]
    again = cli("memory", "bring-back", *root, str(change["n"]))
    assert again.code == 0 and "Nothing to bring back" in again.stdout
    missing = cli("memory", "bring-back", *root, "999")
    assert missing.code == 2 and "memory log" in missing.stderr
    assert cli("memory", "delete", *root, back["id"]).code == 0
    latest = json.loads(cli("memory", "log", *root, "--json").stdout.splitlines()[0])
    with RunningApi(demo) as client:
        over_rest = client.post(
            f"/api/v1/agents/scribe/memory/history/{latest['n']}/bring-back", json={}
        )
        assert over_rest.status_code == 200, over_rest.text
        assert [e["content"] for e in over_rest.json()["data"]] == [entry["content"]]
        unknown = client.post("/api/v1/agents/scribe/memory/history/999/bring-back", json={})
        assert unknown.status_code == 400


def test_the_demo_has_past_conversations(demo: Workspace) -> None:
    listed = json.loads(cli("sessions", "list", "--root", str(demo.root), "--all", "--json").stdout)
    agents = {s["agent"] for s in listed["sessions"]}
    assert {"ops-bot", "atlas", "scribe"} <= agents and len(listed["sessions"]) >= 4
    asked = cli(
        "chat",
        "--root",
        str(demo.root),
        "--agent",
        "ops-bot",
        "what did we say about the deploy window",
        "--json",
    )
    reply = json.loads(asked.stdout)["reply"]
    assert "When is the next deploy window?" in reply  # search_conversations found the turn


def test_the_api_docs_work_without_the_internet(demo: Workspace) -> None:
    from tests.api_server import RunningApi

    with RunningApi(demo) as client:
        page = client.get("/docs")
        assert page.status_code == 200
        assert "/docs/assets/swagger-ui-bundle.js" in page.text
        assert "https://" not in page.text and "http://" not in page.text
        script = client.get("/docs/assets/swagger-ui-bundle.js")
        assert script.status_code == 200 and len(script.content) > 100_000
        assert client.get("/docs/assets/swagger-ui.css").status_code == 200


def test_beside_the_demo_folder_the_error_names_it(tmp_path: Path) -> None:
    """Run from the folder the quick start ran in (no workspace here, but ./oryx-demo)."""
    from tests.support import run_oryxtui

    assert run_oryxtui("demo", str(tmp_path / "oryx-demo"), "--no-open").returncode == 0
    lost = run_oryxtui("memory", "show", cwd=tmp_path)
    assert lost.returncode != 0 and "found ./oryx-demo — use --root oryx-demo" in lost.stderr
    assert lost.stderr.count("\n") == 1
    elsewhere = tmp_path / "empty"
    elsewhere.mkdir()
    plain = run_oryxtui("memory", "show", cwd=elsewhere)
    assert "oryx-demo" not in plain.stderr and "oryxtui init" in plain.stderr
