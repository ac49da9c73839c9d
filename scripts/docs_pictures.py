"""The documentation's pictures, made from the demo workspace as a user first sees it: the docs
build makes them all afresh (`on_files` in docs_hooks.py), so the site's pictures never drift
from the dashboard. Only the README's picture is kept in the repository (GitHub shows the README
without the site): `python scripts/docs_pictures.py` writes it into docs/images/, and a test
holds that copy to what this makes now.

Each picture is the dashboard over a fresh demo (made at a fixed time, with the recall-by-meaning
model the quick start installs), run headless at a fixed size, after the keys a user presses.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterable
from datetime import datetime
from pathlib import Path

from textual.pilot import Pilot

from oryxtui.config import load_settings
from oryxtui.demo import create_demo_workspace
from oryxtui.memory import MemoryService
from oryxtui.memory.history import Actor
from oryxtui.tui.app import OryxApp
from oryxtui.workspace import Workspace

ROOT = Path(__file__).resolve().parents[1]
IMAGES = ROOT / "docs" / "images"
SIZE = (160, 44)  # wide enough for the chat/prompt column
MADE_AT = datetime(2026, 7, 21, 10, 0, 0)  # the demo's "now": its entries are hours before it
USER = "sam"
AGENT = "ops-bot"
QUESTION = "who do I ask about the payout service"

Steps = Callable[[Pilot], Awaitable[None]]


async def _until(pilot: Pilot, condition: Callable[[], object], what: str) -> None:
    deadline = time.monotonic() + 60
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"the picture never showed {what}")
        await pilot.pause(0.05)


async def first_look(pilot: Pilot) -> None:
    """The dashboard as `oryxtui demo` opens it, on the agent with the most to show (ops-bot:
    its deploys overflow the injected window), once everything it reads in the background is
    in: its memory and prompt preview, every agent's counts, its index."""
    app = pilot.app
    assert isinstance(app, OryxApp)
    screen = app.dashboard
    await _until(pilot, lambda: screen.memory_view.shown is not None, "the memory")
    await pilot.press("down")
    await _until(pilot, lambda: _shown(app) == AGENT, f"{AGENT}'s memory")
    await _until(pilot, lambda: AGENT in screen.prompt_pane.built, "the prompt preview")
    summaries = screen.agent_list.summaries.values()
    await _until(pilot, lambda: all(s.core_count is not None for s in summaries), "the counts")
    if app.service.embeds:
        status = screen.index_status
        await _until(pilot, lambda: AGENT in status and not status[AGENT].pending, "the index")
    view = screen.memory_view.archival.view
    await _until(pilot, lambda: view.scroll_y == view.max_scroll_y, "the newest entries")
    await pilot.pause()


def _shown(app: OryxApp) -> str | None:
    shown = app.dashboard.memory_view.shown
    return None if shown is None or shown.snapshot is None else shown.summary.name


async def prompt(pilot: Pilot) -> None:
    """`p`: the prompt the agent would receive, block by block."""
    await first_look(pilot)
    await pilot.press("p")
    await _until(pilot, lambda: pilot.app.dashboard.query("#block-memory"), "the prompt blocks")
    await pilot.pause()


async def recall(pilot: Pilot) -> None:
    """`r` and a question in other words than the entries'."""
    from oryxtui.tui.screens.recall import RecallScreen

    await first_look(pilot)
    await pilot.press("r")
    await _until(pilot, lambda: isinstance(pilot.app.screen, RecallScreen), "the recall dialog")
    screen = pilot.app.screen
    await pilot.press(*QUESTION)
    await _until(pilot, lambda: screen._semantic_done == QUESTION and screen.rows, "ranked hits")
    await pilot.pause()


async def history(pilot: Pilot) -> None:
    """`h`: who changed the memory, and the memory after the change selected."""
    from oryxtui.tui.screens.history import HistoryScreen

    await first_look(pilot)
    await pilot.press("h")
    await _until(pilot, lambda: isinstance(pilot.app.screen, HistoryScreen), "the history")
    await pilot.pause()


PICTURES: dict[str, Steps] = {
    "dashboard.svg": first_look,
    "prompt.svg": prompt,
    "recall.svg": recall,
    "history.svg": history,
}


KEPT = "dashboard.svg"  # the README's picture, the one kept in docs/images/


def make_pictures(names: Iterable[str] = PICTURES) -> dict[str, str]:
    """The SVG of each picture named, by file name: one demo (none of the pictures changes
    it; the first indexes it), a dashboard of its own for each."""
    with tempfile.TemporaryDirectory(prefix="oryxtui-pictures-") as folder:
        workspace, _ = create_demo_workspace(Path(folder), clock=lambda: MADE_AT)
        return {name: asyncio.run(_picture(workspace, PICTURES[name])) for name in names}


async def _picture(workspace: Workspace, steps: Steps) -> str:
    settings = load_settings(workspace.config_path)
    dashboard = Actor("dashboard")
    service = MemoryService.open(workspace, settings, clock=lambda: MADE_AT, actor=dashboard)
    app = OryxApp(workspace, settings, service=service, watch=False, user=USER)
    async with app.run_test(size=SIZE) as pilot:
        await steps(pilot)
        return app.export_screenshot(title="oryxtui")


def main() -> int:
    (IMAGES / KEPT).write_text(make_pictures([KEPT])[KEPT], encoding="utf-8")
    sys.stdout.write(f"wrote docs/images/{KEPT}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
