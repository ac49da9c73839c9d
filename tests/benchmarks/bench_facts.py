"""Facts that change: is what is true now what recall and the prompt give? Prints JSON.

Run: python tests/benchmarks/bench_facts.py [--provider none|local|onnx ...] [--split test]
     [--quick]

The set (`quality_facts.py`, self-made by two generators of different style): 68 chains of 2–4
versions of a fact among 668 other entries (routine logs, and look-alikes that share a fact's
subject words but say something else), saved in time order. Two runs of the same saves:

- **saves only** (what an agent does today): each entry saved with the check of what it may
  update, and what it is related to. `may_update` is judged on the updates (a chain's 2nd,
  3rd, 4th version): named when its previous version is among the suggestions; a suggestion is
  right when it names an earlier version of the same chain (every other, on any save, is
  wrong): precision. `related` (up to 5, for a calling model to judge): how often the previous
  version is among them, and the most any save named.
- **with replacements**: each later version replaces the one before (`replace`).

After each run, every chain's question is asked as recall is (default recall, with each
provider): `current_first` — the first of the chain's versions among the hits is the current
one (of the questions where one is found); `current_at_10` — the current version is among the
first 10 hits; `outdated_in_prompt` — versions no longer true in the injected memory block (also
on a small memory of the facts alone, whose window holds most of it).
Chains alternate between tune and test halves: `--split test` reports the held-out half (the
thresholds of `oryxtui/memory/updates.py` were set on the tune half).

Speed, in process on a memory of 10,000 entries: a save with the check, the check alone and a
save without it (median of 50, same run); the check after another program appended a line (it
reads the memory again and indexes only what is new); the memory as of a time from a history of
10,000 records.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from quality_facts import Chain, Save, build
from timing import summarize

from oryxtui.config import Settings
from oryxtui.extras import missing
from oryxtui.memory import MemoryService
from oryxtui.workspace import init_workspace

START = datetime(2026, 3, 2, 9, 0, 0)


class Clock:
    """One minute later at every reading: saves in time order, each with its own time."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        self.now += timedelta(minutes=1)
        return self.now


def service_for(root: Path, provider: str, clock: Clock) -> MemoryService:
    embedding = {} if provider == "none" else {"provider": provider}
    settings = Settings.model_validate({"embedding": embedding})
    return MemoryService.open(init_workspace(root), settings, clock=clock)


def run_set(
    root: Path, provider: str, chains: list[Chain], saves: list[Save], replacing: bool, split: str
) -> dict[str, Any]:
    clock = Clock()
    memory = service_for(root, provider, clock)
    agent = "facts"
    (memory_root := root / ".oryxos" / "agents" / agent).mkdir(parents=True)
    (memory_root / "AGENT.md").write_text("---\nname: facts\n---\n", encoding="utf-8")
    ids: dict[tuple[int, int], str] = {}
    lines: dict[str, tuple[int, int]] = {}  # an entry's id → (chain, version)
    named = updates = right = suggested = near = most = 0
    for save in saves:
        counted = split == "all" or save.split == split
        if replacing and save.chain is not None and save.version > 0:
            entry = memory.replace(agent, ids[(save.chain, save.version - 1)], save.text)[1]
        else:
            saved = memory.save_checked(agent, save.text, related=True)
            entry = saved.entry
            if counted:
                for update in saved.may_update:
                    suggested += 1
                    chain = lines.get(update.entry.id)
                    right += int(chain is not None and chain[0] == save.chain)
                if save.chain is not None and save.version > 0:
                    updates += 1
                    previous = ids[(save.chain, save.version - 1)]
                    named += int(any(u.entry.id == previous for u in saved.may_update))
                    near += int(any(r.entry.id == previous for r in saved.related))
                most = max(most, len(saved.related))
        if save.chain is not None:
            ids[(save.chain, save.version)] = entry.id
            lines[entry.id] = (save.chain, save.version)
    memory.sync_index(agent)
    first = found = at_10 = asked = 0
    block = memory.build_context(agent)
    outdated = sum(
        1
        for chain in chains
        for version in chain.versions[:-1]
        if (split == "all" or chain.split == split) and version in block
    )
    for chain in chains:
        if split != "all" and chain.split != split:
            continue
        asked += 1
        current = ids[(chain.number, len(chain.versions) - 1)]
        hits = [hit.entry.id for hit in memory.recall(agent, chain.question).hits]
        in_chain = [i for i in hits if lines.get(i, (-1,))[0] == chain.number]
        if in_chain:
            found += 1
            first += int(in_chain[0] == current)
        at_10 += int(current in hits[:10])
    report: dict[str, Any] = {
        "questions": asked,
        "current_first": round(100 * first / max(found, 1), 1),
        "current_first_of_found": f"{first}/{found}",
        "current_at_10": round(100 * at_10 / max(asked, 1), 1),
        "outdated_in_prompt": outdated,
    }
    if not replacing:
        report["may_update"] = {
            "updates": updates,
            "previous_named": round(100 * named / max(updates, 1), 1),
            "suggestions": suggested,
            "precision": round(right / suggested, 3) if suggested else None,
        }
        report["related"] = {
            "updates": updates,
            "previous_among_related": round(100 * near / max(updates, 1), 1),
            "most_named": most,
        }
    return report


def speed(root: Path) -> dict[str, Any]:
    """A save with the check, the check alone and a save without it on 10,000 entries; the
    memory as of a time from 10,000 history records."""
    clock = Clock()
    memory = service_for(root, "none", clock)
    agent = "big"
    folder = root / ".oryxos" / "agents" / agent
    folder.mkdir(parents=True)
    _, saves = build(routine=10_000)
    texts = [s.text for s in saves if s.chain is None][:10_000]
    stamps = [(START + timedelta(minutes=i)).strftime("%Y-%m-%d %H:%M:%S") for i in range(10_000)]
    lines = [f"- [{stamp}] {text}" for stamp, text in zip(stamps, texts, strict=True)]
    (folder / "MEMORY.md").write_text(
        "## 核心记忆\n## 归档记忆\n" + "\n".join(lines) + "\n", encoding="utf-8"
    )
    records = [
        {"n": 1, "time": START.isoformat(), "op": "baseline", "actor": "outside"},
        *(
            {
                "n": n,
                "time": (START + timedelta(minutes=n)).isoformat(),
                "op": "save",
                "actor": "cli",
                "after": [{"scope": "archival", "line": line}],
            }
            for n, line in enumerate(lines, 2)
        ),
    ]
    (folder / "MEMORY.md.journal").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8"
    )
    # As of a moment, from the 10,000 records (a write compacts a history past 7,500 records
    # to the newest 5,000, the versions replaced kept in its baseline: read it before that).
    as_of = []
    for minutes in (2_500, 5_000, 7_500, 9_999, 1_000):
        started = time.perf_counter()
        memory.as_of_time(agent, START + timedelta(minutes=minutes))
        as_of.append((time.perf_counter() - started) * 1000)
    clock.now = START + timedelta(days=30)
    memory.may_update(agent, "warm the index")  # what a running process has made already
    checked, plain, check = [], [], []
    for n in range(50):
        text = f"On-call for ledger this week: person {n}."
        started = time.perf_counter()
        memory.save_checked(agent, text)
        checked.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        memory.save(agent, f"Nightly backup number {n} finished.")
        plain.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        memory.may_update(agent, f"Staging for ledger runs on host stg-{n}.internal.")
        check.append((time.perf_counter() - started) * 1000)
    # Another program appended a line: the next check reads the memory, indexes only that.
    outside = []
    memory_file = folder / "MEMORY.md"
    for n in range(10):
        with memory_file.open("a", encoding="utf-8") as file:
            file.write(f"- [2026-05-01 00:00:{n:02d}] written by another program {n}\n")
        started = time.perf_counter()
        memory.may_update(agent, "Staging for ledger runs on host stg-9.internal.")
        outside.append((time.perf_counter() - started) * 1000)
    return {
        "entries": 10_000,
        "history_records": len(records),
        "save_with_check": summarize(checked),
        "save_without_check": summarize(plain),
        "check_alone": summarize(check),
        "check_after_another_writer": summarize(outside),
        "as_of_10k": summarize(as_of),
    }


def run(
    providers: list[str] | None = None, split: str = "test", quick: bool = False
) -> dict[str, Any]:
    providers = providers or ["none", "local", *([] if missing("onnx") else ["onnx"])]
    chains, saves = build()
    report: dict[str, Any] = {
        "set": {
            "chains": len(chains),
            "versions": sum(len(c.versions) for c in chains),
            "other_entries": sum(1 for s in saves if s.chain is None),
            "split": split,
        }
    }
    with tempfile.TemporaryDirectory() as folder:
        for provider in providers:
            place = Path(folder) / provider
            report[provider] = {
                "saves_only": run_set(place / "saves", provider, chains, saves, False, split),
                "with_replacements": run_set(
                    place / "replace", provider, chains, saves, True, split
                ),
            }
        # A small memory (the facts alone): its window holds most of it, old versions too.
        facts = [save for save in saves if save.chain is not None]
        small = Path(folder) / "small"
        report["small_memory_outdated_in_prompt"] = {
            "saves_only": run_set(small / "saves", "none", chains, facts, False, "all")[
                "outdated_in_prompt"
            ],
            "with_replacements": run_set(small / "replace", "none", chains, facts, True, "all")[
                "outdated_in_prompt"
            ],
        }
        if not quick:
            report["speed"] = speed(Path(folder) / "speed")
    return report


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--provider", action="append", choices=["none", "local", "onnx"])
    parser.add_argument("--split", choices=["all", "tune", "test"], default="test")
    parser.add_argument("--quick", action="store_true", help="no speed figures")
    options = parser.parse_args()
    print(json.dumps(run(options.provider, options.split, options.quick), indent=2))


if __name__ == "__main__":
    main()
