"""End to end: the installed `oryxtui` in tmux, driven by keys, read off the screen."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import oryxtui_executable, run_oryxtui
from tests.tmux import Terminal

# Real processes, terminals, browsers, installs or scale: one at a time (`--dist loadgroup`),
# so no two of them compete for the machine at the same moment.
pytestmark = [pytest.mark.system, pytest.mark.xdist_group("system")]


def test_save_with_keys_then_read_it_from_screen_and_file(
    terminal: Terminal, tmp_path: Path
) -> None:
    assert run_oryxtui("demo", str(tmp_path / "demo"), "--no-open").returncode == 0
    memory_file = tmp_path / "demo" / ".oryxos" / "agents" / "atlas" / "MEMORY.md"
    # `; sleep` keeps the pane readable if the app dies, so a failure shows its traceback.
    # A detached tmux pane can report 80x24 on a later resize query; pin the size Textual reads.
    terminal.start(
        f"env COLUMNS=120 LINES=40 {oryxtui_executable()} --root {tmp_path / 'demo'}; sleep 30"
    )
    terminal.wait(lambda: "Archival · 5" in terminal.screen(), "the dashboard")
    assert "atlas" in terminal.screen() and "ops-bot" in terminal.screen()
    terminal.keys("s")
    terminal.wait(lambda: "Save to agent atlas" in terminal.screen(), "the save modal")
    terminal.keys("entry typed in tmux [/bold]", literal=True)
    terminal.keys("Enter")
    # The rows and the pane's title can reach the terminal in two frames: wait for both.
    terminal.wait(
        lambda: (
            "Archival · 6" in (screen := terminal.screen())
            and "entry typed in tmux [/bold]" in screen
        ),
        "the new entry on screen",
    )
    assert (
        memory_file.read_text(encoding="utf-8")
        .rstrip("\n")
        .endswith("] entry typed in tmux [/bold]")
    )
    # A write by another process shows up without a key press.
    run_oryxtui("memory", "save", "--root", str(tmp_path / "demo"), "--agent", "atlas", "from cli")
    terminal.wait(
        lambda: "Archival · 7" in (screen := terminal.screen()) and "from cli" in screen,
        "the external write",
    )
    terminal.keys("q")
    terminal.wait(lambda: "Archival" not in terminal.screen(), "the dashboard to quit")


def test_demo_live_shows_a_simulated_agent_and_stops_it_on_quit(
    terminal: Terminal, tmp_path: Path
) -> None:
    demo = tmp_path / "live-demo"
    terminal.start(
        f"cd {tmp_path} && env COLUMNS=120 LINES=40 {oryxtui_executable()} demo {demo.name} --live"
        "; sleep 30"
    )
    terminal.wait(lambda: "Archival ·" in terminal.screen(), "the dashboard", timeout=90)
    memory_files = list((demo / ".oryxos").rglob("MEMORY.md"))
    before = sum(path.read_text(encoding="utf-8").count("\n- [") for path in memory_files)
    terminal.wait(
        lambda: sum(p.read_text(encoding="utf-8").count("\n- [") for p in memory_files) > before,
        "the simulated agent to save an entry",
        timeout=45,
    )
    terminal.wait(lambda: "●" in terminal.screen(), "a changed-memory marker in the sidebar")
    terminal.keys("q")
    terminal.wait(lambda: "Archival" not in terminal.screen(), "the dashboard to quit")
    # The screen is restored just before the dashboard stops the simulator: allow a moment.
    terminal.wait(
        lambda: not _processes_mentioning("oryxtui.simulate", str(demo)),
        "the simulated agent to stop with the dashboard",
        timeout=30,
    )


def _processes_mentioning(*words: str) -> list[str]:
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if all(word in text for word in words):
            found.append(text)
    return found


def fake_editor(path: Path, text: str) -> Path:
    """An editor that appends one dated entry holding `text` to the file it is given."""
    path.write_text(f'#!/bin/sh\necho "- [2026-07-22 10:00:00] {text}" >> "$1"\n')
    path.chmod(0o755)
    return path


def test_editor_key_hands_the_file_over_and_reloads_after(
    terminal: Terminal, tmp_path: Path
) -> None:
    assert run_oryxtui("demo", str(tmp_path / "demo"), "--no-open").returncode == 0
    editor = fake_editor(tmp_path / "fake-editor", "written in the editor")
    terminal.start(
        f"env COLUMNS=120 LINES=40 EDITOR={editor} {oryxtui_executable()} "
        f"--root {tmp_path / 'demo'}; sleep 30"
    )
    terminal.wait(lambda: "Archival · 5" in terminal.screen(), "the dashboard")
    terminal.keys("e")
    terminal.wait(lambda: "written in the editor" in terminal.screen(), "the edit on screen")
    # The rows and the pane's title can reach the terminal in two frames.
    terminal.wait(lambda: "Archival · 6" in terminal.screen(), "the new count")
    memory_file = tmp_path / "demo" / ".oryxos" / "agents" / "atlas" / "MEMORY.md"
    assert memory_file.read_text(encoding="utf-8").endswith("written in the editor\n")


def test_without_an_editor_set_the_editor_key_says_which_it_opened(
    terminal: Terminal, tmp_path: Path
) -> None:
    assert run_oryxtui("demo", str(tmp_path / "demo"), "--no-open").returncode == 0
    bin_folder = tmp_path / "bin"
    bin_folder.mkdir()
    fake_editor(bin_folder / "vi", "written in vi")  # what is opened when nothing is chosen
    terminal.start(
        f"env -u EDITOR -u VISUAL PATH={bin_folder}:$PATH COLUMNS=120 LINES=40 "
        f"{oryxtui_executable()} --root {tmp_path / 'demo'}; sleep 30"
    )
    terminal.wait(lambda: "Archival · 5" in terminal.screen(), "the dashboard")
    terminal.keys("e")
    terminal.wait(lambda: "written in vi" in terminal.screen(), "the edit on screen")
    terminal.wait(
        lambda: "Opened vi, as neither $VISUAL nor $EDITOR" in terminal.screen(), "which editor"
    )


def test_chat_in_the_dashboard_saves_and_the_prompt_shows_it(
    terminal: Terminal, tmp_path: Path
) -> None:
    assert run_oryxtui("demo", str(tmp_path / "demo"), "--no-open").returncode == 0
    terminal.start(
        f"env COLUMNS=160 LINES=45 {oryxtui_executable()} --root {tmp_path / 'demo'}; sleep 30",
        160,
        45,
    )
    terminal.wait(lambda: "Archival · 5" in terminal.screen(), "the dashboard")
    terminal.wait(lambda: "Save" in terminal.screen().splitlines()[-1], "the footer keys")
    terminal.keys("c")
    # The footer drops the single-letter keys once the chat input has the focus.
    terminal.wait(lambda: "Save" not in terminal.screen().splitlines()[-1], "the chat input")
    terminal.keys("remember that the deploy window is Tuesday 14:00", literal=True)
    terminal.keys("Enter")
    terminal.wait(lambda: "Noted in archival memory." in terminal.screen(), "the reply")
    # The turn is over when the input has the focus again (the footer drops the single keys).
    terminal.wait(
        lambda: (
            "model: offline model" in (screen := terminal.screen())
            and "Save" not in screen.splitlines()[-1]
        ),
        "the end of the turn",
    )
    terminal.wait(
        lambda: (
            "Archival · 6" in (screen := terminal.screen())
            and "the deploy window is Tuesday 14:00" in screen
        ),
        "the entry (and no footprint)",
    )
    terminal.keys("Escape")
    # Nothing more is sent until the escape is handled: an ESC followed at once by "p" would be
    # read as alt+p.
    terminal.wait(lambda: "Save" in terminal.screen().splitlines()[-1], "focus back on the panes")
    terminal.keys("p")
    terminal.wait(lambda: "memory · " in terminal.screen(), "the prompt preview")
    screen = terminal.screen()
    assert "changed" in screen or "the deploy window is Tuesday" in screen


def test_edit_then_history_then_bring_back(terminal: Terminal, tmp_path: Path) -> None:
    """The newest entry is edited with keys; the history view shows the edit; `b` brings the
    old text back into MEMORY.md, with its time."""
    assert run_oryxtui("demo", str(tmp_path / "demo"), "--no-open").returncode == 0
    memory_file = tmp_path / "demo" / ".oryxos" / "agents" / "atlas" / "MEMORY.md"
    old = [line for line in memory_file.read_text().splitlines() if line.startswith("- [")][-1]
    terminal.start(
        f"env COLUMNS=120 LINES=40 {oryxtui_executable()} --root {tmp_path / 'demo'}; sleep 30"
    )
    terminal.wait(lambda: "Archival · 5" in terminal.screen(), "the dashboard")
    focus_archival(terminal)
    terminal.keys("i")
    terminal.wait(lambda: "Edit the archival entry" in terminal.screen(), "the edit dialog")
    terminal.keys(" (rewritten in tmux)", literal=True)  # after the old text, in the field
    terminal.wait(lambda: "(rewritten in tmux)" in terminal.screen(), "the typed text")
    terminal.keys("Enter")
    terminal.wait(lambda: "(rewritten in tmux)" in memory_file.read_text(), "the edit on disk")
    assert old not in memory_file.read_text()
    terminal.wait(lambda: "Edit the archival" not in terminal.screen(), "the dialog closed")
    terminal.keys("h")
    terminal.wait(lambda: "edited by dashboard" in terminal.screen(), "the history view")
    terminal.wait(lambda: "Memory right after #" in terminal.screen(), "the memory then")
    terminal.keys("b")
    terminal.wait(lambda: old in memory_file.read_text(), "the old text back on disk")
    terminal.wait(lambda: "brought back by" in terminal.screen(), "the new change")
    terminal.keys("Escape")
    terminal.wait(lambda: "Archival · 6" in terminal.screen(), "the dashboard again")


def focus_archival(terminal: Terminal) -> None:
    """Tab to the archival pane (the focused pane's border is heavy): the entry keys act on
    the focused pane, and the footer then shows them."""

    def focused() -> str:  # the focused pane's title: the one drawn with a heavy border
        line = next((line for line in terminal.screen().splitlines() if "┏━" in line), "")
        return line.split("┏━", 1)[1].split()[0] if "┏━" in line else ""

    for _ in range(6):
        now = focused()
        if now == "Archival":
            break
        terminal.keys("Tab")  # then wait until another pane has the border, not any redraw
        terminal.wait(lambda now=now: focused() not in ("", now), "the focus to move", timeout=10)
    terminal.wait(lambda: "┏━ Archival" in terminal.screen(), "the archival pane's focus")
    terminal.wait(lambda: "i Edit" in terminal.screen().splitlines()[-1], "the entry keys")


def test_wide_panes_and_no_typing_into_a_hidden_chat(terminal: Terminal, tmp_path: Path) -> None:
    """At 160 columns the memory panes have the width (a long entry's first 90 characters are
    on screen) until the chat opens; a hidden chat column never takes typing: c opens it."""
    assert run_oryxtui("demo", str(tmp_path / "demo"), "--no-open").returncode == 0
    memory_file = tmp_path / "demo" / ".oryxos" / "agents" / "atlas" / "MEMORY.md"
    lines = [line for line in memory_file.read_text().splitlines() if line.startswith("- [")]
    second_newest = lines[-2].split("] ", 1)[1]
    terminal.start(
        f"env COLUMNS=160 LINES=45 {oryxtui_executable()} --root {tmp_path / 'demo'}; sleep 30",
        160,
        45,
    )
    terminal.wait(lambda: "Archival · 5" in terminal.screen(), "the dashboard")
    assert second_newest[:90] in terminal.screen()
    terminal.keys("\\", literal=True)
    terminal.wait(lambda: "Chat" in terminal.screen().splitlines()[1], "the column shown")
    terminal.keys("\\", literal=True)
    terminal.wait(lambda: "Chat" not in terminal.screen().splitlines()[1], "the column hidden")
    terminal.keys("c")
    terminal.wait(lambda: "Save" not in terminal.screen().splitlines()[-1], "the chat input")
    terminal.keys("remember that typing is seen", literal=True)
    terminal.wait(lambda: "typing is seen" in terminal.screen(), "the typed text on screen")
    terminal.keys("Enter")
    terminal.wait(lambda: "Noted in archival memory." in terminal.screen(), "the reply")
    assert "] typing is seen" in memory_file.read_text()


def test_an_mcp_clients_save_shows_live_in_history_and_inbox(
    terminal: Terminal, tmp_path: Path
) -> None:
    import threading

    import anyio
    import mcp_types as types
    from mcp import Client, StdioServerParameters

    demo = tmp_path / "demo"
    assert run_oryxtui("demo", str(demo), "--no-open").returncode == 0
    with (demo / ".oryxos" / "config.toml").open("a", encoding="utf-8") as config:
        config.write("\n[mcp]\nhold = false\n")  # a trusted client: its saves go in at once
    terminal.start(f"env COLUMNS=120 LINES=40 {oryxtui_executable()} --root {demo}; sleep 30")
    terminal.wait(lambda: "Archival · 5" in terminal.screen(), "the dashboard")

    async def client_saves() -> None:
        launched = StdioServerParameters(
            command=oryxtui_executable(), args=["mcp", "--agent", "atlas", "--root", str(demo)]
        )
        info = types.Implementation(name="tmux-client", version="1")
        async with Client(launched, mode="legacy", client_info=info) as client:
            result = await client.call_tool("save_memory", {"content": "saved over MCP"})
            assert not result.is_error

    # The mark fades after a few seconds: read the screen while the client is still closing.
    client = threading.Thread(target=anyio.run, args=(client_saves,))
    client.start()
    terminal.wait(
        lambda: any(
            "saved over MCP" in line and "+" in line.split("saved over MCP")[0]
            for line in terminal.screen().splitlines()
        ),
        "the client's entry, marked +",
    )
    client.join(timeout=60)
    terminal.keys("h")
    terminal.wait(lambda: "mcp:tmux-client" in terminal.screen(), "the history naming the client")
    terminal.keys("Escape")
    terminal.wait(lambda: "mcp:tmux-client" not in terminal.screen(), "the history to close")
    terminal.keys("I")
    terminal.wait(
        lambda: (
            "saved over MCP" in (screen := terminal.screen())
            and "saved by mcp:tmux-client" in screen
        ),
        "the entry in the review inbox",
    )
    terminal.keys("Escape")
    terminal.keys("q")
    terminal.wait(lambda: "Archival" not in terminal.screen(), "the dashboard to quit")
