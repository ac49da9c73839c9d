"""The command palette's dashboard commands: every action that applies now, and the agents."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from oryxtui.tui.overview import Unselected
from oryxtui.tui.screens.dashboard import DashboardScreen

Command = tuple[str, str, Callable[[], object]]  # title, help, what it does


def dashboard_commands(screen: DashboardScreen) -> list[Command]:
    """What the palette offers on the dashboard as it is now: every action that applies (a
    change the memory shown does not allow: with why), then the other agents."""
    commands = [*_memory_commands(screen), *_entry_commands(screen), *_view_commands(screen)]
    if screen.memory_view.lost_count:
        commands += [
            (
                "Restore lost entries",
                "Put back what an outside edit removed (R)",
                partial(screen.action_steer, "restore"),
            ),
            (
                "Accept the removal",
                "The outside edit meant it: stop reporting those entries (A)",
                partial(screen.action_steer, "accept"),
            ),
        ]
    commands = [_labelled(screen, command) for command in commands]
    for agent in screen.agent_list.order:
        if agent != screen.selected:
            name = "global memory" if agent is None else agent
            commands.append(
                (f"Show {name}", "Select it in the sidebar", partial(screen.show_agent, agent))
            )
    return commands


def _memory_commands(screen: DashboardScreen) -> list[Command]:
    """Saving, finding, editing the file, chat and the prompt."""
    commands: list[Command] = [
        ("Save an entry", "Save to the selected agent (s)", screen.action_save_entry),
        ("Recall", "Search the archival memory (r)", screen.action_recall),
    ]
    if screen.memory_view.memory_file is not None:
        commands.append(
            ("Edit MEMORY.md", "Open it in $EDITOR (e)", partial(screen.action_steer, "edit_file"))
        )
    return [
        *commands,
        ("Filter archival", "Narrow the archival pane (/)", partial(screen.action_steer, "filter")),
        ("Chat", "Talk to the selected agent (c)", screen.action_chat),
        ("Prompt preview", "What the model receives, block by block (p)", screen.action_prompt),
    ]


def _entry_commands(screen: DashboardScreen) -> list[Command]:
    """What acts on the entry at the cursor, and on repeated entries."""
    view = screen.memory_view
    commands: list[Command] = []
    entry = view.entry_at_cursor()
    if entry is not None and not isinstance(screen.selected, Unselected):
        other = "archival" if entry.scope.value == "core" else "core"
        commands += [
            (
                "Edit the entry",
                "Change the text of the entry at the cursor (i)",
                partial(screen.action_steer, "edit_entry"),
            ),
            ("Move the entry", f"To {other} (m)", partial(screen.action_steer, "move_entry")),
            (
                "Delete the entry",
                "Remove the entry at the cursor, after asking (x)",
                partial(screen.action_steer, "delete_entry"),
            ),
        ]
    shown = view.shown.snapshot if view.shown is not None else None
    if shown is not None and (shown.core_duplicates or shown.archival_duplicates):
        why = "Those with the words of an older one; the oldest stays (D)"
        commands.append(
            ("Remove repeated entries", why, partial(screen.action_steer, "remove_duplicates"))
        )
    return commands


def _view_commands(screen: DashboardScreen) -> list[Command]:
    """The views over the dashboard, the chat column and help."""
    return [
        ("History", "Every change to this memory, and bring back (h)", screen.action_history),
        (
            "Digest",
            "Summarise what left the injected window into one entry (g)",
            screen.action_consolidate,
        ),
        ("Sessions", "Past conversations, and a search over them (S)", screen.action_sessions),
        ("Review", "What agents wrote that awaits your approval (I)", screen.action_review),
        (
            "Hide or show the chat column",
            "Wider memory panes, or chat and prompt beside them (\\)",
            screen.action_toggle_side,
        ),
        ("Help", "Every key as bound now, the panes and their marks (?)", screen.action_help),
    ]


def _labelled(screen: DashboardScreen, command: Command) -> Command:
    """A change the memory shown does not allow is offered with why as its help (choosing it
    says so too, and changes nothing)."""
    title, _, run = command
    if isinstance(run, partial) and run.func.__name__ == "action_steer":
        action = str(run.args[0])  # a change to the memory shown, by its name
    else:
        action = getattr(run, "__name__", "").removeprefix("action_")
    why = screen.refusal(action)
    return (f"{title} (not allowed)", why, run) if why else command


class DashboardCommands(Provider):
    """Offered on the dashboard only: on a dialog, none of these apply."""

    def _commands(self) -> list[Command]:
        screen = self.screen
        return dashboard_commands(screen) if isinstance(screen, DashboardScreen) else []

    async def discover(self) -> Hits:
        for title, help_text, run in self._commands():
            yield DiscoveryHit(title, run, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, run in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), run, help=help_text)
