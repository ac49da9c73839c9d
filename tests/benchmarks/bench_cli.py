"""The CLI as hooks and scripts call it: whole `oryxtui memory save` / `memory recall` processes
on the demo workspace (recall with the demo's embedder — `onnx` where its extra is installed —
and with `local` and none, a question by meaning each), and `oryxtui sessions search` over
10,000 and 100,000 past turns, next to a script that imports pydantic and builds one model
(and `python -c "import pydantic"`), measured in the same run.

Run: python tests/benchmarks/bench_cli.py [--runs N] [--episodes 10000,100000]
The commands run interleaved (one of each per round), after a warm-up that compiles bytecode
and lets the first search index the turns (what any later command finds done).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from timing import summarize


def _run(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, capture_output=True, check=True)
    return (time.perf_counter() - started) * 1000


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
        for _ in range(runs):
            for name, command in commands.items():
                samples[name].append(_run(command))
    report: dict[str, object] = {name: summarize(times) for name, times in samples.items()}
    baseline = report["baseline_pydantic_model"]["median_ms"]  # type: ignore[index]
    save = report["memory_save"]["median_ms"]  # type: ignore[index]
    for name in [n for n in samples if n.startswith("memory_recall")]:
        report[f"{name}_vs_memory_save"] = round(report[name]["median_ms"] / save, 2)  # type: ignore[index]
    for name in ("memory_save", "memory_recall"):
        report[f"{name}_vs_pydantic_model"] = round(report[name]["median_ms"] / baseline, 2)  # type: ignore[index]
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
