"""Digests (issue 15, part 2): what left the injected window summarised in one ordinary
archival entry; the covered range exact, nothing deleted, idempotent, read by upstream's rules
as an ordinary entry, the extractive summary deterministic. Real files and a real oryxos.db."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oryxtui.agent.loop import AgentLoop
from oryxtui.agent.sessions import SessionStore
from oryxtui.config import Settings
from oryxtui.memory import MemoryService
from oryxtui.memory.digest import DIGEST, extractive_summary, is_digest
from oryxtui.memory.document import parse
from oryxtui.memory.format import ARCHIVAL_HEADER, CORE_HEADER, Scope, entry_from_line
from oryxtui.workspace import Workspace
from tests import upstream_reference as upstream
from tests.llm_server import ScriptedLLM
from tests.support import fixed_clock, make_agent, run_oryxtui

FACTS = [
    "Deployed ledger v{} to pay-prod: canary then 100%, no errors.",
    "Mei Lin is on call until Monday 10:00; Ravi is secondary ({}).",
    "The fx-rates cache was warmed after incident {}.",
    "网关 gateway 的值班交接改到周一 {} 点。",
]


def filled(workspace: Workspace, backend: str, count: int = 120) -> MemoryService:
    """An agent whose archival memory is well past the injected window."""
    make_agent(workspace, "ops")
    settings = Settings.model_validate({"memory": {"backend": backend}})
    service = MemoryService.open(workspace, settings, clock=fixed_clock)
    if backend == "markdown":
        lines = [
            f"{CORE_HEADER}",
            "- [2026-07-01 08:00:00] core: the team is Falcon",
            ARCHIVAL_HEADER,
        ]
        lines += [
            f"- [2026-07-{1 + i // 24:02d} {i % 24:02d}:00:00] " + FACTS[i % 4].format(i)
            for i in range(count)
        ]
        workspace.memory_file("ops").write_text("\n".join(lines) + "\n")
    else:
        for i in range(count):
            service.save("ops", FACTS[i % 4].format(i), "archival")
    return service


@pytest.mark.parametrize("backend", ["markdown", "sqlite"])
def test_a_digest_covers_exactly_what_left_the_window_and_deletes_nothing(
    workspace: Workspace, backend: str
) -> None:
    service = filled(workspace, backend)
    before = service.snapshot("ops")
    outside = before.archival[: before.window_start]
    assert len(outside) >= 20
    preview = service.consolidate("ops", dry_run=True)
    assert preview is not None and service.snapshot("ops").archival == before.archival
    assert preview.uncovered_before == len(outside)
    digest = service.consolidate("ops")
    assert digest is not None and digest.content == preview.content
    after = service.snapshot("ops")
    # With the digest in place the window holds less: it covers what that pushes out too,
    # so every archival entry outside the window is covered — and nothing more.
    now_outside = [e for e in after.archival[: after.window_start] if not is_digest(e)]
    assert list(digest.covers) == now_outside and list(digest.covers[: len(outside)]) == outside
    assert service.uncovered("ops") == 0 and after.window_start < len(after.archival)
    assert list(after.archival[:-1]) == list(before.archival)  # nothing deleted or moved
    newest = after.archival[-1]
    assert is_digest(newest) and newest.time == "2026-07-22 09:30:00"
    match = DIGEST.match(newest.content)
    assert match is not None and int(match[3]) == len(digest.covers)
    covers = digest.covers
    assert match[1] == (covers[0].time or "")[:16] and match[2] == (covers[-1].time or "")[:16]
    assert len(newest.content) <= 1000 and list(after.core) == list(before.core)
    assert service.consolidate("ops") is None  # twice: one digest
    assert after.coverage.count == len(digest.covers)
    # The covered entries stay recallable.
    assert service.recall("ops", outside[0].content.split()[1]).hits


def test_the_next_digest_starts_where_the_last_stopped(workspace: Workspace) -> None:
    service = filled(workspace, "markdown", 80)
    first = service.consolidate("ops")
    assert first is not None
    for i in range(40):
        service.save("ops", f"later fact number {i} about the settlement batch", "archival")
    second = service.consolidate("ops")
    assert second is not None
    assert second.covers[0] == service.snapshot("ops").archival[len(first.covers)]
    assert not set(e.line for e in first.covers) & set(e.line for e in second.covers)
    assert not any(is_digest(e) for e in second.covers)
    # Each digest covers from the first entry: the newest carries the gist of all of them,
    # so the first may leave the window in its turn.
    assert second.count == len(first.covers) + len(second.covers)
    assert f"({second.count} entries, extractive)" in second.content
    snapshot = service.snapshot("ops")
    assert service.uncovered("ops") == 0 and snapshot.coverage.count == second.count


def test_upstream_reads_a_digest_as_an_ordinary_archival_entry(workspace: Workspace) -> None:
    service = filled(workspace, "markdown")
    service.consolidate("ops")
    text = workspace.memory_file("ops").read_text()
    document = parse(text)
    assert text.count(ARCHIVAL_HEADER) == 1 and text.count(CORE_HEADER) == 1
    line = document.archival_lines[-1]
    assert line.startswith("- [2026-07-22 09:30:00] 摘要 ")  # upstream's entry format
    assert "\n" not in line and entry_from_line(line, Scope.ARCHIVAL).time is not None
    assert line in service.build_context("ops")  # and it is injected
    # Upstream's own reading (a line-for-line port of its MemoryService): an archival entry,
    # recalled by its words, injected by its load().
    assert upstream.archival_entries(text)[-1] == line
    assert line in upstream.recall_by_keyword(text, "摘要")
    assert line in upstream.load(text)


def test_the_extractive_summary_is_deterministic_and_fits(workspace: Workspace) -> None:
    service = filled(workspace, "markdown")
    covers = service.consolidate("ops", dry_run=True).covers  # type: ignore[union-attr]
    once = extractive_summary(covers, 500)
    assert once == extractive_summary(list(covers), 500) and 0 < len(once) <= 500
    assert once.count("Deployed ledger") <= 1  # near-repeats are said once


def test_consolidate_from_the_cli(tmp_path: Path) -> None:
    assert run_oryxtui("demo", str(tmp_path / "d"), "--no-open").returncode == 0
    root = str(tmp_path / "d")
    memory_file = tmp_path / "d" / ".oryxos" / "agents" / "ops-bot" / "MEMORY.md"
    before = memory_file.read_text()
    dry = run_oryxtui("memory", "consolidate", "--root", root, "--agent", "ops-bot", "--dry-run")
    assert dry.returncode == 0 and "Would write a digest of" in dry.stdout
    assert "It covers:" in dry.stdout and memory_file.read_text() == before
    done = run_oryxtui("memory", "consolidate", "--root", root, "--agent", "ops-bot", "--json")
    digest = json.loads(done.stdout)["digest"]
    assert digest["method"] == "extractive" and "(extractive" not in before
    assert memory_file.read_text().startswith(before.rstrip("\n"))
    again = run_oryxtui("memory", "consolidate", "--root", root, "--agent", "ops-bot")
    assert again.returncode == 0 and "Nothing to consolidate" in again.stdout


def runner_for(workspace: Workspace, llm_url: str | None, min_entries: int = 5) -> AgentLoop:
    settings = Settings.model_validate(
        {
            "memory": {"consolidate": {"auto": True, "min_entries": min_entries}},
            "llm": {"base_url": llm_url, "model": "m", "timeout_seconds": 5} if llm_url else {},
        }
    )
    memory = MemoryService.open(workspace, settings, clock=fixed_clock)
    return AgentLoop(
        workspace, settings, memory, SessionStore(workspace.db_path, clock=fixed_clock)
    )


def test_after_a_turn_the_agents_llm_writes_the_digest(workspace: Workspace) -> None:
    filled(workspace, "markdown")
    summary = "Ledger deploys went cleanly; Mei Lin is on call with Ravi as secondary."
    with ScriptedLLM([{"text": "Noted."}, {"text": summary}]) as llm:
        events = list(runner_for(workspace, llm.base_url).run("ops", "hi", "test", "mei"))
    assert events[-1].kind == "final"
    instruction = llm.requests[1]["messages"][0]["content"]
    assert "Summarise these memory entries" in instruction
    assert "Deployed ledger v0" in llm.requests[1]["messages"][1]["content"]
    newest = MemoryService.open(workspace, Settings()).snapshot("ops").archival[-1]
    assert is_digest(newest) and newest.content.endswith("): " + summary)
    assert "extractive" not in newest.content
    change = MemoryService.open(workspace, Settings()).history("ops")[0]
    assert (change.op, change.actor, change.session) == ("digest", "agent", "test:mei:ops")


def test_a_dead_llm_leaves_an_extractive_digest_and_a_warning(workspace: Workspace) -> None:
    filled(workspace, "markdown")
    script = [{"text": "Noted."}, {"status": 503, "text": "overloaded"}]
    with ScriptedLLM(script) as llm:  # the summary is refused
        events = list(runner_for(workspace, llm.base_url).run("ops", "hi", "test", "mei"))
    assert events[-1].kind == "final"
    warnings = [e.text for e in events if e.kind == "warning"]
    assert any("extractive summary was used" in w for w in warnings)
    newest = MemoryService.open(workspace, Settings()).snapshot("ops").archival[-1]
    assert is_digest(newest) and "entries, extractive): " in newest.content


def test_the_offline_model_consolidates_only_past_min_entries(workspace: Workspace) -> None:
    filled(workspace, "markdown", 60)
    outside = MemoryService.open(workspace, Settings()).snapshot("ops").window_start
    runner = runner_for(workspace, None, min_entries=outside + 1)
    list(runner.run("ops", "hi", "test", "mei"))
    assert not any(is_digest(e) for e in runner.memory.snapshot("ops").archival)
    runner = runner_for(workspace, None, min_entries=outside)
    list(runner.run("ops", "hi", "test", "mei"))
    assert is_digest(runner.memory.snapshot("ops").archival[-1])


def test_an_entry_that_only_looks_like_a_digest_covers_nothing(workspace: Workspace) -> None:
    filled(workspace, "markdown")
    service = MemoryService.open(workspace, Settings())
    # An agent (or a person) saves text in a digest's shape: it is an ordinary entry.
    service.save(
        "ops", "摘要 2026-01-01 00:00 … 2026-01-02 00:00 (999999 entries): all done", "archival"
    )
    snapshot = service.snapshot("ops")
    assert snapshot.digests == frozenset() and snapshot.covered == frozenset()
    digest = service.consolidate("ops")
    assert digest is not None and digest.covers  # consolidation still works for this agent
    assert service.snapshot("ops").digests  # and the one oryxtui wrote counts


def test_the_same_entries_give_the_same_digest_in_every_process(workspace: Workspace) -> None:
    make_agent(workspace, "ops")
    # A hundred entries that score the same (words seen 1, 2, 3 and 4 times), more than fit:
    # which are chosen must not depend on the order a set gives their words in.
    texts = [f"solo{k} twin{k} trio{k} quad{k}" for k in range(100)]
    for k in range(100):
        texts += [f"twin{k} trio{k} quad{k} pad", f"trio{k} quad{k} pad pad2"]
        texts.append(f"quad{k} pad pad2 pad3")
    lines = [
        f"- [2026-07-{1 + i // 1440:02d} {i // 60 % 24:02d}:{i % 60:02d}:00] {text}"
        for i, text in enumerate(texts)
    ]
    workspace.memory_file("ops").write_text(
        f"{CORE_HEADER}\n{ARCHIVAL_HEADER}\n" + "\n".join(lines) + "\n"
    )
    digests = set()
    for seed in ("1", "2", "3", "4"):
        result = run_oryxtui(
            "memory",
            "consolidate",
            "--root",
            str(workspace.root),
            "--agent",
            "ops",
            "--dry-run",
            "--json",
            env={"PYTHONHASHSEED": seed},
        )
        assert result.returncode == 0, result.stderr
        digests.add(json.loads(result.stdout)["digest"]["content"])
    assert len(digests) == 1


def test_a_dry_run_says_what_is_uncovered_and_a_real_run_leaves_nothing(tmp_path: Path) -> None:
    assert run_oryxtui("demo", str(tmp_path / "d"), "--no-open").returncode == 0
    root = ("--root", str(tmp_path / "d"), "--agent", "ops-bot")
    dry = run_oryxtui("memory", "consolidate", *root, "--dry-run")
    assert dry.returncode == 0 and "not covered by a digest" in dry.stdout
    real = run_oryxtui("memory", "consolidate", *root, "--json")
    written = json.loads(real.stdout)["digest"]
    assert written["count"] >= written["uncovered_before"] > 0
    again = run_oryxtui("memory", "consolidate", *root, "--dry-run")
    assert "every archival entry outside the injected window is covered" in again.stdout
    shown = json.loads(run_oryxtui("memory", "show", *root, "--json").stdout)
    outside = [e for e in shown["archival"][: shown["window_start"]] if "摘要" not in e["content"]]
    assert len(outside) == written["count"]
