"""Prompt build time: an agent with a 1 MB MEMORY.md and 20 turns of history. Prints JSON.

Baseline in the same run: MemoryService.build_context alone (the memory block) on the same file.
Run: python tests/benchmarks/bench_prompt.py
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

from timing import time_calls

from oryxtui.agent.loop import AgentLoop
from oryxtui.agent.messages import Message, ToolCall
from oryxtui.agent.sessions import SessionStore
from oryxtui.config import Settings
from oryxtui.memory import MemoryService
from oryxtui.memory.format import ARCHIVAL_HEADER, CORE_HEADER
from oryxtui.workspace import init_workspace


def run() -> dict[str, object]:
    """Every figure of this benchmark, as a dict."""
    with tempfile.TemporaryDirectory() as folder:
        workspace = init_workspace(Path(folder))
        agent_dir = workspace.agents_dir / "big"
        agent_dir.mkdir()
        (agent_dir / "AGENT.md").write_text(
            "---\nname: big\nidentity:\n  prompt: You are big.\nbootstrap: [USER.md]\n---\nBody.\n"
        )
        lines = [CORE_HEADER, "- [2026-07-22 09:30:00] core fact", ARCHIVAL_HEADER]
        index = 0
        while sum(len(line) + 1 for line in lines) < 1_000_000:
            lines.append(f"- [2026-07-22 09:30:00] archival entry {index} about deploys and tea")
            index += 1
        (agent_dir / "MEMORY.md").write_text("\n".join(lines) + "\n")
        settings = Settings()
        memory = MemoryService.open(workspace, settings)
        runner = AgentLoop(workspace, settings, memory, SessionStore(workspace.db_path))
        history: list[Message] = []
        for turn in range(20):
            call = ToolCall(f"c{turn}", "recall_memory", '{"keyword": "tea"}')
            history += [
                Message("user", f"question {turn}"),
                Message("assistant", "", tool_calls=(call,)),
                Message("tool", '{"count": 1}', tool_name="recall_memory", tool_call_id=call.id),
                Message("assistant", f"answer {turn}"),
            ]
        memory.build_context("big")  # unchanged files are checked by stat, not parsed again
        memory_file = agent_dir / "MEMORY.md"

        def changed_then_build() -> None:
            os.utime(memory_file, ns=(time.time_ns(), time.time_ns()))
            runner.prompts.build("big", history)

        report = {
            "memory_file_bytes": (agent_dir / "MEMORY.md").stat().st_size,
            "history_turns": 20,
            "prompt_build": time_calls(lambda: runner.prompts.build("big", history), 50),
            "prompt_build_after_the_file_changed": time_calls(changed_then_build, 20),
            "baseline_memory_block_only": time_calls(lambda: memory.build_context("big"), 50),
            "target_median_ms": 20,
        }
    return report


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
