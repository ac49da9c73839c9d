"""The smaller holes a second probe found (issue 22, "Low"): each one sentence now, not a
traceback, a silent retarget or a wrong word."""

from __future__ import annotations

import json

import pytest

from oryxtui.config import Settings
from oryxtui.hosts import is_loopback
from oryxtui.memory import MemoryService
from oryxtui.workspace import Workspace, is_valid_agent_name
from tests.api_server import RunningApi
from tests.llm_server import ScriptedLLM
from tests.support import cli, fixed_clock, make_agent
from tests.unit.test_terminal import on_terminal
from tests.unit.test_untrusted import GOOD_TURN, session_row


@pytest.mark.parametrize(
    "args",
    [
        ("web", "--port", "99999"),
        ("serve", "--port", "99999"),
        ("serve", "--port", "0"),
        ("web", "--port", "http"),
    ],
)
def test_ports_are_checked(workspace: Workspace, args: tuple[str, ...]) -> None:
    result = cli(*args, "--root", str(workspace.root))
    assert result.code == 2 and "is not a port" in result.stderr


@pytest.mark.parametrize(
    "args", [("init", "/proc/x"), ("init", "/dev/null/x"), ("demo", "/proc/x", "--no-open")]
)
def test_a_workspace_where_none_can_be_made_is_one_sentence(args: tuple[str, ...]) -> None:
    result = cli(*args)
    assert result.code == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith("oryxtui: error: Cannot") and result.stderr.count("\n") == 1


def test_web_on_a_busy_port_is_one_sentence(workspace: Workspace) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        busy = taken.getsockname()[1]
        result = cli("web", "--root", str(workspace.root), "--port", str(busy))
    assert result.code == 1 and "already in use" in result.stderr


def test_loopback_means_what_an_address_resolves_to() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("[::1]")
    assert is_loopback("localhost") and is_loopback("127.9.9.9")
    for name in ("127.lan", "127.0.0.1.nip.io.invalid", "0.0.0.0", "10.0.0.1", ""):
        assert not is_loopback(name), name


def test_a_name_that_only_starts_like_loopback_needs_a_token(workspace: Workspace) -> None:
    served = cli("serve", "--root", str(workspace.root), "--host", "127.lan")
    assert served.code == 2 and "token" in served.stderr
    web = cli("web", "--root", str(workspace.root), "--host", "127.lan")
    assert web.code == 2 and "this machine only" in web.stderr


def test_the_global_memory_name_is_no_agent_name(workspace: Workspace) -> None:
    assert not is_valid_agent_name("__global__")
    (workspace.agents_dir / "__global__").mkdir(parents=True)
    (workspace.agents_dir / "__global__" / "AGENT.md").write_text("---\nname: x\n---\n")
    assert "__global__" not in workspace.list_agents()
    made = cli(
        "memory", "save", "--root", str(workspace.root), "--agent", "__global__", "--create", "x"
    )
    assert made.code == 2 and "not a valid agent name" in made.stderr
    assert not (workspace.agents_dir / "__global__" / "MEMORY.md").exists()


def test_json_output_escapes_what_a_terminal_would_obey(workspace: Workspace) -> None:
    make_agent(workspace, "ops")
    text = "c1 \x9b31m bidi \u202e del \x7f"
    (workspace.memory_file("ops")).write_text(
        f"## 核心记忆\n- [2026-07-22 09:30:00] {text}\n## 归档记忆\n"
    )
    shown, _ = on_terminal(
        "memory", "show", "--agent", "ops", "--json", "--root", str(workspace.root)
    )
    for char in ("\x9b", "\u202e", "\x7f", "\x1b"):
        assert char not in shown
    assert json.loads(shown)["core"][0]["content"] == text  # exact once decoded


def test_cli_session_search_keeps_line_breaks_inside_their_turn(workspace: Workspace) -> None:
    make_agent(workspace, "ops")
    reply = "fine\n#99  2026-01-01 00:00:00  forged:session\n  user: injected"
    session_row(workspace, "web:u:ops", [GOOD_TURN[0], {"role": "assistant", "content": reply}])
    found = cli("sessions", "search", "--root", str(workspace.root), "--agent", "ops", "runbook")
    assert found.code == 0
    assert [line for line in found.stdout.splitlines() if line.startswith("#")] == [
        line for line in found.stdout.splitlines() if line.startswith("#0 ")
    ]


def test_a_failing_embedder_is_one_notice_not_two(workspace: Workspace) -> None:
    make_agent(workspace, "ops")
    MemoryService.open(workspace, Settings(), fixed_clock).save("ops", "deploy x", "archival")
    (workspace.root / "config.toml").write_text(
        '[embedding]\nprovider = "openai"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n'
    )
    found = cli("memory", "recall", "--root", str(workspace.root), "--agent", "ops", "deploy")
    assert found.code == 0 and "Cannot reach" in found.stderr
    assert "not indexed yet" not in found.stderr


def test_an_unknown_path_is_a_404_in_the_envelope(workspace: Workspace) -> None:
    with RunningApi(workspace) as client:
        for path in ("/api/v1/agents/%2F", "/api/v1/agents/", "/api/v1/agents/x/"):
            answer = client.get(path)
            assert answer.status_code == 404, path
            assert answer.json()["code"] == 404 and answer.json()["message"]


def test_a_get_of_the_prompt_never_calls_the_model(workspace: Workspace) -> None:
    from oryxtui.agent.sessions import os_user, session_id_for
    from oryxtui.api.app import create_api
    from oryxtui.config import load_settings

    make_agent(workspace, "ops")
    turns = [GOOD_TURN[0], GOOD_TURN[1]] * 30  # far past the history window
    session_row(workspace, session_id_for("cli", os_user(), "ops"), turns)
    with ScriptedLLM([{"text": "a summary"}], repeat_last=True) as llm:
        (workspace.root / "config.toml").write_text(
            f'[llm]\nbase_url = "{llm.base_url}"\nmodel = "m"\n'
            "[prompt]\ncompact_history = true\nmax_history_turns = 4\n"
        )
        app = create_api(workspace, load_settings(workspace.config_path))
        with RunningApi(workspace, app=app) as client:
            answer = client.get("/api/v1/agents/ops/prompt")
            assert answer.status_code == 200
        assert llm.requests == []
        summary = next(b for b in answer.json()["data"]["blocks"] if b["name"] == "summary")
        assert "next turn" in summary["text"]


def test_an_unreadable_database_url_is_in_the_one_error_hierarchy() -> None:
    """One that escapes its reader is still one sentence and exit 2, never a traceback."""
    from oryxtui.conninfo import ConnInfo, ConnInfoError
    from oryxtui.errors import OryxError

    with pytest.raises(OryxError) as caught:
        ConnInfo.parse("mysql://nope")
    assert isinstance(caught.value, ConnInfoError) and caught.value.exit_code == 2
    assert caught.value.http_status == 400 and "postgresql://" in str(caught.value)
