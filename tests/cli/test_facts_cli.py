"""Facts that change at the command line (issue 45): `memory replace` by text or by an entry
there, what a save may replace (stderr and --json), the review list, `--as-of` and
`--include-replaced` — and the bad input each must answer in one sentence."""

from __future__ import annotations

import json

from oryxtui.config import Settings
from oryxtui.memory import MemoryService
from oryxtui.workspace import Workspace
from tests.support import Ticking, cli, make_agent, run_oryxtui

ROUTINE = [f"Routine check {n} of service s{n}: all green." for n in range(30)]


def lived(workspace: Workspace) -> MemoryService:
    """An agent whose memory was written in July: routine notes and one fact."""
    make_agent(workspace, "ops")
    service = MemoryService.open(workspace, Settings(), clock=Ticking())
    for text in ROUTINE:
        service.save("ops", text)
    service.save("ops", "Staging host for ledger is stg-11.internal.")
    return service


def test_a_save_says_what_it_may_replace_and_replace_by_it(workspace: Workspace) -> None:
    service = lived(workspace)
    root = ("--root", str(workspace.root), "--agent", "ops")
    saved = cli("memory", "save", *root, "Staging host for ledger is now stg-14.internal.")
    assert saved.code == 0
    (old,) = [e for e in service.snapshot("ops").archival if "stg-11" in e.content]
    (new,) = [e for e in service.snapshot("ops").archival if "stg-14" in e.content]
    assert f"this may replace {old.id}" in saved.stderr
    assert f"oryxtui memory replace --agent ops {old.id} --by {new.id}" in saved.stderr
    listed = cli("memory", "review", *root)
    assert "1 may replace an older entry" in listed.stdout and f"--by {new.id}" in listed.stdout
    data = json.loads(cli("memory", "review", *root, "--json").stdout)
    assert [(h["old"]["id"], h["new"]["id"]) for h in data["may_replace"]] == [(old.id, new.id)]
    done = cli("memory", "replace", *root, old.id, "--by", new.id, "--json")
    assert done.code == 0, done.stderr
    told = json.loads(done.stdout)
    assert told["replaced"]["id"] == old.id and told["entry"]["id"] == new.id
    assert "stg-11" not in workspace.memory_file("ops").read_text()
    assert cli("memory", "review", *root).stdout == "Nothing awaits review.\n"
    again = json.loads(
        cli("memory", "save", *root, "--json", "Primary region for ledger is eu-west-1.").stdout
    )
    assert again["may_update"] == []  # always said; nothing here


def test_replace_by_text_then_look_back(workspace: Workspace) -> None:
    service = lived(workspace)
    (old,) = [e for e in service.snapshot("ops").archival if "stg-11" in e.content]
    root = ("--root", str(workspace.root), "--agent", "ops")
    # The real executable, once: what a hook or a script runs.
    done = run_oryxtui("memory", "replace", *root, old.id, "Staging host for ledger is stg-20.")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Replaced in agent ops: ") and "  by (id " in done.stdout
    block = cli("memory", "show", *root).stdout
    assert "stg-20" in block and "stg-11" not in block
    july = cli("memory", "show", *root, "--as-of", "2026-07-01")  # the end of that day
    assert july.code == 0 and "stg-11" in july.stdout and "stg-20" not in july.stdout
    then = json.loads(cli("memory", "show", *root, "--as-of", "2026-07-01 09:20", "--json").stdout)
    assert then["as_of"] == "2026-07-01 09:20" and len(then["archival"]) == 10
    past = cli("memory", "recall", *root, "staging host", "--include-replaced")
    assert (
        "stg-11" in past.stdout
        and "(replaced on " in past.stdout
        and "now: Staging host" in past.stdout
    )
    found = json.loads(
        cli("memory", "recall", *root, "staging", "--as-of", "2026-07-01", "--json").stdout
    )
    assert [h["content"] for h in found["hits"]] == ["Staging host for ledger is stg-11.internal."]
    assert (
        found["hits"][0]["replaced"]["current"]["content"] == "Staging host for ledger is stg-20."
    )
    assert cli("memory", "recall", *root, "staging").stdout.count("\n") == 1  # what is true now


def test_bad_input_is_one_sentence_and_changes_nothing(workspace: Workspace) -> None:
    service = lived(workspace)
    before = workspace.memory_file("ops").read_bytes()
    (old,) = [e for e in service.snapshot("ops").archival if "stg-11" in e.content]
    root = ("--root", str(workspace.root), "--agent", "ops")
    for argv, code, said in [
        (("memory", "replace", *root, old.id), 2, "Give the text that is true now"),
        (("memory", "replace", *root, old.id, "x", "--by", old.id), 2, "Give the text"),
        (("memory", "replace", *root, "000000000000", "x"), 1, "No entry 000000000000"),
        (("memory", "replace", *root, old.id, old.content), 2, "the entry's own"),
        (("memory", "replace", *root, old.id, "--by", old.id), 2, "cannot replace itself"),
        (("memory", "show", *root, "--as-of", "yesterday"), 2, "is not a time"),
        (("memory", "show", *root, "--as-of", "2020-01-01"), 2, "starts at "),
        (
            (
                "memory",
                "recall",
                "--root",
                str(workspace.root),
                "--all",
                "x",
                "--as-of",
                "2026-07-01",
            ),
            2,
            "leave out --all",
        ),
    ]:
        result = cli(*argv)
        assert result.code == code, (argv, result.stderr)
        assert (
            said in result.stderr
            and result.stderr.count("\n") == 1
            and "Traceback" not in result.stderr
        )
    assert workspace.memory_file("ops").read_bytes() == before
