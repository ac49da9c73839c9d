"""The CLI as hooks and scripts call it: whole `oryxtui memory save` / `memory recall` processes
on the demo workspace (recall with the demo's embedder — `onnx` where its extra is installed —
and with `local` and none, a question by meaning each), a save with and without the check of
what it may replace (`[memory] may_update`) on the demo and on 10,000 entries, a save after
3,000 saves (a long history), and `oryxtui sessions search` over 10,000 and 100,000 past
turns, next to a script that imports pydantic and builds one model
(and `python -c "import pydantic"`), measured in the same run.

Run: python tests/benchmarks/bench_cli.py [--runs N] [--episodes 10000,100000]
The commands run interleaved (one of each per round), after a warm-up that compiles bytecode
and lets the first search index the turns (what any later command finds done).
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from timing import summarize

# Every command runs with its bytecode cached, as an installed oryxtui does (pip compiles it):
# where PYTHONDONTWRITEBYTECODE is set the warm-up would cache nothing, and each run would
# compile every module of oryxtui again — and the baseline, installed, none of pydantic's.
ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def _run(command: list[str], cpu: list[float] | None = None) -> float:
    """The command's wall time (ms); its CPU time (user + system, ms) added to `cpu`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, capture_output=True, check=True, env=ENV)
    wall = (time.perf_counter() - started) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if cpu is not None:
        cpu.append(1000 * (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime))
    return wall


ONE_MODEL = """
from pydantic import BaseModel
class Entry(BaseModel):
    content: str
    scope: str = "archival"
Entry(content="benchmark entry")
"""
MEANING = "did we have to undo a bad release"  # asked by meaning: no entry holds its words
WORDS = [f"{a}{b}" for a in ("ka", "lo", "mi", "ne", "pu", "ro", "si", "tu") for b in range(500)]


def fill_sessions(root: Path, episodes: int) -> None:
    """`episodes` finished turns of the agent ops-bot, in sessions of 100 turns, each turn with
    a few words of a 4,000-word vocabulary (so a question matches some, not all)."""
    import random

    from oryxtui.agent.messages import Message
    from oryxtui.agent.sessions import SessionStore

    chooser = random.Random(7)
    sessions = SessionStore(root / "oryxos.db")
    for number in range(episodes // 100):
        session = sessions.load(f"cli:u{number}:ops-bot", "ops-bot", "cli", f"u{number}")
        messages = []
        for turn in range(100):
            words = " ".join(chooser.sample(WORDS, 6))
            messages += [
                Message("user", f"what about {words} in turn {turn}?"),
                Message("assistant", f"The {words} are settled; nothing else changed."),
            ]
        sessions.append(session, *messages)


def fill_memory(path: Path, size: int) -> None:
    """`size` archival entries of routine notes in the agent's MEMORY.md, after what is there."""
    lines = [
        f"- [2026-0{1 + i // 40_000}-01 00:00:00] note {i}: checks of service s{i % 97} "
        f"passed in {i % 50} s"
        for i in range(size)
    ]
    path.write_text(path.read_text() + "\n".join(lines) + "\n", encoding="utf-8")


def fill_by_saves(root: Path, saves: int) -> None:
    """`saves` notes saved one by one through oryxtui into the agent ops-bot's memory: a memory
    whose history is long (each save is one of its records)."""
    from oryxtui.config import load_settings
    from oryxtui.memory import MemoryService
    from oryxtui.workspace import find_workspace

    workspace = find_workspace(root)
    memory = MemoryService.open(workspace, load_settings(workspace.config_path))
    for i in range(saves):
        memory.save("ops-bot", f"routine note {i}: service s{i % 50} checked in {i % 300} ms")


def run(runs: int = 15, episodes: tuple[int, ...] = (10_000, 100_000)) -> dict[str, object]:
    oryxtui = str(Path(sys.executable).parent / "oryxtui")
    with tempfile.TemporaryDirectory() as folder:
        demo = Path(folder) / "demo"
        subprocess.run([oryxtui, "demo", str(demo), "--no-open"], capture_output=True, check=True)
        where = ["--root", str(demo), "--agent", "ops-bot"]
        commands = {
            "baseline_pydantic_model": [sys.executable, "-c", ONE_MODEL],
            "baseline_import_pydantic": [sys.executable, "-c", "import pydantic"],
            "memory_save": [oryxtui, "memory", "save", *where, "benchmark entry"],
            "memory_recall": [oryxtui, "memory", "recall", *where, "deploy"],
            "memory_recall_meaning": [oryxtui, "memory", "recall", *where, MEANING],
            "help": [oryxtui, "--help"],
        }
        for provider in ("local", "none"):  # the same demo with another embedder, or none
            other = Path(folder) / f"demo-{provider}"
            shutil.copytree(demo, other)
            config = other / ".oryxos" / "config.toml"
            text = re.sub(r"\n\[embedding\]\nprovider = \"\w+\"\n", "\n", config.read_text())
            if provider != "none":
                text += f'\n[embedding]\nprovider = "{provider}"\n'
            config.write_text(text)
            at = ["--root", str(other), "--agent", "ops-bot"]
            subprocess.run([oryxtui, "memory", "index", *at], capture_output=True, check=False)
            commands[f"memory_recall_meaning_{provider}"] = [
                oryxtui,
                "memory",
                "recall",
                *at,
                MEANING,
            ]
        # A save checks what it may replace: the same save without the check, on the demo and
        # on a memory of 10,000 entries (a fresh process reads and weighs every entry).
        for size in (0, 10_000):
            for checked in (True, False):
                home = Path(folder) / f"save-{size}-{checked}"
                shutil.copytree(demo, home)
                config = home / ".oryxos" / "config.toml"
                config.write_text(
                    config.read_text() + f"\n[memory]\nmay_update = {str(checked).lower()}\n"
                )
                if size:
                    fill_memory(home / ".oryxos" / "agents" / "ops-bot" / "MEMORY.md", size)
                name = "memory_save" + (f"_{size // 1000}k" if size else "")
                name += "" if checked else "_unchecked"
                at = ["--root", str(home), "--agent", "ops-bot"]
                commands[name] = [oryxtui, "memory", "save", *at, "benchmark entry"]
        # A memory of the same size after 3,000 saves: its history is 3,000 records long.
        home = Path(folder) / "save-history"
        shutil.copytree(demo, home)
        fill_by_saves(home, 3000)
        at = ["--root", str(home), "--agent", "ops-bot"]
        commands["memory_save_after_3k_saves"] = [oryxtui, "memory", "save", *at, "benchmark entry"]
        for size in episodes:
            root = Path(folder) / f"turns-{size}"
            subprocess.run(
                [oryxtui, "demo", str(root), "--no-open"], capture_output=True, check=True
            )
            home = root / ".oryxos"  # the workspace `oryxtui demo` made
            (home / "config.toml").write_text("")  # no embedder: the words alone
            fill_sessions(home, size)
            query = f"{WORDS[11]} {WORDS[2222]} settled"
            at = ["--root", str(root), "--agent", "ops-bot"]
            commands[f"sessions_search_{size}"] = [oryxtui, "sessions", "search", *at, query]
        for command in commands.values():  # warm-up: bytecode compiled, files cached
            _run(command)
        samples: dict[str, list[float]] = {name: [] for name in commands}
        cpu: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(runs):
            for name, command in commands.items():
                samples[name].append(_run(command, cpu[name]))
    report: dict[str, object] = {name: summarize(times) for name, times in samples.items()}
    baseline = report["baseline_pydantic_model"]["median_ms"]  # type: ignore[index]
    save = report["memory_save"]["median_ms"]  # type: ignore[index]
    for name in [n for n in samples if n.startswith("memory_recall")]:
        report[f"{name}_vs_memory_save"] = round(report[name]["median_ms"] / save, 2)  # type: ignore[index]
    for name in ("memory_save", "memory_recall"):
        report[f"{name}_vs_pydantic_model"] = round(report[name]["median_ms"] / baseline, 2)  # type: ignore[index]
    for name in ("memory_save", "memory_save_10k"):
        plain = report[f"{name}_unchecked"]["median_ms"]  # type: ignore[index]
        report[f"{name}_vs_unchecked"] = round(report[name]["median_ms"] / plain, 2)  # type: ignore[index]
    # What the check of a big memory costs a whole process, in CPU (issue 56: ≤ 1.3×).
    cpu_of = {name: summarize(cpu[name])["median_ms"] for name in cpu}
    for name in ("memory_save", "memory_save_10k", "baseline_pydantic_model"):
        report[f"{name}_cpu_ms"] = cpu_of[name]
    for name in ("memory_save_10k", "memory_save_after_3k_saves"):
        report[f"{name}_vs_memory_save_cpu"] = round(cpu_of[name] / cpu_of["memory_save"], 2)
    report["memory_save_vs_pydantic_model_cpu"] = round(
        cpu_of["memory_save"] / cpu_of["baseline_pydantic_model"], 2
    )
    save = report["memory_save"]["median_ms"]  # type: ignore[index]
    for size in episodes:
        search = report[f"sessions_search_{size}"]["median_ms"]  # type: ignore[index]
        report[f"sessions_search_{size}_vs_memory_save"] = round(search / save, 2)
    return report


if __name__ == "__main__":
    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 15
    sizes = (10_000, 100_000)
    if "--episodes" in sys.argv:
        given = sys.argv[sys.argv.index("--episodes") + 1]
        sizes = tuple(int(n) for n in given.split(",") if n.strip())
    print(json.dumps(run(runs, sizes), indent=2))
