"""Dashboard test helpers: a fixed workspace, waiting for conditions, another writer."""

from __future__ import annotations

import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from textual import events
from textual.pilot import Pilot
from textual.widgets import TabbedContent

from oryxtui.agent.loop import AgentLoop
from oryxtui.agent.prompt import Prompt
from oryxtui.agent.sessions import SessionStore
from oryxtui.config import LlmSettings, Settings
from oryxtui.memory import MemoryService, MemorySnapshot
from oryxtui.memory.format import ARCHIVAL_HEADER, CORE_HEADER
from oryxtui.memory.history import Actor
from oryxtui.tui.app import OryxApp
from oryxtui.tui.overview import AgentMemory
from oryxtui.tui.widgets.agent_list import AgentList
from oryxtui.tui.widgets.chat_pane import ChatPane
from oryxtui.tui.widgets.memory_pane import ArchivalPane, MemoryPane
from oryxtui.tui.widgets.memory_view import MemoryView
from oryxtui.workspace import AgentName, Workspace
from tests.support import fixed_clock, make_agent

ALPHA_MEMORY = (
    f"{CORE_HEADER}\n"
    "- [2026-07-20 08:00:00] User prefers concise responses, no bullet lists.\n"
    f"{ARCHIVAL_HEADER}\n"
    + "".join(
        f"- [2026-07-21 {9 + i // 60:02d}:{i % 60:02d}:00] note on question {i}: answer number {i} "
        "with enough words to fill a line of the archival pane\n"
        for i in range(60)
    )
)
BETA_MEMORY = f"{CORE_HEADER}\n- [2026-07-20 08:00:00] beta core\n{ARCHIVAL_HEADER}\n- beta note\n"


def build_workspace(workspace: Workspace) -> Workspace:
    (make_agent(workspace, "alpha") / "MEMORY.md").write_text(ALPHA_MEMORY)
    (make_agent(workspace, "beta") / "MEMORY.md").write_text(BETA_MEMORY)
    workspace.global_memory_file.write_text(f"{CORE_HEADER}\n{ARCHIVAL_HEADER}\n- global note\n")
    return workspace


def make_app(
    workspace: Workspace,
    settings: Settings | None = None,
    watch: bool = True,
    monotonic: Callable[[], float] = lambda: 1000.0,
) -> OryxApp:
    settings = settings or Settings()
    dashboard = Actor("dashboard")
    service = MemoryService.open(workspace, settings, clock=fixed_clock, actor=dashboard)
    return OryxApp(
        workspace, settings, service=service, monotonic=monotonic, watch=watch, user="tester"
    )


def app_with_llm(workspace: Workspace, base_url: str) -> OryxApp:
    """The dashboard talking to an OpenAI-compatible server (a ScriptedLLM) at `base_url`."""
    settings = Settings(llm=LlmSettings(base_url=base_url, model="m"))
    service = MemoryService.open(workspace, settings, clock=fixed_clock)
    runner = AgentLoop(workspace, settings, service, SessionStore(workspace.db_path))
    return OryxApp(workspace, settings, service=service, runner=runner, user="tester")


async def paste(pilot: Pilot, text: str) -> None:
    """Text into the focused field in one event, as a paste: a key per character costs
    ~60 ms in a test (typing itself is tested where it matters, with `pilot.press`)."""
    focused = pilot.app.focused
    assert focused is not None, "nothing has the focus to paste into"
    focused.post_message(events.Paste(text))
    await pilot.pause()


async def wait_for(pilot: Pilot, condition: Callable[[], object], timeout: float = 30.0) -> None:
    """Let the app run until `condition()` is true; fail with a clear message at the deadline
    (generous: on a busy machine the app may get a fraction of a core)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        await pilot.pause(0.02)


# What the dashboard screen shows, read from its widgets (the screen under any dialog).


def shown_memory(app: OryxApp) -> AgentMemory | None:
    """The memory the middle column shows, with the summary it was shown with."""
    return app.dashboard.query_one(MemoryView).shown


def memory_shown(app: OryxApp) -> bool:
    """The middle column shows an agent's entries (not only a problem reading them)."""
    shown = shown_memory(app)
    return shown is not None and shown.snapshot is not None


async def focus_pane(pilot: Pilot, pane: MemoryPane) -> None:
    """Tab to the pane's entries, as a person does (the entry keys act on the focused pane)."""
    for _ in range(8):
        if pane.view.has_focus:
            return
        await pilot.press("tab")
    raise AssertionError("tab never reached the pane")


def archival_pane(app: OryxApp) -> ArchivalPane:
    return app.dashboard.query_one(ArchivalPane)


def core_pane(app: OryxApp) -> MemoryPane:
    return app.dashboard.query_one("#core-pane", MemoryPane)


async def side_column(pilot: Pilot, app: OryxApp) -> TabbedContent:
    """The chat/prompt column, once mounted (after the first frame)."""
    await wait_for(pilot, lambda: app.dashboard.query("#side"))
    return app.dashboard.query_one("#side", TabbedContent)


def chat_pane(app: OryxApp) -> ChatPane:
    return app.dashboard.chat_pane  # mounted after the first frame, made with the screen


def agent_list(app: OryxApp) -> AgentList:
    return app.dashboard.query_one(AgentList)


def prompts(app: OryxApp) -> dict[AgentName, Prompt]:
    """The newest prompt the preview built for each agent."""
    return app.dashboard.prompt_pane.built


def count_reads(service: MemoryService) -> Counter[AgentName]:
    """How often each agent's memory is read from now on (calls of `service.snapshot`), so a
    test can see how many reloads a burst of writes caused."""
    counts: Counter[AgentName] = Counter()
    read = service.snapshot

    def counted(agent: AgentName, newest_bytes: int | None = None) -> MemorySnapshot:
        counts[agent] += 1
        return read(agent, newest_bytes)

    service.snapshot = counted  # type: ignore[method-assign,assignment]
    return counts


def shown_text(app: OryxApp, selector: str) -> list[str]:
    """The rows an EntryView draws, as plain text."""
    view = app.query_one(selector)
    return [view.render_line(y).text for y in range(view.size.height)]


UPSTREAM_WRITER = """
import os, sys, tempfile
path, line = sys.argv[1], sys.argv[2]
text = open(path, encoding="utf-8").read()
folder = os.path.dirname(path)
handle, temp = tempfile.mkstemp(dir=folder, prefix="MEMORY", suffix=".tmp")
with os.fdopen(handle, "w", encoding="utf-8") as out:
    out.write(text + line + "\\n")
os.replace(temp, path)
"""


def upstream_append(memory_file: Path, line: str) -> None:
    """Another process appends like the upstream server: temp file `MEMORY*.tmp`, then rename."""
    subprocess.run([sys.executable, "-c", UPSTREAM_WRITER, str(memory_file), line], check=True)
