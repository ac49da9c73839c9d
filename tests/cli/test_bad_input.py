"""Refusals leave no trace, failures are one sentence, and careless input gets a clear answer."""

from __future__ import annotations

import json
import os
import resource
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.widgets import Input

from oryxtui.agent.loop import AgentLoop
from oryxtui.agent.messages import ToolCall
from oryxtui.agent.sessions import SessionStore
from oryxtui.agent.tools import ToolExecutor, builtin_tools
from oryxtui.config import LlmSettings, MemorySettings, Settings
from oryxtui.errors import MemoryWriteError
from oryxtui.memory import MemoryService
from oryxtui.memory.format import ARCHIVAL_HEADER, CORE_HEADER
from oryxtui.workspace import Workspace
from tests.api_server import as_served
from tests.dashboard_support import (
    agent_list,
    build_workspace,
    make_app,
    memory_shown,
    shown_memory,
    wait_for,
)
from tests.llm_server import ScriptedLLM
from tests.support import fixed_clock, make_agent, oryxtui_executable, run_oryxtui


def root_args(workspace: Workspace, *rest: str) -> list[str]:
    return ["--root", str(workspace.root), *rest]


def temp_files(folder: Path) -> list[str]:
    return [name for name in os.listdir(folder) if name.endswith(".tmp")]


# 6. Every refusal leaves no trace ---------------------------------------------------------------


def test_a_save_refused_for_a_full_disk_is_not_journaled(workspace: Workspace) -> None:
    folder = make_agent(workspace, "ops")
    memory_file = folder / "MEMORY.md"
    memory_file.write_text(f"{CORE_HEADER}\n{ARCHIVAL_HEADER}\n" + "- [2026-07-22 09:00] x\n" * 400)
    limit = memory_file.stat().st_size + 16  # the new file cannot be written whole

    def small_disk() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of a kill, like ENOSPC
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    result = subprocess.run(
        [oryxtui_executable(), "memory", "save", *root_args(workspace, "--agent", "ops"), "y" * 64],
        capture_output=True,
        text=True,
        preexec_fn=small_disk,
        timeout=60,
    )
    assert result.returncode == 1 and "nothing was written" in result.stderr
    assert "Traceback" not in result.stderr
    journal = folder / "MEMORY.md.journal"
    assert not journal.exists() or "y" * 64 not in journal.read_text()
    assert temp_files(folder) == []
    doctor = run_oryxtui("memory", "doctor", "--json", *root_args(workspace, "--agent", "ops"))
    assert json.loads(doctor.stdout)["entries"] == []


def test_a_refused_save_over_rest_is_not_journaled(workspace: Workspace) -> None:
    folder = make_agent(workspace, "ops")
    (folder / "MEMORY.md").write_bytes(f"{CORE_HEADER}\n{ARCHIVAL_HEADER}\n- \xff\n".encode())
    (folder / "MEMORY.md").write_bytes(b"## \xe6\xa0\xb8\n- caf\xe9\n")
    with as_served(workspace) as client:
        refused = client.post("/api/v1/agents/ops/memory", json={"content": "never saved"})
        assert refused.status_code == 409
    journal = folder / "MEMORY.md.journal"
    assert not journal.exists() or "never saved" not in journal.read_text()


class LockHolder:
    """Another process holding oryxos.db's write lock until released."""

    def __init__(self, db_path: Path) -> None:
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import sqlite3, sys; c = sqlite3.connect(sys.argv[1], isolation_level=None);"
                " c.execute('BEGIN EXCLUSIVE'); print('held', flush=True); sys.stdin.read()",
                str(db_path),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert self.process.stdout is not None
        assert self.process.stdout.readline() == b"held\n"

    def release(self) -> None:
        self.process.kill()
        self.process.wait()


def test_a_lock_during_a_tool_call_still_audits_it(workspace: Workspace) -> None:
    make_agent(workspace, "ops")
    script = [{"tool_calls": [("save_memory", {"content": "pager is 4711"})]}, {"text": "Noted."}]
    with ScriptedLLM(script) as llm:
        settings = Settings(llm=LlmSettings(base_url=llm.base_url, model="m"))
        memory = MemoryService.open(workspace, settings, clock=fixed_clock)
        sessions = SessionStore(workspace.db_path, fixed_clock, busy_timeout_ms=200)
        agent = AgentLoop(workspace, settings, memory, sessions)
        holder = None
        kinds = []
        try:
            for event in agent.run("ops", "remember the pager", "cli", "tester"):
                kinds.append(event.kind)
                if event.kind == "tool_call":  # the tool runs once we ask for the next event
                    holder = LockHolder(workspace.db_path)
                elif event.kind == "tool_result" and holder is not None:
                    holder.release()
        finally:
            if holder is not None:
                holder.release()
    assert kinds[-1] == "final" and "error" not in kinds
    assert "pager is 4711" in workspace.memory_file("ops").read_text()
    rows = sqlite3.connect(workspace.db_path).execute(
        "SELECT tool_name, success FROM tool_invocations"
    )
    assert rows.fetchall() == [("save_memory", 1)]


class CorruptingLLM(ScriptedLLM):
    """Damages oryxos.db when the model is first asked, mid-turn."""

    def __init__(self, script: list, db_path: Path) -> None:
        super().__init__(script)
        self.db_path = db_path

    def next_step(self, body: dict) -> dict:
        if not self.requests:
            for path in (self.db_path, *(Path(f"{self.db_path}-{x}") for x in ("wal", "shm"))):
                if path.exists():
                    with open(path, "r+b") as handle:
                        handle.write(b"garbage!" * (path.stat().st_size // 8))
        return super().next_step(body)


def test_a_database_damaged_mid_turn_is_one_sentence(workspace: Workspace) -> None:
    make_agent(workspace, "ops")
    script = [{"tool_calls": [("save_memory", {"content": "pager is 4711"})]}, {"text": "Noted."}]
    with CorruptingLLM(script, workspace.db_path) as llm:
        (workspace.root / "config.toml").write_text(
            f'[llm]\nbase_url = "{llm.base_url}"\nmodel = "m"\n'
        )
        result = run_oryxtui("chat", *root_args(workspace, "--agent", "ops", "remember it"))
    assert result.returncode == 1
    assert "Traceback" not in result.stderr and "sqlite3." not in result.stderr
    errors = [line for line in result.stderr.splitlines() if "error" in line]
    assert errors and all("database" in line for line in errors)
    # The memory save itself landed.
    assert "pager is 4711" in workspace.memory_file("ops").read_text()


def test_a_damaged_sessions_page_is_one_sentence(workspace: Workspace) -> None:
    make_agent(workspace, "ops")
    run_oryxtui("chat", *root_args(workspace, "--agent", "ops", "hello"))
    connection = sqlite3.connect(workspace.db_path)
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    (page,) = connection.execute(
        "SELECT rootpage FROM sqlite_master WHERE name = 'sessions'"
    ).fetchone()
    (size,) = connection.execute("PRAGMA page_size").fetchone()
    connection.close()
    data = bytearray(workspace.db_path.read_bytes())
    data[(page - 1) * size : page * size] = b"\xde\xad" * (size // 2)  # the sessions b-tree
    workspace.db_path.write_bytes(bytes(data))
    for command in (("prompt",), ("chat", "again")):
        result = run_oryxtui(*command, *root_args(workspace, "--agent", "ops"))
        assert result.returncode == 1, result.stdout
        assert "Traceback" not in result.stderr
        assert "database" in result.stderr and result.stderr.count("\n") == 1


def test_journal_records_after_a_failed_save_are_clean(workspace: Workspace) -> None:
    folder = make_agent(workspace, "ops")
    (folder / "MEMORY.md").write_bytes(b"- \xff\n")
    memory = MemoryService.open(workspace, Settings(), clock=fixed_clock)
    with pytest.raises(MemoryWriteError):
        memory.save("ops", "refused", "core")
    assert not (folder / "MEMORY.md.journal").exists()


# No tracebacks -----------------------------------------------------------------------------------


def test_an_agent_name_of_300_characters(workspace: Workspace) -> None:
    name = "a" * 300
    for command in (("memory", "save", "x"), ("memory", "doctor"), ("memory", "show")):
        result = run_oryxtui(*command, *root_args(workspace, "--agent", name))
        assert result.returncode == 2 and "Traceback" not in result.stderr
        assert "not a valid agent name" in result.stderr


def test_non_utf8_bytes_in_a_chat_message(workspace: Workspace) -> None:
    make_agent(workspace, "ops")
    command = [oryxtui_executable(), "chat", *root_args(workspace, "--agent", "ops")]
    as_argument = subprocess.run(
        [*command, b"remember that caf\xe9 \xff is open"], capture_output=True, timeout=60
    )
    assert as_argument.returncode == 0, as_argument.stderr
    as_input = subprocess.run(
        command, input=b"remember that \xfe\xff odd bytes\n", capture_output=True, timeout=60
    )
    assert as_input.returncode == 0, as_input.stderr
    assert b"Traceback" not in as_argument.stderr + as_input.stderr
    assert "\ufffd" in workspace.memory_file("ops").read_text(encoding="utf-8")


def test_a_malformed_agent_md_exits_2(workspace: Workspace) -> None:
    make_agent(workspace, "ops")
    (workspace.agents_dir / "ops" / "AGENT.md").write_text("---\nname: [oops\n---\n")
    result = run_oryxtui("prompt", *root_args(workspace, "--agent", "ops"))
    assert result.returncode == 2 and "not valid YAML" in result.stderr


# 7. Careless input -------------------------------------------------------------------------------


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[Workspace]:
    assert run_oryxtui("demo", str(tmp_path / "demo"), "--no-open").returncode == 0
    yield Workspace(tmp_path / "demo" / ".oryxos")


def test_saving_to_a_misspelt_agent_names_the_closest(demo: Workspace) -> None:
    result = run_oryxtui("memory", "save", *root_args(demo, "--agent", "opsbot", "x"))
    assert result.returncode == 2
    assert "ops-bot" in result.stderr and "--create" in result.stderr
    assert not (demo.agents_dir / "opsbot").exists()


@pytest.mark.parametrize("backend", ["markdown", "sqlite"])
def test_create_starts_an_agent_that_is_then_listed(demo: Workspace, backend: str) -> None:
    (demo.root / "config.toml").write_text(f'[memory]\nbackend = "{backend}"\n')
    result = run_oryxtui("memory", "save", "--create", *root_args(demo, "--agent", "fresh", "x"))
    assert result.returncode == 0, result.stderr
    assert "no agent named" not in result.stderr  # it is being made, not missing
    assert "fresh" in demo.list_agents()
    again = run_oryxtui("memory", "save", *root_args(demo, "--agent", "fresh", "y"))
    assert again.returncode == 0, again.stderr  # no second --create needed
    with as_served(demo) as client:
        agents = {a["name"]: a for a in client.get("/api/v1/agents").json()["data"]}
        assert agents["fresh"]["has_agent_md"] is True  # a real agent, AGENT.md and all
        assert client.get("/api/v1/agents/fresh/memory").status_code == 200


async def test_a_memory_only_agent_is_in_the_sidebar(workspace: Workspace) -> None:
    build_workspace(workspace)
    folder = workspace.agents_dir / "orphan"
    folder.mkdir()
    (folder / "MEMORY.md").write_text(f"{CORE_HEADER}\n{ARCHIVAL_HEADER}\n- kept\n")
    app = make_app(workspace)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_for(pilot, lambda: "orphan" in agent_list(app).order)
        app.dashboard.select("orphan")
        await wait_for(
            pilot,
            lambda: shown_memory(app) is not None and shown_memory(app).summary.name == "orphan",
        )
        assert "no AGENT.md" in str(app.query_one("#agent-banner").render())
        assert (
            shown_memory(app).summary.archival_count == 1
            and shown_memory(app).summary.error is None
        )


def test_a_huge_entry_is_refused_everywhere(workspace: Workspace) -> None:
    folder = make_agent(workspace, "ops")
    paste = "word " * 55_000  # ~276 KB
    cli = run_oryxtui("memory", "save", *root_args(workspace, "--agent", "ops", "-"), stdin=paste)
    assert cli.returncode == 2
    assert "274,999 characters" in cli.stderr and "2,000" in cli.stderr
    with as_served(workspace) as client:
        api = client.post("/api/v1/agents/ops/memory", json={"content": paste[:20_000]})
        assert api.status_code == 400 and "memory.max_entry_chars" in api.json()["message"]
    memory = MemoryService.open(workspace, Settings(), clock=fixed_clock)
    tools = builtin_tools(memory)
    executor = ToolExecutor(tools, lambda *args: None)
    call = ToolCall("1", "save_memory", json.dumps({"content": paste}))
    result = executor.execute(call, "ops", None)
    assert not result.success and "shorten" in (result.error or "")
    assert not (folder / "MEMORY.md").exists()
    # The limit is a setting.
    (workspace.root / "config.toml").write_text("[memory]\nmax_entry_chars = 300000\n")
    ok = run_oryxtui("memory", "save", *root_args(workspace, "--agent", "ops", "-"), stdin=paste)
    assert ok.returncode == 0, ok.stderr


async def test_the_save_modal_refuses_a_huge_entry(workspace: Workspace) -> None:
    build_workspace(workspace)
    settings = Settings(memory=MemorySettings(max_entry_chars=50))
    app = make_app(workspace, settings)
    before = workspace.memory_file("alpha").read_bytes()
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_for(pilot, lambda: memory_shown(app))
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.focused, Input))
        app.focused.value = "z" * 80
        await pilot.press("enter")
        error = app.screen.query_one("#save-error")
        await wait_for(pilot, lambda: "over the limit" in str(error.render()))
        assert "80 characters" in str(error.render())
    assert workspace.memory_file("alpha").read_bytes() == before


@pytest.mark.parametrize(
    ("scope", "saved"), [("CORE", "core"), ("Core", "core"), (None, "archival"), ("  ", "archival")]
)
def test_the_tool_takes_scope_as_upstream_does(
    workspace: Workspace, scope: str | None, saved: str
) -> None:
    make_agent(workspace, "ops")
    memory = MemoryService.open(workspace, Settings(), clock=fixed_clock)
    executor = ToolExecutor(builtin_tools(memory), lambda *args: None)
    call = ToolCall("1", "save_memory", json.dumps({"content": "fact", "scope": scope}))
    result = executor.execute(call, "ops", None)
    assert result.success, result.error
    snapshot = memory.snapshot("ops")
    assert len(snapshot.core if saved == "core" else snapshot.archival) == 1


def test_an_unknown_scope_is_named(workspace: Workspace) -> None:
    make_agent(workspace, "ops")
    memory = MemoryService.open(workspace, Settings(), clock=fixed_clock)
    executor = ToolExecutor(builtin_tools(memory), lambda *args: None)
    call = ToolCall("1", "save_memory", json.dumps({"content": "fact", "scope": "bogus"}))
    result = executor.execute(call, "ops", None)
    assert not result.success and "'bogus'" in (result.error or "")
    assert (result.error or "").endswith("'archival'.") and ".." not in (result.error or "")
    cli = run_oryxtui(
        "memory", "save", *root_args(workspace, "--agent", "ops", "--scope", "bogus", "x")
    )
    assert cli.returncode == 2 and "'bogus'" in cli.stderr


def test_the_cli_and_rest_share_one_scope_rule(workspace: Workspace) -> None:
    make_agent(workspace, "ops")
    for scope in (" core", "CORE"):
        cli = run_oryxtui(
            "memory",
            "save",
            "--json",
            *root_args(workspace, "--agent", "ops", "--scope", scope, "x"),
        )
        assert cli.returncode == 0, cli.stderr
        assert json.loads(cli.stdout)["scope"] == "core"
    with as_served(workspace) as client:
        rest = client.post("/api/v1/agents/ops/memory", json={"content": "y", "scope": " core"})
        assert rest.json()["data"]["scope"] == "core"


@pytest.mark.parametrize(
    ("keymap", "fragment"),
    [
        ('recall = "not a key!!"', "'not a key!!'"),
        ('recal = "x"', "unknown binding id 'recal'"),
        ('recall = "notakey"', "'notakey' is not a key"),
    ],
)
def test_a_bad_keymap_is_a_configuration_error(demo: Workspace, keymap: str, fragment: str) -> None:
    (demo.root / "config.toml").write_text(f"[tui.keymap]\n{keymap}\n")
    result = run_oryxtui("--root", str(demo.root))
    assert result.returncode == 2
    assert "tui.keymap" in result.stderr and fragment in result.stderr
    assert "config.toml" in result.stderr


def test_recall_with_no_hit_says_so(demo: Workspace) -> None:
    result = run_oryxtui("memory", "recall", *root_args(demo, "--agent", "atlas", "zzzqqq"))
    assert result.returncode == 0 and result.stdout == ""
    assert "no archival entry" in result.stderr and "zzzqqq" in result.stderr
