"""Soak: every kind of writer at once on a few agents, then check that nothing was lost.

    python -m tests.reliability.soak [--seconds 60] [--agents 4]

For the whole run, at the same time:
  (a) processes saving through the real `oryxtui memory save` executable,
  (b) the library from several threads,
  (c) the ReAct loop calling save_memory through a local OpenAI-compatible server,
  (d) a simulated editor saving by temp file and rename, without the lock (even agents),
  (e) a simulated VS Code saving by truncate-then-write, without the lock (odd agents),
  (f) the dashboard, headless, watching and switching agents.
Afterwards every file must be UTF-8 and parse losslessly; every entry written through oryxtui
must be in its file or reported lost (an editor with a stale buffer saved over it); every line
an editor saved must still be there; the dashboard's final state must equal the disk; and
`restore` must bring every lost entry back. Prints one JSON document of counts; exits 1 on any
violation. The normal test run uses a short version (tests/system/test_soak.py).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from oryxtui.agent.loop import AgentLoop
from oryxtui.agent.sessions import SessionStore
from oryxtui.config import LlmSettings, load_settings
from oryxtui.memory import MemoryService
from oryxtui.memory.document import parse
from oryxtui.memory.format import ARCHIVAL_HEADER, CORE_HEADER, Scope, entry_from_line
from oryxtui.tui.app import OryxApp
from oryxtui.tui.widgets.agent_list import AgentList
from oryxtui.workspace import Workspace
from tests.dashboard_support import count_reads
from tests.llm_server import ScriptedLLM
from tests.support import make_agent, oryxtui_executable

# Content with markup, CJK and punctuation, so the check is not only about plain ASCII.
DECORATION = " 触发「[b]bold[/b]」 `x` *y*"


class RememberingLLM(ScriptedLLM):
    """Asks to save whatever the user said, then answers once the tool has run."""

    def __init__(self) -> None:
        super().__init__([])

    def next_step(self, body: dict[str, Any]) -> dict[str, Any]:
        last = body["messages"][-1]
        if last["role"] == "tool":
            return {"text": "Saved."}
        content = last["content"].removeprefix("remember ")
        return {"tool_calls": [("save_memory", {"content": content, "scope": "archival"})]}


class Tally:
    """What each writer wrote, thread-safe: contents by agent, counts by kind."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.written: dict[str, set[str]] = defaultdict(set)
        self.saves: Counter[str] = Counter()
        self.errors: list[str] = []

    def saved(self, kind: str, agent: str, content: str) -> None:
        with self.lock:
            self.written[agent].add(content)
            self.saves[kind] += 1

    def failed(self, kind: str, message: str) -> None:
        with self.lock:
            self.errors.append(f"{kind}: {message.strip()[:300]}")


# Writers ------------------------------------------------------------------------------------


def cli_writer(root: Path, agents: list[str], number: int, stop: threading.Event, tally: Tally):
    executable, sequence = oryxtui_executable(), 0
    while not stop.is_set():
        agent, sequence = random.choice(agents), sequence + 1
        content = f"cli{number}-{sequence:05d}{DECORATION}"
        command = [executable, "memory", "save", "--root", str(root), "--agent", agent, content]
        result = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if result.returncode == 0:
            tally.saved("cli", agent, content)
        else:
            tally.failed("cli", result.stderr)


def library_writer(root: Path, agents: list[str], number: int, deadline: float, tally: Tally):
    service = MemoryService.open(Workspace(root), load_settings(Workspace(root).config_path))
    sequence = 0
    while time.monotonic() < deadline:
        agent, sequence = random.choice(agents), sequence + 1
        content = f"lib{number}-{sequence:05d}{DECORATION}"
        scope = "core" if sequence % 10 == 0 else "archival"
        try:
            service.save(agent, content, scope)
        except Exception as exc:
            tally.failed("library", repr(exc))
        else:
            tally.saved("library", agent, content)
        time.sleep(random.uniform(0.002, 0.02))


def loop_writer(root: Path, agents: list[str], deadline: float, tally: Tally) -> None:
    workspace = Workspace(root)
    with RememberingLLM() as llm:
        llm_settings = LlmSettings(provider="openai", base_url=llm.base_url, model="soak")
        settings = load_settings(workspace.config_path).model_copy(update={"llm": llm_settings})
        service = MemoryService.open(workspace, settings)
        runner = AgentLoop(workspace, settings, service, SessionStore(workspace.db_path))
        sequence = 0
        while time.monotonic() < deadline:
            agent, sequence = random.choice(agents), sequence + 1
            content = f"loop-{sequence:05d}{DECORATION}"
            events = list(runner.run(agent, f"remember {content}", "soak", "tester"))
            results = [e for e in events if e.kind == "tool_result"]
            if events[-1].kind == "final" and results and all(e.success for e in results):
                tally.saved("loop", agent, content)
            else:
                tally.failed("loop", "; ".join(f"{e.kind}: {e.text}" for e in events[-3:]))


def library_process(root: Path, agents: list[str], seconds: float) -> None:
    """(b) and (c) in a process of their own, as an agent runtime would be: prints a JSON tally."""
    tally, deadline = Tally(), time.monotonic() + seconds
    threads = [
        *(
            threading.Thread(target=library_writer, args=(root, agents, n, deadline, tally))
            for n in range(3)
        ),
        threading.Thread(target=loop_writer, args=(root, agents, deadline, tally)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    written = {agent: sorted(contents) for agent, contents in tally.written.items()}
    print(json.dumps({"written": written, "saves": tally.saves, "errors": tally.errors}))


EDITOR = """
import os, random, sys, time
path, style, tag, seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
deadline, sequence = time.monotonic() + seconds, 0
while time.monotonic() < deadline:
    with open(path, encoding="utf-8") as handle:
        buffer = handle.read()
    time.sleep(random.uniform(0.05, 0.4))  # the person types; oryxtui keeps saving meanwhile
    sequence += 1
    line = f"- {tag}-{sequence:05d} typed by hand"
    buffer += ("" if buffer.endswith("\\n") else "\\n") + line + "\\n"
    if style == "rename":
        temp = path + f".{os.getpid()}.swp"
        with open(temp, "w", encoding="utf-8") as handle:
            handle.write(buffer)
        os.replace(temp, path)
    else:  # like VS Code: truncate, then write into the same file
        with open(path, "w", encoding="utf-8") as handle:
            time.sleep(0.003)
            handle.write(buffer)
    print(line, flush=True)
    time.sleep(random.uniform(0.1, 0.6))  # and reads for a moment before the next edit
"""


def start_editor(memory_file: Path, style: str, tag: str, seconds: float) -> subprocess.Popen:
    command = [sys.executable, "-c", EDITOR, str(memory_file), style, tag, str(seconds)]
    return subprocess.Popen(command, stdout=subprocess.PIPE, text=True)


# The dashboard --------------------------------------------------------------------------------


def disk_state(service: MemoryService, agent: str) -> str:
    snapshot, lost = service.snapshot(agent), service.lost(agent)
    return f"core {len(snapshot.core)}, archival {len(snapshot.archival)}, lost {len(lost)}"


def dashboard_state(app: OryxApp, agent: str) -> str | None:
    """What the sidebar says of an agent, in the words of `disk_state`."""
    summary = app.dashboard.agent_list.summaries.get(agent)
    if summary is None or summary.core_count is None:
        return None
    return (
        f"core {summary.core_count}, archival {summary.archival_count}, lost {summary.lost_count}"
    )


def shown_matches_disk(app: OryxApp, service: MemoryService) -> bool:
    shown = app.dashboard.memory_view.shown
    if shown is None or shown.snapshot is None or shown.summary.name != app.dashboard.selected:
        return False
    disk = service.snapshot(app.dashboard.selected)
    return [e.line for e in shown.snapshot.core] == [e.line for e in disk.core] and list(
        shown.snapshot.archival_lines()
    ) == list(disk.archival_lines())


async def until(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        await asyncio.sleep(0.1)
    return bool(condition())


async def run_dashboard(root: Path, agents: list[str], stop: threading.Event, report: dict):
    workspace = Workspace(root)
    settings = load_settings(workspace.config_path)
    service = MemoryService.open(workspace, settings)
    app = OryxApp(workspace, settings, service=service, user="tester")
    reads = count_reads(service)
    async with app.run_test(size=(160, 40)) as pilot:
        await until(lambda: app.dashboard.memory_view.shown is not None, 30)
        switches = 0
        while not stop.is_set():  # a person clicking through the agents while it all happens
            await pilot.pause(1.0)
            sidebar = app.dashboard.query_one(AgentList)
            sidebar.highlighted = (switches + 1) % len(agents)
            switches += 1
        report["dashboard_switches"] = switches
        await report["_writers_done"].wait()

        def settled() -> bool:
            return all(dashboard_state(app, a) == disk_state(service, a) for a in agents) and (
                shown_matches_disk(app, service)
            )

        report["dashboard_equals_disk"] = await until(settled, 30)
        report["dashboard_states"] = {a: dashboard_state(app, a) for a in agents}
        report["disk_states"] = {a: disk_state(service, a) for a in agents}
        report["dashboard_reloads"] = sum(reads.values())
        await report["_restored"].wait()
        # The dashboard sees the restore too: no agent is marked as having lost entries.
        report["dashboard_after_restore"] = await until(settled, 30)


# The run --------------------------------------------------------------------------------------


def prepare(root: Path, agents: list[str]) -> None:
    workspace = Workspace(root)
    workspace.root.mkdir(parents=True)
    for agent in agents:
        (make_agent(workspace, agent) / "MEMORY.md").write_text(
            f"# {agent}\n{CORE_HEADER}\n- seeded core\n\n{ARCHIVAL_HEADER}\n- seeded archival\n",
            encoding="utf-8",
        )


def check_files(service: MemoryService, root: Path, agents: list[str], tally: Tally, editors):
    """The invariants; returns (violations, lost counts)."""
    violations: list[str] = []
    lost_counts = {}
    for agent in agents:
        path = Workspace(root).memory_file(agent)
        raw = path.read_bytes()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            violations.append(f"{agent}: MEMORY.md is not UTF-8")
            continue
        document = parse(text)
        if document.render() != text:
            violations.append(f"{agent}: the parse is not lossless")
        present = {e.content for e in document.core_entries()}
        present |= {e.content for e in document.archival_entries()}
        lost = {e.content for e in service.lost(agent)}
        history = path.with_name(path.name + ".journal").read_text(encoding="utf-8")
        records = [json.loads(r) for r in history.splitlines()]
        recorded = [
            entry_from_line(item["line"], Scope.ARCHIVAL).content
            for record in records
            if record["op"] == "save"
            for item in record["after"]
        ]
        if tally.written[agent] - set(recorded):
            violations.append(f"{agent}: saves missing from the history")
        if len(recorded) != len(set(recorded)):
            violations.append(f"{agent}: a save recorded twice in the history")
        lost_counts[agent] = len(lost)
        missing = tally.written[agent] - present - lost
        if missing:
            violations.append(
                f"{agent}: {len(missing)} saved entries vanished: {sorted(missing)[:3]}"
            )
        lines = set(text.splitlines())
        dropped = [line for line in editors.get(agent, []) if line not in lines]
        if dropped:
            violations.append(f"{agent}: {len(dropped)} editor lines overwritten: {dropped[:3]}")
    return violations, lost_counts


def soak(seconds: float, agent_count: int) -> dict[str, Any]:
    agents = [f"soak{i}" for i in range(agent_count)]
    tally, stop = Tally(), threading.Event()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / ".oryxos"
        prepare(root, agents)
        workspace = Workspace(root)
        report: dict[str, Any] = {"seconds": seconds, "agents": agent_count}

        async def main() -> None:
            report["_writers_done"], report["_restored"] = asyncio.Event(), asyncio.Event()
            dashboard = asyncio.create_task(run_dashboard(root, agents, stop, report))
            await asyncio.sleep(1.0)  # the dashboard is up before the storm
            command = [sys.executable, "-m", "tests.reliability.soak", "--library-process"]
            library = subprocess.Popen(
                [*command, str(root), str(seconds), *agents], stdout=subprocess.PIPE, text=True
            )
            styles = {
                agent: "rename" if i % 2 == 0 else "truncate" for i, agent in enumerate(agents)
            }
            editors = {
                agent: start_editor(workspace.memory_file(agent), style, f"ed-{agent}", seconds)
                for agent, style in styles.items()
            }
            clis = [
                threading.Thread(target=cli_writer, args=(root, agents, n, stop, tally))
                for n in range(2)
            ]
            for thread in clis:
                thread.start()
            await asyncio.sleep(seconds)
            stop.set()
            editor_lines: dict[str, list[str]] = {}
            for agent, process in editors.items():
                output, _ = await asyncio.to_thread(process.communicate, timeout=120)
                editor_lines[agent] = output.splitlines()
                if process.returncode:
                    tally.failed("editor", f"{agent} exited with {process.returncode}")
            output, _ = await asyncio.to_thread(library.communicate, timeout=300)
            if library.returncode:
                tally.failed("library process", f"exited with {library.returncode}")
            else:
                child = json.loads(output)
                for agent, contents in child["written"].items():
                    tally.written[agent].update(contents)
                tally.saves.update(child["saves"])
                tally.errors.extend(child["errors"])
            for thread in clis:
                await asyncio.to_thread(thread.join, 300)
            report["_writers_done"].set()
            # Wait for the dashboard's verdict before restoring, so it compares the same disk.
            while "dashboard_equals_disk" not in report:
                await asyncio.sleep(0.1)
            service = MemoryService.open(workspace, load_settings(workspace.config_path))
            violations, lost = check_files(service, root, agents, tally, editor_lines)
            restored = {agent: len(service.restore(agent)) for agent in agents}
            after, still_lost = check_files(service, root, agents, tally, editor_lines)
            violations += [f"after restore: {v}" for v in after]
            if any(still_lost.values()):
                violations.append(f"entries still lost after restore: {still_lost}")
            report["_restored"].set()
            await dashboard
            editor_saves: Counter[str] = Counter()
            for agent, lines in editor_lines.items():
                editor_saves[styles[agent]] += len(lines)
            report.update(
                saves=dict(tally.saves),
                editor_saves=dict(editor_saves),
                reported_lost=sum(lost.values()),
                restored=sum(restored.values()),
                errors=tally.errors,
                file_bytes={a: workspace.memory_file(a).stat().st_size for a in agents},
                violations=violations,
            )

        asyncio.run(main())
    for key in ("_writers_done", "_restored"):
        report.pop(key, None)
    if not report["dashboard_equals_disk"]:
        report["violations"].append("the dashboard did not settle on what is on disk")
    if not report["dashboard_after_restore"]:
        report["violations"].append("the dashboard did not show the restored entries")
    report["ok"] = not report["violations"] and not report["errors"]
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--agents", type=int, default=4)
    if sys.argv[1:2] == ["--library-process"]:
        root, seconds, *agents = sys.argv[2:]
        library_process(Path(root), agents, float(seconds))
        return
    options = parser.parse_args()
    report = soak(options.seconds, options.agents)
    print(json.dumps(report, indent=2, ensure_ascii=False))
    sys.exit(0 if report["ok"] else 1)


if __name__ == "__main__":
    main()
