"""Episodic memory (issue 15, part 1): every finished turn is an episode, searchable at once by
`search_conversations` (through the real loop, with the scripted OpenAI-compatible server and
with the offline model), per agent, from a shared oryxos.db holding upstream's sessions too; and
`oryxtui sessions list | show | search`. Never written into MEMORY.md."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from oryxtui.agent.episodes import EpisodeStore
from oryxtui.agent.loop import AgentLoop
from oryxtui.agent.sessions import SessionStore
from oryxtui.config import Settings
from oryxtui.memory import MemoryService
from oryxtui.workspace import Workspace
from tests.llm_server import ScriptedLLM
from tests.support import fixed_clock, make_agent, run_oryxtui


def runner(workspace: Workspace, llm_url: str | None = None) -> AgentLoop:
    settings = Settings.model_validate(
        {"llm": {"base_url": llm_url, "model": "m"}} if llm_url else {}
    )
    memory = MemoryService.open(workspace, settings, clock=fixed_clock)
    return AgentLoop(
        workspace, settings, memory, SessionStore(workspace.db_path, clock=fixed_clock)
    )


@pytest.fixture
def agents(workspace: Workspace) -> Workspace:
    make_agent(workspace, "ops")
    make_agent(workspace, "atlas")
    return workspace


def test_the_tool_finds_an_earlier_turn_through_the_real_loop(agents: Workspace) -> None:
    script = [
        {"text": "Noted: the pager code is 4711."},
        {"tool_calls": [("search_conversations", {"query": "pager code"})]},
        {"text": "You told me the pager code is 4711."},
    ]
    with ScriptedLLM(script) as llm:
        agent = runner(agents, llm.base_url)
        list(agent.run("ops", "the pager code is 4711", "api", "mei"))
        events = list(agent.run("ops", "what was the pager code?", "tui", "mei"))
    result = next(e for e in events if e.kind == "tool_result")
    found = json.loads(result.text)
    assert found["count"] == 1
    turn = found["turns"][0]
    assert turn["user"] == "the pager code is 4711" and turn["session"] == "api:mei:ops"
    assert turn["reply"] == "Noted: the pager code is 4711." and turn["time"]
    tool = next(
        t for t in llm.requests[1]["tools"] if t["function"]["name"] == "search_conversations"
    )
    assert "earlier conversations" in tool["function"]["description"]
    with sqlite3.connect(agents.db_path) as db:  # audited like the memory tools
        rows = db.execute("SELECT tool_name, success FROM tool_invocations").fetchall()
    assert ("search_conversations", 1) in rows
    assert "4711" not in (
        agents.memory_file("ops").read_text() if agents.memory_file("ops").exists() else ""
    )


def test_the_offline_model_searches_conversations_too(agents: Workspace) -> None:
    agent = runner(agents)
    list(agent.run("ops", "the deploy window is Tuesday", "cli", "mei"))
    events = list(agent.run("ops", "what did we say about the deploy window?", "cli", "mei"))
    assert [e.tool for e in events if e.kind == "tool_call"] == ["search_conversations"]
    assert "the deploy window is Tuesday" in events[-1].text


def test_episodes_are_per_agent_and_filtered_by_time(agents: Workspace) -> None:
    agent = runner(agents)
    list(agent.run("ops", "remember that ops deploys on Tuesday", "cli", "mei"))
    list(agent.run("atlas", "remember that atlas reads on Tuesday", "cli", "mei"))
    store = EpisodeStore(agents.db_path)
    assert [e.agent for e in store.search("ops", "tuesday")] == ["ops"]
    assert [e.agent for e in store.search("atlas", "tuesday")] == ["atlas"]
    assert store.search("ops", "tuesday", since="2026-07-22") != []
    assert store.search("ops", "tuesday", until="2026-07-21") == []
    assert store.search("ops", "tuesday", since="2026-07-22T09:31") == []


def test_upstream_sessions_in_a_shared_database_are_episodes(agents: Workspace) -> None:
    EpisodeStore(agents.db_path).sync(every_agent=True)  # the tables exist
    messages = [
        {
            "role": "user",
            "content": "我们的网关值班表在哪里",
            "toolName": None,
            "toolCallId": None,
            "toolCalls": [],
        },
        {
            "role": "assistant",
            "content": "",
            "toolName": None,
            "toolCallId": None,
            "toolCalls": [
                {"id": "c1", "name": "recall_memory", "argumentsJson": '{"keyword":"值班"}'}
            ],
        },
        {
            "role": "tool",
            "content": "{}",
            "toolName": "recall_memory",
            "toolCallId": "c1",
            "toolCalls": [],
        },
        {
            "role": "assistant",
            "content": "值班表在 wiki 的网关页面。",
            "toolName": None,
            "toolCallId": None,
            "toolCalls": [],
        },
        {
            "role": "user",
            "content": "and the unfinished one",
            "toolName": None,
            "toolCallId": None,
            "toolCalls": [],
        },
    ]
    with sqlite3.connect(agents.db_path) as db:  # as upstream OryxOS writes it
        db.execute(
            "INSERT INTO sessions (session_id, profile_name, channel, user_id, messages_json,"
            " status, created_at, last_active_at) VALUES (?, ?, ?, ?, ?, 'ACTIVE', ?, ?)",
            (
                "web:u1:ops",
                "ops",
                "web",
                "u1",
                json.dumps(messages, ensure_ascii=False),
                1784700000000,
                "2026-07-20 08:00:00",
            ),
        )
    store = EpisodeStore(agents.db_path)
    found = store.search("ops", "网关值班")  # searches what is indexed; sync picks sessions up
    assert found == [] and store.sync("ops") == 1
    (episode,) = store.search("ops", "网关值班")
    assert episode.reply == "值班表在 wiki 的网关页面。" and episode.tools == ("recall_memory",)
    assert episode.time == "2026-07-20 08:00:00" and episode.session_id == "web:u1:ops"
    assert store.sync("ops") == 0  # once


def test_sessions_from_the_cli(tmp_path: Path) -> None:
    assert run_oryxtui("demo", str(tmp_path / "d"), "--no-open").returncode == 0
    root = str(tmp_path / "d")
    run_oryxtui("chat", "--root", root, "--agent", "scribe", "remember that the release is Friday")
    listed = json.loads(run_oryxtui("sessions", "list", "--root", root, "--all", "--json").stdout)
    # The demo's own past conversations, and this one.
    (session,) = [
        s
        for s in listed["sessions"]
        if s["session"].endswith(":scribe") and s["session"].startswith("cli:")
    ]
    assert session["agent"] == "scribe" and session["turns"] == 1
    shown = run_oryxtui("sessions", "show", "--root", root, session["session"])
    assert "user: remember that the release is Friday" in shown.stdout
    found = run_oryxtui(
        "sessions", "search", "--root", root, "--agent", "scribe", "release", "--json"
    )
    assert session["session"] in {turn["session"] for turn in json.loads(found.stdout)["turns"]}
    none = run_oryxtui("sessions", "search", "--root", root, "--agent", "atlas", "release")
    assert none.returncode == 0 and "no conversation" in none.stderr
    bad = run_oryxtui("sessions", "search", "--root", root, "release", "--since", "soon")
    assert bad.returncode == 2 and "--since: 'soon' is not a time" in bad.stderr
    missing = run_oryxtui("sessions", "show", "--root", root, "nope:nope:nope")
    assert missing.returncode == 2 and "sessions list" in missing.stderr


async def test_the_sessions_view_lists_searches_and_jumps_to_a_turn(agents: Workspace) -> None:
    from textual.widgets import Input, OptionList, Static

    from oryxtui.tui.screens.sessions import SessionsScreen
    from tests.dashboard_support import make_app, wait_for

    agent = runner(agents)
    list(agent.run("ops", "remember that the deploy window is Tuesday", "cli", "mei"))
    list(agent.run("ops", "hello there", "api", "mei"))
    list(agent.run("ops", "what do you remember about deploy", "api", "mei"))
    app = make_app(agents)
    async with app.run_test(size=(150, 40)) as pilot:
        await wait_for(pilot, lambda: app.dashboard.shown == "atlas")
        await pilot.press("down")  # ops
        await wait_for(pilot, lambda: app.dashboard.shown == "ops")
        await pilot.press("S")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionsScreen))
        screen = app.screen
        assert isinstance(screen, SessionsScreen)
        await wait_for(pilot, lambda: len(screen.sessions) == 2)
        assert screen.sessions[0]["session"] == "api:mei:ops"  # newest first
        await wait_for(pilot, lambda: len(screen.turns) == 2)
        await pilot.press("slash")
        screen.query_one("#sessions-search", Input).value = "hello"
        await wait_for(pilot, lambda: len(screen.hits) == 1)
        assert screen.hits[0].user == "hello there"
        await pilot.press("enter")  # to the hits
        await wait_for(pilot, lambda: {t.session_id for t in screen.turns} == {"api:mei:ops"})
        await wait_for(pilot, lambda: "▶ #0" in str(screen.query_one("#sessions-text").render()))
        shown = str(screen.query_one("#sessions-text", Static).render())
        assert "▶ #0" in shown  # the hit's turn, marked
        await pilot.press("escape")  # out of the search
        await wait_for(pilot, lambda: screen.query_one(OptionList).option_count == 2)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, SessionsScreen))


def test_with_an_embedder_meaning_finds_what_words_do_not(agents: Workspace) -> None:
    from oryxtui.agent.episodes import episode_store

    agent = runner(agents)
    list(agent.run("ops", "we finished the rollout of ledger v2 at noon", "cli", "mei"))
    list(agent.run("ops", "the coffee machine is broken again", "cli", "mei"))
    with ScriptedLLM([]) as llm:
        settings = Settings.model_validate(
            {"embedding": {"provider": "openai", "base_url": llm.base_url, "model": "e"}}
        )
        store = episode_store(agents.db_path, settings)
        found = store.search("ops", "release")  # no such word in any turn
        assert [e.user for e in found] == ["we finished the rollout of ledger v2 at noon"]
        assert len(llm.embeddings) == 2  # the episodes once, then the query
        store.search("ops", "release")
        assert len(llm.embeddings) == 3  # vectors are kept: only the query again
    with sqlite3.connect(agents.db_path) as db:
        assert db.execute("SELECT count(*) FROM episode_vectors").fetchone() == (2,)
    words_only = EpisodeStore(agents.db_path).search("ops", "release")
    assert words_only == []
