"""Facts that change, the papercuts of issue 56: a save's answer always says what it may
replace (an empty list when nothing), the replace hint printed after a save works pasted where
it was printed, and recall with the replaced versions lists what is true now first."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from oryxtui.workspace import Workspace
from tests.support import agents_with_notes, cli, oryxtui_executable


def test_may_update_is_always_in_a_saves_answer(workspace: Workspace) -> None:
    agents_with_notes(workspace, "ops")
    said = cli("memory", "save", "a wholly new note", "--agent", "ops", "--json",
               "--root", str(workspace.root))  # fmt: skip
    assert said.code == 0 and json.loads(said.stdout)["may_update"] == []


def test_the_replace_hint_works_pasted_and_the_current_version_comes_first(
    workspace: Workspace, tmp_path: Path
) -> None:
    agents_with_notes(workspace, "ops")
    root = ("--root", str(workspace.root))
    for n in range(30):  # a memory that has lived a little: its words weigh by rarity
        assert cli("memory", "save", f"Routine check {n} of service s{n}: green.", "--agent",
                   "ops", *root).code == 0  # fmt: skip
    assert cli("memory", "save", "Staging host for ledger is stg-11.", "--agent", "ops",
               *root).code == 0  # fmt: skip
    saved = cli("memory", "save", "Staging host for ledger is now stg-14.", "--agent", "ops",
                *root)  # fmt: skip
    (hint,) = re.findall(r"`(oryxtui memory replace [^`]*)`", saved.stderr)
    assert f"--root {workspace.root}" in hint  # where the save was told to work
    pasted = subprocess.run(
        hint.replace("oryxtui", oryxtui_executable(), 1),
        shell=True, cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert pasted.returncode == 0, pasted.stderr
    found = cli("memory", "recall", "staging host ledger", "--include-replaced", "--json",
                "--agent", "ops", *root)  # fmt: skip
    hits = json.loads(found.stdout)["hits"]
    contents = [hit["content"] for hit in hits if "Staging" in hit["content"]]
    assert contents == [
        "Staging host for ledger is now stg-14.",
        "Staging host for ledger is stg-11.",
    ]


def test_a_save_names_what_is_related_when_asked(workspace: Workspace) -> None:
    agents_with_notes(workspace, "ops")
    root = ("--root", str(workspace.root))
    for n in range(12):
        assert cli("memory", "save", f"Routine check {n} of service s{n}: green.", "--agent",
                   "ops", *root).code == 0  # fmt: skip
    assert cli("memory", "save", "Staging host for ledger is stg-11.", "--agent", "ops",
               *root).code == 0  # fmt: skip
    said = cli("memory", "save", "Ledger's staging host: stg-14.", "--agent", "ops", "--json",
               "--related", *root)  # fmt: skip
    assert said.code == 0, said.stderr
    related = json.loads(said.stdout)["related"]
    assert 1 <= len(related) <= 5 and related[0]["content"] == "Staging host for ledger is stg-11."
    plain = cli("memory", "save", "Ledger's staging host: stg-15.", "--agent", "ops",
                "--related", *root)  # fmt: skip
    assert "related " in plain.stdout and "stg-14" in plain.stdout
    unasked = cli("memory", "save", "Ledger's staging host: stg-16.", "--agent", "ops",
                  "--json", *root)  # fmt: skip
    assert "related" not in json.loads(unasked.stdout)  # a plain save stays a plain save
