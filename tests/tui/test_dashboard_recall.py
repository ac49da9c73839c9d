"""Ranked recall in the dashboard, through Pilot: the modal shows which routes found each hit,
meaning arrives when typing pauses, the archival pane says how much the live index holds and
catches an outside write, and an unreachable embedder is said, not hidden."""

from __future__ import annotations

import re

import pytest
from textual.widgets import Input, OptionList, Static

from oryxtui.config import Settings
from oryxtui.memory.recall.results import DEGRADE_NOTICE
from oryxtui.workspace import Workspace
from tests.dashboard_support import (
    archival_pane,
    build_workspace,
    make_app,
    paste,
    upstream_append,
    wait_for,
)
from tests.serve_process import free_port


@pytest.fixture
def demo_workspace(workspace: Workspace) -> Workspace:
    return build_workspace(workspace)


def status_text(app: object) -> str:
    return str(app.screen.query_one("#recall-status", Static).render())  # type: ignore[attr-defined]


async def test_the_modal_ranks_and_explains_and_meaning_follows_a_pause(
    demo_workspace: Workspace,
) -> None:
    settings = Settings.model_validate({"embedding": {"provider": "mock"}})
    app = make_app(demo_workspace, settings)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: archival_pane(app).view.row_count == 60)
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.focused, Input))
        results = app.screen.query_one("#recall-results", OptionList)
        await paste(pilot, "answer number 19")
        await wait_for(pilot, lambda: "index 60/60" in status_text(app))
        assert "mock/deterministic (meaningless" in status_text(app)
        assert "best first" in status_text(app)
        first = str(results.get_option_at_index(0).prompt)
        assert "answer number 19 " in first  # the keyword hit ranks first
        assert "keyword #1" in first and "words #1" in first
        assert "time #" not in first  # recency breaks ties only, unless asked for the latest
        assert re.search(r"score \d+\.\d{4}", first)  # the fused score
        await pilot.press("escape")


async def test_the_archival_pane_shows_the_live_index(demo_workspace: Workspace) -> None:
    settings = Settings.model_validate({"embedding": {"provider": "mock"}})
    app = make_app(demo_workspace, settings)
    async with app.run_test(size=(160, 40)) as pilot:
        pane = archival_pane(app)
        await wait_for(
            pilot, lambda: "index 60/60 · mock, meaningless" in str(pane.border_subtitle)
        )
        upstream_append(demo_workspace.memory_file("alpha"), "- [2026-07-21 11:00:00] by upstream")
        await wait_for(pilot, lambda: "index 61/61" in str(pane.border_subtitle))


async def test_an_unreachable_embedder_is_said_and_recall_still_answers(
    demo_workspace: Workspace,
) -> None:
    dead = f"http://127.0.0.1:{free_port()}/v1"
    settings = Settings.model_validate(
        {"embedding": {"provider": "openai", "base_url": dead, "model": "m", "timeout_seconds": 2}}
    )
    app = make_app(demo_workspace, settings)
    async with app.run_test(size=(160, 40)) as pilot:
        pane = archival_pane(app)
        await wait_for(pilot, lambda: "embedder unreachable" in str(pane.border_subtitle))
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.focused, Input))
        await pilot.press(*"number 7")
        await wait_for(pilot, lambda: DEGRADE_NOTICE in status_text(app))
        assert "Cannot reach the embedding endpoint" in status_text(app)
        results = app.screen.query_one("#recall-results", OptionList)
        assert results.option_count >= 1
        await pilot.press("escape")


async def test_the_modal_searches_every_agent_with_one_key(demo_workspace: Workspace) -> None:
    upstream = Settings.model_validate({"memory": {"recall": {"profile": "upstream"}}})
    app = make_app(demo_workspace, upstream)  # keyword recall: every hit, not the best 20
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: archival_pane(app).view.row_count == 60)
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.focused, Input))
        results = app.screen.query_one("#recall-results", OptionList)
        await pilot.press(*"note")
        await wait_for(pilot, lambda: results.option_count == 60)  # alpha's own
        await pilot.press("ctrl+t")  # every agent, each hit named
        await wait_for(pilot, lambda: results.option_count == 62)
        prompts = [str(results.get_option_at_index(i).prompt) for i in range(62)]
        assert {p.split("  ")[0] for p in prompts} == {"alpha", "beta", "global"}
        assert "every agent" in str(app.screen.query_one("#recall-title").render())
        await pilot.press("ctrl+t")  # and back
        await wait_for(pilot, lambda: results.option_count == 60)
        await pilot.press("escape")


def test_the_words_highlighted_are_whole_words_as_the_lexical_route_matched_them() -> None:
    """A question's short words ("I", "the") light up as words, never as letters inside others
    ("connection", "then"); Chinese text by its bigrams, as the route matched it."""
    from oryxtui.tui.screens.recall import highlighted

    def lit(line: str, question: str) -> list[str]:
        text = highlighted(line, question, words=True)
        return sorted({text.plain[span.start : span.end] for span in text.spans})

    line = "payout: connection pool raised, then I restarted the payout service"
    question = "who do I ask about the payout service"
    assert lit(line, question) == ["I", "payout", "service", "the"]
    assert lit("结算 的告警阈值调整", "阈值 告警") == ["告警", "阈值"]
    assert lit("a plain line", "pla") == ["pla"]  # what was typed, as typed, still lights up
