"""The help screen (`?`): every key the dashboard answers now, read from the live bindings (a
key rebound in `[tui.keymap]` shows as rebound), what each pane shows and what its marks mean."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import ActiveBinding, Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Label, Static

PANES = (
    ("Agents", "every agent, then the global memory; core·archival counts"),
    ("Core", "always injected into the prompt, whole"),
    ("Archival", "the running record; only the newest ~4000 characters are injected"),
    ("Chat", "talk to the selected agent through the memory-aware loop"),
    ("Prompt", "exactly what the model receives, block by block, with sizes"),
    ("History (h)", "every change with who made it; the memory as it was; bring back"),
    ("Sessions (S)", "past conversations, their turns, and a search over all of them"),
)
MARKS = (
    ("●", "the agent's memory changed in the last few seconds"),
    ("⚠", "a file that cannot be read, parsed, or that links outside the workspace"),
    ("○", "an archival entry outside the injected window: kept and recalled, not injected"),
    ("+", "an entry that just arrived (or, in the history, added by that change)"),
    ("=", "an entry that repeats an older one of its section (D removes the repeats)"),
    ("Σ", "a digest: one archival entry summarising entries that left the window (g)"),
    ("~", "an entry a digest covers: it stays in the memory and stays recallable"),
    ("✗", "in the history: an entry that is gone now (b brings it back)"),
    (
        "⧗N",
        "beside an agent: N changes (an MCP client's or a held agent's) wait for review outside "
        "its memory, in no prompt until approved — I opens the inbox to approve or reject them",
    ),
)


def elsewhere() -> list[tuple[str, list[Binding]]]:
    """The places whose keys help teaches wherever you are."""
    from oryxtui.tui.screens.review import ReviewScreen
    from oryxtui.tui.widgets.entry_view import EntryView

    def bindings(owner: Any) -> list[Binding]:
        return [b for b in owner.BINDINGS if isinstance(b, Binding)]

    return [
        (EntryView.HELP_PLACE, bindings(EntryView)),
        ("In the review inbox (I)", bindings(ReviewScreen)),
    ]


# Textual's own scrolling keys of every scrollable widget: not the dashboard's to teach.
LOW_LEVEL = ("scroll_", "page_left", "page_right")


def key_rows(
    bindings: Mapping[str, ActiveBinding], display: Mapping[str, str]
) -> list[tuple[str, str]]:
    """(the keys, what they do): one row per action, every key that runs it as bound now; an
    action not allowed now (dimmed in the footer) says so."""
    actions: dict[tuple[int, str], tuple[ActiveBinding, list[str]]] = {}
    for key, active in bindings.items():
        binding = active.binding
        if not binding.description or binding.system or binding.action.startswith(LOW_LEVEL):
            continue
        found = actions.setdefault((id(active.node), binding.action), (active, []))
        found[1].append(display.get(key, key))
    return [
        (" ".join(dict.fromkeys(keys)), _described(active)) for active, keys in actions.values()
    ]


def _described(active: ActiveBinding) -> str:
    text = active.binding.description
    return text if active.enabled else f"{text} (not allowed here now)"


def key_groups(
    bindings: Mapping[str, ActiveBinding],
    display: Mapping[str, str],
    anywhere: set[int],
    elsewhere: Sequence[tuple[str, Sequence[Binding]]] = (),
    keymap: Mapping[str, str] | None = None,
) -> list[tuple[str, list[tuple[str, str]]]]:
    """The keys grouped by where they apply: those of the focused place first (titled by its
    HELP_PLACE, e.g. "On an entry", marked as where you are), then the places you are not in
    (`elsewhere`: their titles and bindings, keys as `keymap` rebinds them), then those that
    work anywhere (the nodes in `anywhere`, by id: the screen and the app)."""
    groups: dict[str, dict[str, ActiveBinding]] = {}
    for key, active in bindings.items():
        place = "Anywhere" if id(active.node) in anywhere else _place(active.node)
        groups.setdefault(place, {})[key] = active
    ordered = sorted(groups.items(), key=lambda item: item[0] == "Anywhere")
    found = [(place, rows) for place, given in ordered if (rows := key_rows(given, display))]
    here = {place for place, _ in found}
    others = [
        (place, rows)
        for place, listed in elsewhere
        if place not in here and (rows := _class_rows(listed, keymap or {}))
    ]
    marked = [(f"{place} — here" if place != "Anywhere" else place, rows) for place, rows in found]
    return [*marked[:-1], *others, *marked[-1:]] if found else others


def _class_rows(bindings: Sequence[Binding], keymap: Mapping[str, str]) -> list[tuple[str, str]]:
    """A place's own keys when it is not the focused one: as declared, or as rebound (those
    kept out of the footer too, when they are actions of their own — an id — not moves)."""
    rows = []
    for binding in bindings:
        hidden = not binding.show and not binding.id
        if not binding.description or binding.action.startswith(LOW_LEVEL) or hidden:
            continue
        keys = keymap.get(binding.id or "", binding.key)
        rows.append((" ".join(key.strip() for key in keys.split(",")), binding.description))
    return rows


def _place(node: object) -> str:
    return str(getattr(node, "HELP_PLACE", "") or "Here")


def _table(rows: list[tuple[str, str]]) -> Table:
    table = Table(box=None, show_header=False, padding=(0, 2, 0, 0))
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    for first, second in rows:
        table.add_row(first, second)
    return table


def help_for(screen: Screen[Any]) -> HelpScreen:
    """Every key that applies on `screen` now — the focused place's and those that work
    anywhere — as Textual has them bound (the footer's are among them), and every other group."""
    app = screen.app
    bindings = screen.active_bindings
    display = {key: app.get_key_display(Binding(key, "")) for key in bindings}
    keymap = getattr(app, "_keymap", {})  # textual==8.2.8 (pinned): as rebound
    return HelpScreen(key_groups(bindings, display, {id(screen), id(app)}, elsewhere(), keymap))


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,question_mark,q", "dismiss", "Close", id="help.close")]

    def __init__(self, groups: list[tuple[str, list[tuple[str, str]]]]) -> None:
        super().__init__()
        self.groups = groups
        self.rows = [row for _, rows in groups for row in rows]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-dialog", classes="dialog"):
            yield Label("Keys (as bound now)", classes="dialog-title")
            for place, rows in self.groups:
                yield Label(place, classes="dialog-hint")
                yield Static(_table(rows), classes="help-keys")
            yield Static(
                "↑ ↓ pgup pgdn home end move in a pane · tab / shift+tab: next / previous pane · "
                "R restores and A accepts when an outside edit removed entries oryxtui saved",
                classes="dialog-hint",
            )
            yield Label("Panes", classes="dialog-title")
            yield Static(_table(list(PANES)))
            yield Label("Marks", classes="dialog-title")
            yield Static(_table(list(MARKS)))
            yield Static(
                Text("escape, ? or q closes · the mouse clicks agents and entries and scrolls"),
                classes="dialog-hint",
            )

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(result)
