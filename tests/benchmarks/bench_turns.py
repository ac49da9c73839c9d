"""Recording what the model received (issue 27). Prints JSON.

Run: python tests/benchmarks/bench_turns.py

A 50-turn session through the real loop (offline model) over a memory block of about 4,000
characters: the time `TurnRecorder.record` adds per turn (target ≤ 1 ms) and the bytes it
stores per turn on average (target ≤ 2 KB), against the turn's own time measured in the same
run; once with plain turns, once with a save in every turn (the memory block changes each
time, so a new copy of it is stored every turn).
"""

from __future__ import annotations

import contextlib
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

TURNS = 50


def session(folder: Path, saving: bool) -> dict[str, object]:
    from oryxtui.agent.loop import AgentLoop
    from oryxtui.agent.sessions import SessionStore
    from oryxtui.config import Settings
    from oryxtui.database import connect
    from oryxtui.memory import MemoryService
    from oryxtui.workspace import init_workspace
    from tests.support import make_agent

    workspace = init_workspace(folder / ("saving" if saving else "plain"))
    lines = "".join(
        f"- [2026-07-21 09:{i:02d}:00] note {i}: a plausible line about deploys and pagers\n"
        for i in range(60)
    )
    (make_agent(workspace, "ops") / "MEMORY.md").write_text(f"## 核心记忆\n## 归档记忆\n{lines}")
    settings = Settings()
    memory = MemoryService.open(workspace, settings)
    loop = AgentLoop(workspace, settings, memory, SessionStore(workspace.db_path))
    block = len(memory.build_context("ops"))
    recording: list[float] = []
    record = loop.turns.record

    def timed(*args: object, **options: object) -> None:
        started = time.perf_counter()
        record(*args, **options)  # type: ignore[arg-type]
        recording.append((time.perf_counter() - started) * 1000)

    loop.turns.record = timed  # type: ignore[method-assign]
    turns: list[float] = []
    for i in range(TURNS):
        message = f"remember that fact number {i} holds" if saving else f"hello, turn {i}"
        started = time.perf_counter()
        events = list(loop.run("ops", message, "bench", "mei"))
        turns.append((time.perf_counter() - started) * 1000)
        assert events[-1].kind == "final", events[-1]
    with contextlib.closing(connect(workspace.db_path)) as db:
        ((parts,),) = db.execute(
            "SELECT sum(length(hash) + length(text)) FROM oryxtui_prompt_parts"
        )
        ((rows,),) = db.execute(
            "SELECT sum(length(messages) + length(tools) + length(session_id) + 60) "
            "FROM oryxtui_model_calls"
        )
        ((upstream,),) = db.execute("SELECT count(*) * 120 FROM llm_calls")
    calls = len(recording)
    return {
        "memory_block_chars": block,
        "calls": calls,
        "record_ms_per_turn_median": round(statistics.median(recording) * calls / TURNS, 3),
        "record_ms_per_call_median": round(statistics.median(recording), 3),
        "turn_ms_median": round(statistics.median(turns), 3),
        "bytes_per_turn": round((parts + rows + upstream) / TURNS),
    }


def run() -> dict[str, object]:
    with tempfile.TemporaryDirectory() as folder:
        return {
            "plain_turns": session(Path(folder), saving=False),
            "a_save_every_turn": session(Path(folder), saving=True),
        }


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
