"""The dashboard through Pilot: real files under tmp_path, real watcher, real worker threads."""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from pathlib import Path

import pytest
from textual.command import CommandList
from textual.pilot import Pilot
from textual.widgets import Input, OptionList

from oryxtui.config import Settings, TuiSettings
from oryxtui.demo import create_demo_workspace
from oryxtui.memory.format import ARCHIVAL_HEADER, CORE_HEADER
from oryxtui.tui.app import OryxApp
from oryxtui.tui.messages import WatchStarted
from oryxtui.tui.screens.save_entry import SaveEntryScreen
from oryxtui.tui.widgets.agent_list import AgentList
from oryxtui.tui.widgets.entry_view import EntryView
from oryxtui.watching import watched_folders
from oryxtui.workspace import Workspace
from tests.dashboard_support import (
    agent_list,
    archival_pane,
    build_workspace,
    core_pane,
    count_reads,
    make_app,
    paste,
    shown_memory,
    shown_text,
    side_column,
    upstream_append,
    wait_for,
)
from tests.support import fixed_clock, make_agent


@pytest.fixture
def demo_workspace(workspace: Workspace) -> Workspace:
    return build_workspace(workspace)


def loaded(app: OryxApp, agent: str | None) -> bool:
    """The agent's memory is on screen, and what changes from now on is heard."""
    return (
        (app.watching or not app.watch_files)
        and shown_memory(app) is not None
        and shown_memory(app).summary.name == agent
        and shown_memory(app).snapshot is not None
    )


async def test_first_agent_selected_then_others_and_global(demo_workspace: Workspace) -> None:
    app = make_app(demo_workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: loaded(app, "alpha"))
        assert agent_list(app).order == ["alpha", "beta", None]
        assert archival_pane(app).view.row_count == 60
        assert core_pane(app).view.row_count == 1
        # Opens scrolled to the newest entry.
        await wait_for(pilot, lambda: "number 59" in "\n".join(shown_text(app, "#archival-view")))
        sidebar = app.query_one(AgentList)
        await wait_for(pilot, lambda: "1·60" in str(sidebar.get_option_at_index(0).prompt))
        sidebar.focus()
        await pilot.press("down")
        await wait_for(pilot, lambda: loaded(app, "beta"))
        assert shown_text(app, "#core-view")[0].rstrip().endswith("beta core")
        await pilot.press("down")
        await wait_for(pilot, lambda: loaded(app, None))
        assert "global note" in shown_text(app, "#archival-view")[0]


async def test_entries_outside_the_window_are_marked(workspace: Workspace) -> None:
    build_workspace(workspace)
    settings = Settings.model_validate({"memory": {"archival_max_chars": 500}})
    app = make_app(workspace, settings)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: loaded(app, "alpha"))
        snapshot = shown_memory(app).snapshot
        assert 0 < snapshot.window_start < 60
        title = str(archival_pane(app).border_title)
        assert f"{snapshot.window_start} not injected" in title
        view = archival_pane(app).view
        await pilot.press("home")
        assert view.render_line(0).text.startswith("○")
        await pilot.press("end")
        assert not shown_text(app, "#archival-view")[-1].startswith("○")


async def test_save_modal_archival_and_core(demo_workspace: Workspace) -> None:
    app = make_app(demo_workspace)
    memory_file = demo_workspace.memory_file("alpha")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: loaded(app, "alpha"))
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.focused, Input))
        await paste(pilot, "deploy window is Tuesday [/b]")
        await pilot.press("enter")
        await wait_for(pilot, lambda: archival_pane(app).view.row_count == 61)
        assert "- [2026-07-22 09:30:00] deploy window is Tuesday [/b]\n" in memory_file.read_text()
        await wait_for(
            pilot, lambda: "deploy window is Tuesday" in "".join(shown_text(app, "#archival-view"))
        )
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.focused, Input))
        await pilot.click("#scope-core")
        app.screen.query_one("#save-text", Input).focus()
        await paste(pilot, "always answer in English")
        await pilot.press("enter")
        await wait_for(pilot, lambda: core_pane(app).view.row_count == 2)
        text = memory_file.read_text()
        assert text.index("always answer in English") < text.index(ARCHIVAL_HEADER)


async def test_enter_on_the_scope_choice_saves_with_that_scope(
    demo_workspace: Workspace,
) -> None:
    app = make_app(demo_workspace)
    memory_file = demo_workspace.memory_file("alpha")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: loaded(app, "alpha"))
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.focused, Input))
        await paste(pilot, "the pager rota is in Confluence")
        await pilot.press("tab")  # to the scope choice
        await pilot.press("down", "enter")  # core, and save
        await wait_for(pilot, lambda: core_pane(app).view.row_count == 2)
        text = memory_file.read_text()
        assert text.index("the pager rota is in Confluence") < text.index(ARCHIVAL_HEADER)
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.focused, Input))
        await paste(pilot, "kept in archival")
        await pilot.press("tab", "enter")  # archival, as shown: saves
        await wait_for(pilot, lambda: archival_pane(app).view.row_count == 61)
        assert memory_file.read_text().rstrip().endswith("] kept in archival")


async def test_save_modal_escape_cancels(demo_workspace: Workspace) -> None:
    app = make_app(demo_workspace)
    before = demo_workspace.memory_file("alpha").read_bytes()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: loaded(app, "alpha"))
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.focused, Input))
        await paste(pilot, "never mind")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.focused, Input))
    assert demo_workspace.memory_file("alpha").read_bytes() == before


async def test_failed_save_keeps_the_text_and_says_why(demo_workspace: Workspace) -> None:
    memory_file = demo_workspace.memory_file("alpha")
    raw = memory_file.read_bytes() + b"- broken \xff byte\n"
    memory_file.write_bytes(raw)
    app = make_app(demo_workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: loaded(app, "alpha"))
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.focused, Input))
        await paste(pilot, "important")
        await pilot.press("enter")
        error = app.screen.query_one("#save-error")
        await wait_for(pilot, lambda: "not valid UTF-8" in str(error.render()))
        assert app.screen.query_one("#save-text", Input).value == "important"
        assert app.screen.query_one("#save-text", Input).disabled is False
    assert memory_file.read_bytes() == raw


async def test_recall_modal_live_results_and_copy(demo_workspace: Workspace) -> None:
    app = make_app(demo_workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: loaded(app, "alpha"))
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.focused, Input))
        results = app.screen.query_one("#recall-results", OptionList)
        await pilot.press(*"NUMBER 1")
        # number 1, 10-19: whole section, not only the window; case-insensitive
        await wait_for(pilot, lambda: results.option_count == 11)
        prompt = results.get_option_at_index(0).prompt
        assert any("reverse" in str(span.style) for span in prompt.spans)
        await pilot.press(*"9")
        await wait_for(pilot, lambda: results.option_count == 1)
        await pilot.press("enter")  # to the results
        await pilot.press("y")  # copy
        await wait_for(pilot, lambda: "answer number 19" in (app.clipboard or ""))
        await pilot.press("enter")  # show it: the archival pane focused, the cursor on it
        view = archival_pane(app).view
        await wait_for(pilot, lambda: view.has_focus)
        entry = view.entry_at_cursor()
        assert entry is not None and "answer number 19 " in entry.content


async def test_filter_narrows_the_archival_pane(demo_workspace: Workspace) -> None:
    app = make_app(demo_workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: loaded(app, "alpha"))
        await pilot.press("slash")
        await wait_for(pilot, lambda: isinstance(app.focused, Input))
        await pilot.press(*"question 5")
        await wait_for(pilot, lambda: archival_pane(app).view.row_count == 11)
        assert "11 of 60 match" in str(archival_pane(app).border_title)
        await pilot.press("escape")
        await wait_for(pilot, lambda: archival_pane(app).view.row_count == 60)


async def test_live_reload_after_atomic_replace_by_another_process_twice(
    demo_workspace: Workspace,
) -> None:
    app = make_app(demo_workspace)
    memory_file = demo_workspace.memory_file("alpha")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: loaded(app, "alpha"))
        for number in (1, 2):
            upstream_append(memory_file, f"- [2026-07-22 10:0{number}:00] upstream write {number}")
            await wait_for(pilot, lambda n=number: archival_pane(app).view.row_count == 60 + n)
            await wait_for(
                pilot,
                lambda n=number: (
                    f"upstream write {n}" in "".join(shown_text(app, "#archival-view"))
                ),
            )
            assert 60 + number - 1 in archival_pane(app).view.fresh
        assert not [p for p in memory_file.parent.iterdir() if p.suffix == ".tmp"]


async def test_other_agents_reload_in_the_sidebar_with_a_marker(demo_workspace: Workspace) -> None:
    # The real clock: the marker stays CHANGED_MARKER_SECONDS, however often the list redraws.
    app = make_app(demo_workspace, monotonic=time.monotonic)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: loaded(app, "alpha"))
        upstream_append(demo_workspace.memory_file("beta"), "- another note")
        sidebar = app.query_one(AgentList)
        # The counts may come first (a census of the other agents can read the new entry
        # before the watch's news of it arrives): the marker comes with the news.
        await wait_for(
            pilot,
            lambda: (
                (row := str(sidebar.get_option_at_index(1).prompt)).startswith("●") and "1·2" in row
            ),
        )


async def test_agent_folders_added_and_removed(demo_workspace: Workspace) -> None:
    app = make_app(demo_workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: loaded(app, "alpha"))
        make_agent(demo_workspace, "gamma")
        await wait_for(pilot, lambda: "gamma" in agent_list(app).order)
        # The new folder is watched too: its first MEMORY.md shows up.
        upstream_append_target = demo_workspace.memory_file("gamma")
        upstream_append_target.write_text(f"{CORE_HEADER}\n{ARCHIVAL_HEADER}\n")
        upstream_append(upstream_append_target, "- gamma note")
        await wait_for(pilot, lambda: agent_list(app).summaries["gamma"].archival_count == 1)
        shutil.rmtree(demo_workspace.agents_dir / "beta")
        await wait_for(pilot, lambda: "beta" not in agent_list(app).order)
        assert agent_list(app).order == ["alpha", "gamma", None]


async def test_agents_folder_removed_and_recreated(demo_workspace: Workspace) -> None:
    app = make_app(demo_workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: loaded(app, "alpha"))
        moved = demo_workspace.root / "agents-moved"
        os.rename(demo_workspace.agents_dir, moved)
        await wait_for(pilot, lambda: agent_list(app).order == [None])
        await wait_for(pilot, lambda: loaded(app, None))
        os.rename(moved, demo_workspace.agents_dir)
        await wait_for(pilot, lambda: agent_list(app).order == ["alpha", "beta", None])
        upstream_append(demo_workspace.memory_file("beta"), "- back again")
        await wait_for(pilot, lambda: agent_list(app).summaries["beta"].archival_count == 2)


async def test_what_changed_before_the_watch_was_set_up_is_read_when_it_is(
    demo_workspace: Workspace,
) -> None:
    # The watch starts after the first frame: an agent made and a memory written before then
    # are not heard, and are on screen once the watch says it started.
    app = make_app(demo_workspace, watch=False)  # the watch's start is told by hand
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: loaded(app, "alpha"))
        await wait_for(pilot, lambda: agent_list(app).summaries["beta"].archival_count == 1)
        make_agent(demo_workspace, "gamma")
        upstream_append(demo_workspace.memory_file("beta"), "- written before the watch")
        upstream_append(demo_workspace.memory_file("alpha"), "- alpha before the watch")
        assert "gamma" not in agent_list(app).order
        app.dashboard.post_message(WatchStarted())
        await wait_for(pilot, lambda: agent_list(app).order == ["alpha", "beta", "gamma", None])
        await wait_for(pilot, lambda: agent_list(app).summaries["beta"].archival_count == 2)
        await wait_for(
            pilot, lambda: "alpha before the watch" in "\n".join(shown_text(app, "#archival-view"))
        )


async def test_undecodable_file_gets_an_error_marker_and_the_app_goes_on(
    demo_workspace: Workspace,
) -> None:
    demo_workspace.memory_file("beta").write_bytes(b"## \xe6\xa0\xb8\n- caf\xe9\n")
    app = make_app(demo_workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: loaded(app, "alpha"))
        sidebar = app.query_one(AgentList)
        await wait_for(pilot, lambda: str(sidebar.get_option_at_index(1).prompt).startswith("⚠"))
        sidebar.focus()
        await pilot.press("down")
        await wait_for(pilot, lambda: loaded(app, "beta"))
        banner = str(app.query_one("#agent-banner").render())
        assert "not valid UTF-8" in banner and "/tmp" not in banner
        await pilot.press("up")
        await wait_for(pilot, lambda: loaded(app, "alpha"))
        assert archival_pane(app).view.row_count == 60


async def test_malformed_agent_file_is_reported_and_memory_still_shown(
    demo_workspace: Workspace,
) -> None:
    (demo_workspace.agents_dir / "alpha" / "AGENT.md").write_text("---\nname: [oops\n---\n")
    app = make_app(demo_workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: loaded(app, "alpha"))
        assert "not valid YAML" in str(app.query_one("#agent-banner").render())
        assert archival_pane(app).view.row_count == 60


async def test_markup_and_escape_sequences_render_literally(demo_workspace: Workspace) -> None:
    memory_file = demo_workspace.memory_file("beta")
    hostile = "[/bold] [@click=app.quit]x[/] \x1b[31mred\x1b[0m \x1b]0;title\x07 [b]bold?"
    memory_file.write_text(f"{CORE_HEADER}\n- {hostile}\n{ARCHIVAL_HEADER}\n- [red]{hostile}\n")
    app = make_app(demo_workspace)
    async with app.run_test(size=(240, 40)) as pilot:
        await wait_for(pilot, lambda: loaded(app, "alpha"))
        app.query_one(AgentList).focus()
        await pilot.press("down")
        await wait_for(pilot, lambda: loaded(app, "beta"))
        core_row = shown_text(app, "#core-view")[0]
        # Escape sequences are shown, never obeyed.
        assert "[/bold] [@click=app.quit]x[/] ␛[31mred␛[0m ␛]0;title␇ [b]bold?" in core_row
        assert "\x1b" not in core_row
        assert "[red][/bold]" in shown_text(app, "#archival-view")[0]
        detail = str(app.query_one("#archival-detail").render())
        assert "[@click=app.quit]x[/]" in detail
        await pilot.click("#core-view", offset=(30, 0))
        await pilot.pause(0.1)
        assert app.is_running


async def test_keymap_from_config_rebinds_a_key(demo_workspace: Workspace) -> None:
    settings = Settings(tui=TuiSettings(keymap={"save": "ctrl+n"}))
    app = make_app(demo_workspace, settings)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: loaded(app, "alpha"))
        await pilot.press("ctrl+n")
        await wait_for(pilot, lambda: app.screen.query("#save-text"))


async def test_a_burst_of_saves_is_coalesced(demo_workspace: Workspace) -> None:
    from oryxtui.memory import MemoryService

    app = make_app(demo_workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: loaded(app, "alpha"))
        reads = count_reads(app.service)
        writer = MemoryService.open(demo_workspace, Settings())

        def burst() -> float:  # another writer beside the dashboard, a save every few ms
            started = time.monotonic()
            for index in range(50):
                writer.save("alpha", f"burst {index}", "archival")
                time.sleep(0.008)
            return time.monotonic() - started

        elapsed = await asyncio.to_thread(burst)
        await wait_for(pilot, lambda: archival_pane(app).view.row_count == 110)
        reloads = reads["alpha"]
        assert reloads <= 20 * elapsed + 5, f"{reloads} reloads for 50 saves in {elapsed:.2f}s"


async def test_symlink_to_a_large_tree_does_not_slow_start_up(
    demo_workspace: Workspace, tmp_path: Path
) -> None:
    big = tmp_path / "big"
    for index in range(300):
        (big / f"d{index}" / "sub" / "deeper").mkdir(parents=True)
    (big / "AGENT.md").write_text("---\nname: linked\n---\n")
    (demo_workspace.agents_dir / "linked").symlink_to(big, target_is_directory=True)
    folders = watched_folders(demo_workspace)
    assert all(big not in folder.parents for folder in folders)
    app = make_app(demo_workspace)
    started = time.monotonic()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: loaded(app, "alpha"))
        assert time.monotonic() - started < 8.0  # walking the linked tree took far longer
        assert "linked" in agent_list(app).order
        # A folder linked from outside the workspace is listed, but never read.
        (big / "MEMORY.md").write_text(f"{CORE_HEADER}\n{ARCHIVAL_HEADER}\n- linked note\n")
        await wait_for(pilot, lambda: agent_list(app).summaries.get("linked") is not None)
        await wait_for(pilot, lambda: agent_list(app).summaries["linked"].error is not None)
        assert "outside the workspace" in (agent_list(app).summaries["linked"].error or "")
        assert agent_list(app).summaries["linked"].archival_count is None


async def test_the_pane_follows_new_entries_only_while_at_the_bottom(
    demo_workspace: Workspace,
) -> None:
    app = make_app(demo_workspace)
    memory_file = demo_workspace.memory_file("alpha")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: loaded(app, "alpha"))
        view = archival_pane(app).view
        view.focus()
        await pilot.press("home")
        await wait_for(pilot, lambda: view.scroll_y == 0)
        upstream_append(memory_file, "- while reading the top")
        await wait_for(pilot, lambda: view.row_count == 61)
        await pilot.pause(0.1)
        assert (view.cursor, view.scroll_y) == (0, 0)  # the reader is not yanked away
        await pilot.press("end")
        await wait_for(pilot, lambda: view.scroll_y == view.max_scroll_y)
        upstream_append(memory_file, "- newest while at the bottom")
        await wait_for(pilot, lambda: view.row_count == 62)
        await wait_for(pilot, lambda: view.scroll_y == view.max_scroll_y and view.cursor == 61)
        assert "newest while at the bottom" in "".join(shown_text(app, "#archival-view"))


async def test_sqlite_backend_reloads_when_another_process_writes(workspace: Workspace) -> None:
    from oryxtui.config import MemorySettings
    from oryxtui.memory import MemoryService

    make_agent(workspace, "alpha")
    settings = Settings(memory=MemorySettings(backend="sqlite"))
    MemoryService.open(workspace, settings).save("alpha", "first row", "archival")
    app = make_app(workspace, settings)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: loaded(app, "alpha"))
        assert archival_pane(app).view.row_count == 1
        other = MemoryService.open(workspace, settings)  # its own connection, like another process
        other.save("alpha", "second row", "archival")
        await wait_for(pilot, lambda: archival_pane(app).view.row_count == 2)


async def palette_titles(pilot: Pilot, app: OryxApp) -> str:
    """Everything the command palette lists when opened, as text; then it is closed again."""
    await pilot.press("ctrl+p")
    await wait_for(
        pilot,
        lambda: app.screen.query(CommandList) and app.screen.query_one(CommandList).option_count,
    )
    commands = app.screen.query_one(CommandList)
    await pilot.pause()
    titles = "\n".join(
        str(commands.get_option_at_index(i).prompt) for i in range(commands.option_count)
    )
    await pilot.press("escape")
    await wait_for(pilot, lambda: app.screen is app.dashboard)
    return titles


async def test_command_palette_offers_the_actions(demo_workspace: Workspace) -> None:
    app = make_app(demo_workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: loaded(app, "alpha"))
        titles = await palette_titles(pilot, app)
        for title in (
            "Save an entry",
            "Recall",
            "Edit MEMORY.md",
            "Filter archival",
            "Chat",
            "Prompt preview",
            "Show beta",
        ):
            assert title in titles
        # Only what applies now: nothing is lost, and alpha is already shown.
        assert "Restore lost entries" not in titles and "Show alpha" not in titles
        await pilot.press("ctrl+p")
        await paste(pilot, "prompt preview")
        await pilot.press("enter")
        side = await side_column(pilot, app)
        await wait_for(pilot, lambda: side.active == "prompt-tab")
        await pilot.press("ctrl+p")
        await paste(pilot, "show beta")
        await pilot.press("enter")
        await wait_for(pilot, lambda: loaded(app, "beta"))
        # An outside edit drops an entry oryxtui saved: now there is something to restore.
        app.service.save("beta", "saved by oryxtui", "archival")
        memory_file = demo_workspace.agents_dir / "beta" / "MEMORY.md"
        await wait_for(pilot, lambda: shown_memory(app).summary.archival_count == 2)
        memory_file.write_text(memory_file.read_text().replace("saved by oryxtui", "edited"))
        await wait_for(pilot, lambda: shown_memory(app).summary.lost_count == 1)
        assert "Restore lost entries" in await palette_titles(pilot, app)


async def test_after_show_agent_from_the_palette_keys_are_the_dashboards(
    demo_workspace: Workspace,
) -> None:
    app = make_app(demo_workspace)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_for(pilot, lambda: loaded(app, "alpha"))
        await pilot.press("c")  # the chat input has the focus
        await wait_for(pilot, lambda: isinstance(app.focused, Input))
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: app.screen.query(CommandList))
        await paste(pilot, "show beta")
        await pilot.press("enter")
        await wait_for(pilot, lambda: loaded(app, "beta"))
        await wait_for(pilot, lambda: isinstance(app.focused, EntryView))
        await pilot.press("s")  # a key for the dashboard, not a letter for the chat
        await wait_for(pilot, lambda: isinstance(app.screen, SaveEntryScreen))
        await pilot.press("escape")


async def test_a_file_emptied_mid_save_keeps_the_last_good_content(
    demo_workspace: Workspace,
) -> None:
    app = make_app(demo_workspace)
    memory_file = demo_workspace.memory_file("alpha")
    full = memory_file.read_text()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: loaded(app, "alpha"))
        memory_file.write_text("")  # an editor that truncates, then writes
        banner = app.query_one("#agent-banner")
        await wait_for(pilot, lambda: "missing or empty" in str(banner.render()))
        assert archival_pane(app).view.row_count == 60
        agents = app.query_one(AgentList)  # the list's marker follows by its own message
        await wait_for(pilot, lambda: str(agents.get_option_at_index(0).prompt).startswith("⚠"))
        memory_file.write_text(full + "- back\n")
        await wait_for(pilot, lambda: archival_pane(app).view.row_count == 61)
        assert "missing" not in str(app.query_one("#agent-banner").render())


async def test_live_reload_while_a_modal_is_open(demo_workspace: Workspace) -> None:
    app = make_app(demo_workspace)
    memory_file = demo_workspace.memory_file("alpha")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: loaded(app, "alpha"))
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.focused, Input))
        await pilot.press(*"half typed")
        upstream_append(memory_file, "- arrived while the modal was open")
        await wait_for(pilot, lambda: archival_pane(app).view.row_count == 61)
        assert app.screen.query_one("#save-text", Input).value == "half typed"
        await pilot.press("enter")
        await wait_for(pilot, lambda: archival_pane(app).view.row_count == 62)


async def test_a_huge_entry_does_not_stall_the_dashboard(demo_workspace: Workspace) -> None:
    memory_file = demo_workspace.memory_file("beta")
    memory_file.write_text(
        f"{CORE_HEADER}\n{ARCHIVAL_HEADER}\n- [2026-07-22 09:30:00] {'w' * 2_000_000}\n"
    )
    app = make_app(demo_workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: loaded(app, "alpha"))
        app.query_one(AgentList).focus()
        started = time.monotonic()
        await pilot.press("down")
        await wait_for(pilot, lambda: loaded(app, "beta"))
        await pilot.pause(0.05)
        assert time.monotonic() - started < 5.0
        assert len(str(app.query_one("#archival-detail").render())) < 8200


async def test_an_agent_selected_after_one_with_few_entries_opens_at_its_newest(
    tmp_path: Path,
) -> None:
    """In the demo, atlas's five entries do not scroll and ops-bot's 70 do: selecting ops-bot
    must show its newest entries, not its oldest with the cursor out of sight below them."""
    workspace, _ = create_demo_workspace(tmp_path / "demo", clock=fixed_clock)
    app = make_app(workspace)
    async with app.run_test(size=(111, 32)) as pilot:
        await wait_for(pilot, lambda: loaded(app, "atlas"))
        await pilot.press("ctrl+p")
        await paste(pilot, "show ops-bot")
        await pilot.press("enter")
        await wait_for(pilot, lambda: loaded(app, "ops-bot"))
        newest = shown_memory(app).snapshot.archival[-1].content[:40]
        await wait_for(pilot, lambda: newest in "\n".join(shown_text(app, "#archival-view")))


async def test_a_big_file_opens_with_its_newest_entries_and_counts_the_rest(
    demo_workspace: Workspace,
) -> None:
    # About 2 KB: alpha's 60 entries count as a big file here.
    app = make_app(demo_workspace, Settings(tui=TuiSettings(large_file_mb=0.002)))
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_for(pilot, lambda: loaded(app, "alpha"))
        shown = archival_pane(app).view.row_count
        assert 0 < shown < 60
        await wait_for(pilot, lambda: "of 60" in str(archival_pane(app).border_title))
        assert f"Archival · newest {shown} of 60" in str(archival_pane(app).border_title)
        banner = str(app.dashboard.query_one("#agent-banner").render())
        assert f"showing the newest {shown} archival entries; {60 - shown} older ones" in banner
        assert "recall (r) searches all" in banner
        sidebar = app.query_one(AgentList)
        await wait_for(pilot, lambda: "1·60" in str(sidebar.get_option_at_index(0).prompt))
        await wait_for(pilot, lambda: "number 59" in "\n".join(shown_text(app, "#archival-view")))
        # Recall reaches the older entries the pane does not hold.
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.focused, Input))
        results = app.screen.query_one("#recall-results", OptionList)
        await pilot.press(*"number 1")
        await wait_for(pilot, lambda: results.option_count == 11)
        await pilot.press("escape")
        # Another process appends: the newest part follows, and the count catches up.
        memory_file = demo_workspace.agents_dir / "alpha" / "MEMORY.md"
        upstream_append(memory_file, "- [2026-07-22 10:00:00] brand new entry")
        await wait_for(pilot, lambda: "brand new" in "\n".join(shown_text(app, "#archival-view")))
        await wait_for(pilot, lambda: "of 61" in str(archival_pane(app).border_title), 20)


async def test_the_watch_says_when_it_starts_and_sees_every_write_after(
    demo_workspace: Workspace,
) -> None:
    """The dashboard reads the first agent before the watch is up; the watch says when it is,
    so what was written in between is read again (and everything after is reported)."""
    from oryxtui.watching import watch_workspace

    changes = watch_workspace(demo_workspace)
    first = await asyncio.wait_for(anext(changes), 10)
    assert first.armed and not first.memory
    upstream_append(demo_workspace.memory_file("beta"), "- right after the watch started")
    second = await asyncio.wait_for(anext(changes), 10)
    assert second.memory == {"beta"} and not second.armed
    await changes.aclose()
