"""The documentation is held to the program, in the spirit of sqlite-utils' tested docs (that
the site builds with `mkdocs build --strict`, its pictures made from the demo, is a system test
in tests/system/test_extras.py, from an environment with the docs extra alone): every shell
example that shows its output (a `console` block) runs against a fresh demo workspace and
prints what the page shows (times and entry ids may differ); every `oryxtui` command of a
recipe (an `sh` block) is one the argument parser takes; the configuration example is a valid
config.toml; and the made parts (settings, endpoints, modules, layers) cover what they list."""

from __future__ import annotations

import re
import shlex
import sys
import tomllib
from pathlib import Path

import pytest

from tests.support import run_oryxtui

ROOT = Path(__file__).parents[2]
PAGES = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md", ROOT / "CONTRIBUTING.md"]
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.M | re.S)
TIME = re.compile(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d(:\d\d)?")
ENTRY_ID = re.compile(r"\b[0-9a-f]{12}\b")

sys.path.insert(0, str(ROOT / "scripts"))
import docs_hooks  # noqa: E402 (the site's own generators)


def blocks(page: Path, language: str) -> list[str]:
    return [body for kind, body in BLOCK.findall(page.read_text()) if kind == language]


def normal(text: str) -> str:
    text = ENTRY_ID.sub("<id>", TIME.sub("<time>", text))
    return "\n".join(line.rstrip() for line in text.rstrip("\n").split("\n"))


def examples(page: Path) -> list[tuple[str, str]]:
    """(command, the output shown after it) of the page's console blocks, in order."""
    found: list[tuple[str, str]] = []
    for body in blocks(page, "console"):
        for chunk in re.split(r"^\$ ", body, flags=re.M)[1:]:
            command, _, shown = chunk.partition("\n")
            found.append((command, shown))
    return found


@pytest.mark.parametrize(
    "page", [p for p in PAGES if examples(p)], ids=lambda p: p.relative_to(ROOT).as_posix()
)
def test_each_example_prints_what_the_page_shows(page: Path, tmp_path: Path) -> None:
    made = run_oryxtui("demo", "--no-open", cwd=tmp_path)  # ./oryx-demo, as the quick start
    assert made.returncode == 0, made.stderr
    for command, shown in examples(page):
        argv = shlex.split(command)
        assert argv[0] == "oryxtui", command
        ran = run_oryxtui(*argv[1:], cwd=tmp_path, env={"LOGNAME": "mei", "USER": "mei"})
        assert ran.returncode == 0, (command, ran.stderr)
        assert normal(ran.stdout + ran.stderr) == normal(shown), command


def recipe_commands() -> list[tuple[str, list[str]]]:
    """Every `oryxtui` command of the pages' sh blocks: (page, its arguments)."""
    found = []
    for page in PAGES:
        for body in blocks(page, "sh"):
            for line in body.splitlines():
                for part in re.split(r"&&|;", line.split(" # ")[0]):
                    words = shlex.split(part.replace("$(", "(").lstrip("$ "), posix=True)
                    while words and re.match(r"^[A-Z_]+=", words[0]):
                        words = words[1:]  # VARIABLE=value before the command
                    if words and Path(words[0]).name == "oryxtui":
                        found.append((page.name, words[1:]))
    return found


def test_each_recipe_command_is_one_the_program_takes() -> None:
    from oryxtui.cli import build_parser

    found = recipe_commands()
    assert len(found) >= 15  # the recipes of serving, attaching, the shared database, recall…
    for page, argv in found:
        try:
            build_parser(argv).parse_args(argv)
        except SystemExit:
            pytest.fail(f"{page}: `oryxtui {shlex.join(argv)}` is not a command oryxtui takes")


def test_the_configuration_example_is_a_valid_config() -> None:
    from oryxtui.config import Settings

    (example, *_) = blocks(ROOT / "docs" / "configuration.md", "toml")
    Settings.model_validate(tomllib.loads(example))  # a misspelt key would be refused


def test_the_made_parts_cover_what_they_list() -> None:
    from oryxtui.config import Settings

    package = ROOT / "oryxtui"
    files = [p for p in package.rglob("*.py") if "__pycache__" not in p.parts]
    listed = docs_hooks.modules()
    assert len(listed) == len(files) and all(said for _, said in listed)  # each with its line
    reference = docs_hooks.settings_reference()
    for section, model in docs_hooks._sections(Settings, ""):
        assert f"### `[{section}]`" in reference
        for key in model.model_fields:
            assert f"| `{key}` |" in reference or f"`[{section}.{key}]`" in reference
    assert "| POST | `/api/v1/agents/{name}/memory` |" in docs_hooks.endpoints()
    assert "places" in docs_hooks.layers()


def test_the_key_table_names_every_binding_id() -> None:
    """docs/dashboard.md's key table lists each binding id `[tui.keymap]` takes."""
    from oryxtui.config import BINDING_IDS

    table = (ROOT / "docs" / "dashboard.md").read_text()
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    named = {name for row in rows for name in re.findall(r"`([\w.-]+)`", row.split(" | ")[-1])}
    assert set(BINDING_IDS) <= named, sorted(set(BINDING_IDS) - named)
