"""Bad input everywhere: a clear error or a correct result — never a traceback, a hang, or a file
touched that should not have been."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oryxtui.agent.messages import ToolCall
from oryxtui.agent.sessions import SessionStore
from oryxtui.agent.tools import ToolExecutor, builtin_tools
from oryxtui.cli import main
from oryxtui.config import Settings, load_settings
from oryxtui.demo import create_demo_workspace
from oryxtui.errors import AgentDefinitionError, ConfigError, MemoryWriteError
from oryxtui.memory import MemoryService
from oryxtui.workspace import Workspace, init_workspace
from tests.support import run_oryxtui

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))

CLI_TOKENS = st.sampled_from(
    [
        "memory",
        "show",
        "save",
        "recall",
        "doctor",
        "prompt",
        "chat",
        "init",
        "--agent",
        "--json",
        "--scope",
        "core",
        "archival",
        "--root",
        "--restore",
        "-",
        "--",
        "../x",
        "",
        "a.b",
        "名字",
        "--debug",
        "--version",
        "--help",
        "[/bold]",
        "\x00",
        "--nope",
    ]
)


@pytest.fixture(scope="module")
def cli_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fuzz-cli")
    init_workspace(root)
    return root


@FUZZ
@given(argv=st.lists(st.one_of(CLI_TOKENS, st.text(max_size=12)), max_size=6), stdin=st.text())
def test_cli_arguments_and_stdin(
    cli_workspace: Path, argv: list[str], stdin: str, monkeypatch_module: pytest.MonkeyPatch
) -> None:
    if "init" in argv:
        return  # would create workspaces wherever a token points
    monkeypatch_module.setattr("sys.stdin", io.StringIO(stdin))
    # No subcommand opens the dashboard; that is tested elsewhere, here it would wait forever.
    monkeypatch_module.setattr("oryxtui.cli.workspace.run_dashboard", lambda *_args, **_kw: 0)
    monkeypatch_module.chdir(cli_workspace)
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse: --help, --version, bad usage
        assert exit_.code in (0, 2, None)
        return
    assert code in (0, 1, 2)


@pytest.fixture(scope="module")
def monkeypatch_module() -> pytest.MonkeyPatch:
    patch = pytest.MonkeyPatch()
    yield patch
    patch.undo()


@FUZZ
@given(name=st.sampled_from(["save_memory", "recall_memory", "nope"]), arguments=st.text())
def test_tool_call_arguments(
    tmp_path_factory: pytest.TempPathFactory, name: str, arguments: str
) -> None:
    workspace = init_workspace(tmp_path_factory.mktemp("tools"))
    memory = MemoryService.open(workspace, Settings())
    executor = ToolExecutor(builtin_tools(memory), SessionStore(workspace.db_path).record_tool_call)
    result = executor.execute(ToolCall("1", name, arguments), None, "s")
    json.loads(result.content)
    stored = workspace.global_memory_file.exists()
    assert stored == (result.success and name == "save_memory")


@FUZZ
@given(raw=st.binary(max_size=300) | st.text(max_size=300).map(str.encode))
def test_config_files(tmp_path_factory: pytest.TempPathFactory, raw: bytes) -> None:
    path = tmp_path_factory.mktemp("config") / "config.toml"
    path.write_bytes(raw)
    try:
        load_settings(path, environ={})
    except ConfigError as exc:
        assert str(path) in str(exc)


@FUZZ
@given(text=st.text(max_size=300), fenced=st.booleans())
def test_agent_front_matter(
    tmp_path_factory: pytest.TempPathFactory, text: str, fenced: bool
) -> None:
    workspace = init_workspace(tmp_path_factory.mktemp("agents"))
    (workspace.agents_dir / "a").mkdir()
    (workspace.agents_dir / "a" / "AGENT.md").write_text(
        f"---\n{text}\n---\nbody" if fenced else text, encoding="utf-8"
    )
    try:
        agent = workspace.read_agent("a")
    except AgentDefinitionError as exc:
        assert "AGENT.md" in str(exc)
    else:
        assert isinstance(agent.tools, list)


@FUZZ
@given(raw=st.binary(max_size=400))
def test_memory_file_bytes(tmp_path_factory: pytest.TempPathFactory, raw: bytes) -> None:
    workspace: Workspace = init_workspace(tmp_path_factory.mktemp("memory"))
    path = workspace.global_memory_file
    path.write_bytes(raw)
    memory = MemoryService.open(workspace, Settings())
    before = memory.snapshot(None)
    memory.build_context(None)
    memory.recall(None, "a")
    try:
        memory.save(None, "fuzz entry", "archival")
    except MemoryWriteError:
        assert path.read_bytes() == raw  # refused: not one byte changed
        return
    after = memory.snapshot(None)
    assert [e.line for e in after.core] == [e.line for e in before.core]
    assert [e.line for e in after.archival][: len(before.archival)] == [
        e.line for e in before.archival
    ]
    assert after.archival[-1].content == "fuzz entry"


def memory_bytes(root: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(root.rglob("MEMORY.md"))}


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    command=st.sampled_from([["memory"], ["memory", "show"], ["memory", "recall"], ["prompt"]])
    | st.sampled_from([["memory", "save"], ["memory", "doctor"], ["chat"]]),
    rest=st.lists(st.one_of(CLI_TOKENS, st.text(max_size=12)), max_size=5),
    stdin=st.text(max_size=200),
)
def test_the_real_executable_with_bad_arguments(
    tmp_path_factory: pytest.TempPathFactory, command: list[str], rest: list[str], stdin: str
) -> None:
    """`oryxtui` as a shell runs it (`main(argv)`, in this process): a clear answer, never a
    traceback (but where `--debug` asks for one), and no memory file touched by a command that
    only reads."""
    root = tmp_path_factory.mktemp("fuzz-exe")
    create_demo_workspace(root)
    before = memory_bytes(root)
    argv = [arg.replace("\x00", "") for arg in [*command, *rest]]  # exec cannot pass NUL
    if "init" in argv or "--debug" in argv:
        return
    result = run_oryxtui(*argv, cwd=root, stdin=stdin)
    assert result.returncode in (0, 1, 2), result.stderr
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout
    if result.returncode:
        assert result.stderr.strip(), "a failure must say why"
    writes = {"save", "chat", "--restore"} & set(argv)
    if not writes:
        assert memory_bytes(root) == before
