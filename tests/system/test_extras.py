"""Each pip extra works alone, installed as the README says, from a wheel of this checkout into
a virtual environment of its own: `web` serves the browser dashboard without the server's
packages, `server` serves the REST API without the web's, `local` recalls by meaning with the
model its wheel carries, `mcp` answers an MCP client on stdio, and without one, each says in
one sentence how to install it (the installed package's form). Slow: real installs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import venv
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from oryxtui.extras import install_command
from oryxtui.memory.format import ARCHIVAL_HEADER, CORE_HEADER
from oryxtui.workspace import init_workspace
from tests.serve_process import free_port
from tests.support import FACTS, ROUTINE_NOTES

# Installs into fresh environments, each spread over the workers like any test (one group, one at
# a time, they were the end of the whole run: 156 s on one worker).
pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(folder),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
        timeout=600,
    )
    (built,) = folder.glob("oryxtui-*.whl")
    return built


def environment(tmp_path: Path, wheel: Path, extra: str | None) -> Path:
    """A virtual environment with oryxtui and only `extra`; returns its bin folder."""
    folder = tmp_path / f"venv-{extra or 'none'}"
    # This pip installs into it (`--python`): the same resolution as the venv's own pip, without
    # bootstrapping a pip into each (3 s) or compiling every module of every package ahead (the
    # first import does it for what is used): an install took 12 s of CPU, now 2.5.
    venv.create(folder, with_pip=False)
    wanted = f"{wheel}[{extra}]" if extra else str(wheel)
    python = str(folder / "bin" / "python")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-compile", wanted],
        check=True,
        capture_output=True,
        timeout=900,
    )
    return folder / "bin"


def run(
    bin_folder: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(bin_folder / "oryxtui"), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


def stdio_tools(bin_folder: Path, root: str) -> set[str]:
    """The tools `oryxtui mcp` lists to a client that starts it and asks."""
    from tests.mcp_support import initialize

    lines = [
        initialize("t"),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    server = subprocess.Popen(
        [str(bin_folder / "oryxtui"), "mcp", "--root", root],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write("".join(json.dumps(line) + "\n" for line in lines))
    server.stdin.flush()
    answers = [json.loads(server.stdout.readline()) for _ in range(2)]  # then it may go
    server.stdin.close()
    assert server.wait(timeout=60) == 0
    return {tool["name"] for tool in answers[1]["result"]["tools"]}


@pytest.fixture
def served() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        process.terminate()
        process.wait(timeout=30)


def answered(url: str, deadline: float) -> httpx.Response:
    while True:
        try:
            return httpx.get(url, timeout=5)
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


@pytest.mark.parametrize("extra", [None, "web", "server", "local", "onnx", "mcp"])
def test_each_extra_works_alone(
    tmp_path: Path, wheel: Path, extra: str | None, served: list[subprocess.Popen[bytes]]
) -> None:
    bin_folder = environment(tmp_path, wheel, extra)
    root = str(init_workspace(tmp_path / "ws").root)
    saved = run(bin_folder, "memory", "save", "--root", root, "core works with any extra")
    assert saved.returncode == 0, saved.stderr
    for name, command in (("web", "web"), ("server", "serve"), ("mcp", "mcp")):
        if name == extra:
            continue
        refused = run(bin_folder, command, "--root", root)
        assert refused.returncode == 2, refused.stderr
        assert f"pip install 'oryxtui[{name}]'" in refused.stderr  # the installed package's
        assert refused.stderr.count("\n") == 1 and "Traceback" not in refused.stderr
    # A shared database needs the postgres extra, which none of these has.
    shared = {"ORYXTUI_DATABASE_URL": "postgresql://oryx@127.0.0.1:9/oryx"}
    refused = run(bin_folder, "db", "status", "--root", root, env=shared)
    assert refused.returncode == 2 and "pip install 'oryxtui[postgres]'" in refused.stderr
    assert refused.stderr.count("\n") == 1 and "Traceback" not in refused.stderr
    meaning = init_workspace(tmp_path / "meaning")
    provider = extra if extra in ("local", "onnx") else "local"  # the two models in wheels
    meaning.config_path.write_text(f'[embedding]\nprovider = "{provider}"\n', encoding="utf-8")
    # Written at a fixed time: the time is part of the embedded line, and a model's similarity
    # moves with it. Twelve entries: from ten on, an answer must stand out of the others.
    texts = [FACTS[0], *ROUTINE_NOTES, "Ravi leads Falcon."]
    lines = [f"- [2026-12-05 16:00:00] {text}" for text in texts]
    (meaning.root / "memory" / "MEMORY.md").write_text(
        f"{CORE_HEADER}\n{ARCHIVAL_HEADER}\n" + "\n".join(lines) + "\n", encoding="utf-8"
    )
    asked = "which weekdays can we deploy?"
    recalled = run(bin_folder, "memory", "recall", "--root", str(meaning.root), asked)
    if extra != provider:
        assert recalled.returncode == 2 and "pip install 'oryxtui[local]'" in recalled.stderr
        assert recalled.stderr.count("\n") == 1 and "Traceback" not in recalled.stderr
    else:  # the model is in the wheel: meaning, offline, with nothing downloaded
        assert recalled.returncode == 0, recalled.stderr
        explained = run(
            bin_folder, "memory", "recall", "--json", "--explain", "--root", str(meaning.root),
            asked,
        )  # fmt: skip
        assert "Deploy window" in recalled.stdout and "Ravi" not in recalled.stdout, explained
        (hit,) = json.loads(explained.stdout)["hits"]
        semantic = hit["routes"]["semantic"]  # found by meaning too, over the model's floor
        assert semantic["rank"] == 1 and semantic["score"] >= 0.37, hit
    if extra == "mcp":  # a client's session on stdio, with nothing else installed
        assert stdio_tools(bin_folder, root) >= {"save_memory", "recall_memory", "show_memory"}
    if extra in (None, "local", "onnx", "mcp"):
        return
    port = free_port()
    command = "web" if extra == "web" else "serve"
    served.append(
        subprocess.Popen(
            [str(bin_folder / "oryxtui"), command, "--root", root, "--port", str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    )
    path = "/" if extra == "web" else "/api/v1/agents"
    page = answered(f"http://127.0.0.1:{port}{path}", time.monotonic() + 60)
    assert page.status_code == 200
    assert ("oryxtui" in page.text) if extra == "web" else page.json()["code"] == 0


def test_a_checkout_is_told_the_checkout_form(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the tests run on an install from this checkout
    assert install_command("web") == "pip install '.[web]'"
    monkeypatch.chdir("/")
    assert install_command("server") == f"pip install '{ROOT}[server]'"


def test_the_docs_extra_builds_the_site_alone(tmp_path: Path, wheel: Path) -> None:
    """`pip install '.[docs]'`, then `mkdocs build --strict`, as README and CONTRIBUTING say:
    the docs extra holds everything the build imports (issue 46); the made parts are made, and
    the pictures from the demo. Built as a contributor builds it — without `-q`, with which
    MkDocs counts no warning and `--strict` never fails (issue 58) — and no warning at all."""
    bin_folder = environment(tmp_path, wheel, "docs")
    site = tmp_path / "site"
    published = {**os.environ, "ORYXTUI_SITE_URL": "https://docs.example.org/oryxtui/"}
    built = subprocess.run(
        [str(bin_folder / "mkdocs"), "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
         "-d", str(site)],
        capture_output=True, text=True, timeout=600, cwd=ROOT, env=published,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr[-2000:]
    warnings = [line for line in built.stderr.splitlines() if line.startswith("WARNING")]
    assert not warnings and "Documentation built" in built.stderr, warnings
    assert (site / "facts" / "index.html").is_file()
    settings = (site / "configuration" / "index.html").read_text(encoding="utf-8")
    assert "archival_max_chars" in settings and "<!-- generated" not in settings
    # A missing page's links lead into the site wherever it is published (a sub-path here).
    missing = (site / "404.html").read_text(encoding="utf-8")
    assert 'href="/oryxtui/getting-started/"' in missing
    # The pictures are made by the build, from the demo with the quick start's model; the
    # README's, kept in the repository, is the same (else: `python scripts/docs_pictures.py`).
    images = site / "images"
    assert sorted(p.name for p in images.iterdir()) == [
        "dashboard.svg", "history.svg", "prompt.svg", "recall.svg"
    ]  # fmt: skip
    for name, shows in {"prompt.svg": "tokens", "recall.svg": "best&#160;first"}.items():
        picture = (images / name).read_text(encoding="utf-8")
        assert "ops-bot" in picture and shows in picture, name
    picture = (images / "dashboard.svg").read_text(encoding="utf-8")
    for shown in ("ops-bot", "pay-prod-hz", "not&#160;injected"):  # the demo, not a fixture
        assert shown in picture
    kept = (ROOT / "docs" / "images" / "dashboard.svg").read_text(encoding="utf-8")
    assert picture == kept, "docs/images/dashboard.svg is old: run python scripts/docs_pictures.py"
