"""`oryxtui prompt` and `oryxtui chat` through the real executable."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.llm_server import ScriptedLLM
from tests.support import run_oryxtui


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    assert run_oryxtui("demo", str(tmp_path / "demo"), "--no-open").returncode == 0
    return tmp_path / "demo"


def test_prompt_json_has_its_blocks(demo: Path) -> None:
    result = run_oryxtui("prompt", "--agent", "ops-bot", "--json", cwd=demo)
    assert result.returncode == 0, result.stderr
    prompt = json.loads(result.stdout)
    names = ["identity", "time", "memory", "history", "tools"]
    assert [b["name"] for b in prompt["blocks"]] == names
    assert prompt["blocks"][0]["text"].startswith("You are ops-bot.")
    assert re.fullmatch(r"当前日期时间：\d{4}-\d\d-\d\d \d\d:\d\d", prompt["blocks"][1]["text"])
    memory = prompt["blocks"][2]
    assert memory["chars"] == len(memory["text"]) and "Deploy window is Tuesdays" in memory["text"]
    assert prompt["messages"][0]["role"] == "system"
    assert {t["function"]["name"] for t in prompt["tools"]} == {
        "save_memory",
        "recall_memory",
        "update_memory",
        "search_conversations",
    }


def test_prompt_text_labels_each_block(demo: Path) -> None:
    text = run_oryxtui("prompt", "--agent", "atlas", cwd=demo).stdout
    for name in ("identity", "time", "memory", "history", "tools"):
        assert f"── {name} · " in text
    off = run_oryxtui(
        "prompt", "--agent", "atlas", cwd=demo, env={"ORYXTUI_PROMPT__CURRENT_TIME": "false"}
    )
    assert "── time · " not in off.stdout and "当前日期时间" not in off.stdout


def test_chat_with_the_offline_model_saves_and_leaves_no_footprint(demo: Path) -> None:
    result = run_oryxtui(
        "chat",
        "--agent",
        "atlas",
        "--json",
        "remember that the deploy window is Tuesday 14:00",
        cwd=demo,
    )
    assert result.returncode == 0, result.stderr
    turn = json.loads(result.stdout)
    assert turn["session_id"].startswith("cli:") and turn["session_id"].endswith(":atlas")
    assert turn["model"] == "offline model"
    assert turn["reply"] == "(offline model) Noted in archival memory."
    kinds = [e["kind"] for e in turn["events"] if e["kind"] not in ("text", "warning")]
    assert kinds == ["tool_call", "tool_result", "final"]
    memory = (demo / ".oryxos" / "agents" / "atlas" / "MEMORY.md").read_text()
    assert "] the deploy window is Tuesday 14:00\n" in memory
    assert (
        "触发" not in memory and "remember that" not in memory
    )  # upstream's default since 86b6bab
    prompt = json.loads(run_oryxtui("prompt", "--agent", "atlas", "--json", cwd=demo).stdout)
    blocks = {block["name"]: block["text"] for block in prompt["blocks"]}
    assert "the deploy window is Tuesday 14:00" in blocks["memory"]
    assert "user: remember that the deploy window" in blocks["history"]


def test_chat_repl_reads_lines(demo: Path) -> None:
    result = run_oryxtui(
        "chat",
        "--agent",
        "scribe",
        cwd=demo,
        stdin="remember that releases ship on Fridays\nwhat do you remember about fridays?\n",
    )
    assert result.returncode == 0, result.stderr
    assert "Noted in archival memory." in result.stdout
    assert "releases ship on Fridays" in result.stdout.split("Noted in archival memory.")[1]


def test_chat_against_an_openai_compatible_server_from_config(demo: Path) -> None:
    script = [
        {"tool_calls": [("save_memory", {"content": "Mei prefers Tuesday deploys"})]},
        {"text": "Noted, Tuesday it is."},
    ]
    with ScriptedLLM(script) as llm:
        (demo / ".oryxos" / "config.toml").write_text(
            f'[llm]\nprovider = "openai"\nbase_url = "{llm.base_url}"\nmodel = "local-model"\n'
        )
        result = run_oryxtui("chat", "--agent", "ops-bot", "--json", "deploy day?", cwd=demo)
    assert result.returncode == 0, result.stderr
    turn = json.loads(result.stdout)
    assert turn["reply"] == "Noted, Tuesday it is."
    assert turn["model"].startswith("local-model @ 127.0.0.1:")
    assert llm.requests[0]["messages"][0]["content"].startswith("You are ops-bot.")
    memory = (demo / ".oryxos" / "agents" / "ops-bot" / "MEMORY.md").read_text()
    assert "Mei prefers Tuesday deploys" in memory


def test_chat_with_a_dead_endpoint_fails_clearly(demo: Path) -> None:
    with ScriptedLLM([]) as llm:
        dead = llm.base_url
    (demo / ".oryxos" / "config.toml").write_text(f'[llm]\nbase_url = "{dead}"\nmodel = "m"\n')
    result = run_oryxtui("chat", "--agent", "atlas", "hello?", cwd=demo)
    assert result.returncode == 1
    assert "Cannot reach the LLM" in result.stderr and "Traceback" not in result.stderr


def test_chat_refuses_an_empty_message_and_a_missing_key(demo: Path) -> None:
    assert run_oryxtui("chat", "--agent", "atlas", "  ", cwd=demo).returncode == 2
    (demo / ".oryxos" / "config.toml").write_text(
        '[llm]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\napi_key_env = "NO_SUCH_KEY"\n'
    )
    result = run_oryxtui("chat", "--agent", "atlas", "hi", cwd=demo)
    assert result.returncode == 2 and "NO_SUCH_KEY" in result.stderr
