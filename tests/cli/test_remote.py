"""Every command with `--remote URL` against a real server prints what it prints locally,
with the same exit code: scripts move to a team setup unchanged. One suite, each command
run both ways on the same workspace (the place named, and times, normalised)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from oryxtui.api.app import create_api
from oryxtui.config import load_settings
from oryxtui.demo import create_demo_workspace
from oryxtui.workspace import Workspace
from tests.api_server import RunningApi
from tests.support import CliResult, cli

TIME = re.compile(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d(:\d\d)?")
# One worker for the module: the demo, its server and the index its first recall makes, once.
pytestmark = pytest.mark.xdist_group("remote-demo")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Workspace, str]]:
    workspace, _ = create_demo_workspace(tmp_path_factory.mktemp("remote") / "demo")
    app = create_api(workspace, load_settings(workspace.config_path))  # as `serve` makes it
    with RunningApi(workspace, app=app) as client:
        yield workspace, str(client.base_url)


def both(demo: tuple[Workspace, str], *args: str) -> tuple[CliResult, CliResult]:
    workspace, url = demo
    here = cli(*args, "--root", str(workspace.root))
    there = cli(*args, "--remote", url)
    return here, there


def normalised(text: str, demo: tuple[Workspace, str]) -> str:
    workspace, url = demo
    text = text.replace(str(workspace.root), "<place>").replace(url, "<place>")
    return TIME.sub("<time>", text)


def first_session(demo: tuple[Workspace, str]) -> str:
    listed = cli("sessions", "list", "--agent", "ops-bot", "--json", "--root", str(demo[0].root))
    return json.loads(listed.stdout)["sessions"][0]["session"]


READS = [
    ["memory", "show", "--agent", "ops-bot"],
    ["memory", "show", "--agent", "ops-bot", "--json"],
    ["memory", "show"],
    ["memory", "recall", "deploy", "--agent", "ops-bot"],
    ["memory", "recall", "deploy", "--agent", "ops-bot", "--json"],
    ["memory", "recall", "deploy", "--all", "--json"],
    ["memory", "log", "--agent", "atlas"],
    ["memory", "log", "--agent", "atlas", "--json"],
    ["memory", "export", "--agent", "scribe"],
    ["memory", "consolidate", "--dry-run", "--agent", "ops-bot", "--json"],
    ["agents", "list"],
    ["agents", "list", "--json"],
    ["sessions", "list", "--agent", "ops-bot"],
    ["sessions", "list", "--all", "--json"],
    ["sessions", "search", "deploy", "--agent", "ops-bot", "--json"],
    ["sessions", "show", "<session>", "--json"],
    ["sessions", "show", "nobody:nothing:none"],
    ["memory", "review", "--all", "--json"],
    ["memory", "review", "--agent", "ops-bot"],
    ["prompt", "--agent", "atlas"],
    ["prompt", "--agent", "atlas", "--json"],
    # Refusals: the same sentence, the same exit code.
    ["memory", "show", "--agent", "nobody"],
    ["memory", "show", "--agent", "../etc"],
    ["memory", "recall", " ", "--agent", "ops-bot"],
    ["memory", "delete", "000000000000", "--agent", "ops-bot"],
]


@pytest.mark.parametrize("args", READS, ids=lambda args: " ".join(args))
def test_a_read_prints_the_same_on_a_server(demo: tuple[Workspace, str], args: list[str]) -> None:
    args = [first_session(demo) if arg == "<session>" else arg for arg in args]
    here, there = both(demo, *args)
    assert there.code == here.code, (here, there)
    assert normalised(there.stdout, demo) == normalised(here.stdout, demo)
    # A hint names where it was printed: `--remote <place>` there, `--root <place>` here.
    told_there = normalised(there.stderr, demo).replace("--remote <place>", "--root <place>")
    assert told_there.replace("<place>: ", "") == normalised(here.stderr, demo)


def test_changes_print_the_same_on_a_server(demo: tuple[Workspace, str]) -> None:
    workspace, url = demo
    outputs = {}
    for where in ("--root", "--remote"):
        place = str(workspace.root) if where == "--root" else url

        def run(*args: str, where: str = where, place: str = place) -> CliResult:
            return cli(*args, where, place)

        saved = run("memory", "save", f"a fact {where}", "--agent", "scribe", "--json")
        entry = json.loads(saved.stdout)["entry"]
        steps = [
            saved,
            run("memory", "edit", entry["id"], f"an edited fact {where}", "--agent", "scribe"),
        ]
        shown = json.loads(run("memory", "show", "--agent", "scribe", "--json").stdout)
        edited = next(e for e in shown["archival"] if e["content"].startswith("an edited"))
        steps.append(run("memory", "move", edited["id"], "core", "--agent", "scribe", "--json"))
        moved = json.loads(steps[-1].stdout)["moved"]
        steps.append(run("memory", "delete", moved["id"], "--agent", "scribe"))
        log = run("memory", "log", "--agent", "scribe", "--json").stdout.splitlines()
        steps.append(run("memory", "bring-back", str(json.loads(log[0])["n"]), "--agent", "scribe"))
        steps.append(run("chat", "--agent", "scribe", f"remember that the {where} cat is grey"))
        waiting = json.loads(run("memory", "review", "--agent", "scribe", "--json").stdout)
        newest = waiting["awaiting"][0]["id"]
        steps.append(run("memory", "review", "reject", newest, "--agent", "scribe"))
        steps.append(run("memory", "review", "approve", "--agent", "scribe", "--json"))
        outputs[where] = [
            (step.code, normalised(step.stdout.replace(where, "<w>"), demo)) for step in steps
        ]
        assert all(code == 0 for code, _ in outputs[where]), outputs[where]
    ids = re.compile(r'(?<=")[0-9a-f]{12}(?=")|(?<=id )[0-9a-f]{12}')  # the times differ
    change = re.compile(r"#\d+")  # the remote changes come after the local ones
    local = [(c, change.sub("#n", ids.sub("<id>", out))) for c, out in outputs["--root"]]
    remote = [(c, change.sub("#n", ids.sub("<id>", out))) for c, out in outputs["--remote"]]
    assert remote == local
    log = cli("memory", "log", "--agent", "scribe", "--root", str(workspace.root)).stdout
    assert "by api" in log and "by cli" in log  # each recorded as who made it


def test_a_remote_command_needs_a_server_that_answers(tmp_path: Path) -> None:
    dead = cli("memory", "show", "--remote", "http://127.0.0.1:9")
    assert dead.code == 1 and "cannot be reached" in dead.stderr and dead.stdout == ""
    bad = cli("memory", "show", "--remote", "ftp://x")
    assert bad.code == 2 and "not a server URL" in bad.stderr
    unknown = cli("memory", "show", "--remote", "nickname")
    assert unknown.code == 2 and "[remotes]" in unknown.stderr


def test_keys_come_from_the_named_variable_or_the_users_remotes(
    demo: tuple[Workspace, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace, url = demo
    key = cli(
        "keys", "create", "remote-reader", "--scope", "read", "--root", str(workspace.root)
    ).stdout.strip()
    try:
        missing = cli("memory", "show", "--remote", url, "--agent", "atlas")
        assert missing.code == 1 and "Missing key" in missing.stderr and key not in missing.stderr
        monkeypatch.setenv("TEAM_KEY", key)
        named = cli("memory", "show", "--remote", url, "--agent", "atlas", "--key-env", "TEAM_KEY")
        assert named.code == 0 and "## 核心记忆" in named.stdout
        config = tmp_path / "oryxtui" / "config.toml"
        config.parent.mkdir()
        config.write_text(f'[remotes.team]\nurl = "{url}"\nkey_env = "TEAM_KEY"\n')
        monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
        by_name = cli("memory", "show", "--remote", "team", "--agent", "atlas")
        assert by_name.stdout == named.stdout
        refused = cli("memory", "save", "x", "--remote", "team", "--agent", "atlas")
        assert refused.code == 1 and "needs write" in refused.stderr
        monkeypatch.delenv("TEAM_KEY")
        unset = cli("memory", "show", "--remote", "team", "--agent", "atlas")
        assert unset.code == 2 and "TEAM_KEY" in unset.stderr
    finally:
        cli("keys", "revoke", "remote-reader", "--root", str(workspace.root))


def test_an_agent_outside_a_keys_reach_is_said_to_be_so(
    demo: tuple[Workspace, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A key limited to `ops-*` asking for atlas (which exists) is told atlas is not within
    its reach — not advised to make it, which the key could not do."""
    workspace, url = demo
    key = cli(
        "keys",
        "create",
        "ops-only",
        "--scope",
        "read",
        "--agents",
        "ops-*",
        "--root",
        str(workspace.root),
    ).stdout.strip()
    monkeypatch.setenv("OPS_KEY", key)
    try:
        out = cli("memory", "show", "--remote", url, "--key-env", "OPS_KEY", "--agent", "atlas")
        assert out.code == 2 and out.stderr.count("\n") == 1
        assert "not within this key's reach (it reaches ops-* only)" in out.stderr
        assert "agents new" not in out.stderr
        fine = cli("memory", "show", "--remote", url, "--key-env", "OPS_KEY", "--agent", "ops-bot")
        assert fine.code == 0, fine.stderr
    finally:
        cli("keys", "revoke", "ops-only", "--root", str(workspace.root))
