"""The agents sidebar: every agent, then the global memory, with counts and markers."""

from __future__ import annotations

from collections.abc import Iterable

from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from oryxtui.tui.overview import AgentSummary

GLOBAL_ID = "::global::"  # cannot collide with an agent name ([A-Za-z0-9_-]+)
CHANGED = "●"
ERROR = "⚠"


def option_id(name: str | None) -> str:
    return GLOBAL_ID if name is None else name


def agent_of(option_id_: str | None) -> str | None:
    return None if option_id_ in (None, GLOBAL_ID) else option_id_


def agent_label(summary: AgentSummary, changed: bool, width: int = 24) -> Text:
    mark = ERROR if summary.error or summary.lost_count else CHANGED if changed else " "
    name = "(global memory)" if summary.name is None else summary.name
    if summary.core_count is None or summary.archival_count is None:
        counts = "…" if not summary.error else "?"
    else:
        counts = f"{summary.core_count}·{summary.archival_count}"
    room = max(4, width - len(counts) - 3)
    if len(name) > room:
        name = name[: room - 1] + "…"
    label = Text(f"{mark} ")
    label.append(name.ljust(room), style="bold" if summary.name is not None else "italic")
    label.append(f" {counts}", style="dim")
    if summary.error or summary.lost_count:
        label.stylize("red", 0, 1)
    elif changed:
        label.stylize("green", 0, 1)
    return label


class AgentList(OptionList):
    """Attributes down: the app hands it summaries; it posts OptionList messages up."""

    def set_agents(self, summaries: Iterable[AgentSummary], changed: set[str | None]) -> None:
        highlighted = self.highlighted_option.id if self.highlighted_option else None
        width = max(16, self.scrollable_content_region.width or 26)
        options = [
            Option(agent_label(s, s.name in changed, width), id=option_id(s.name))
            for s in summaries
        ]
        self.set_options(options)
        ids = [option.id for option in options]
        if highlighted in ids:
            self.highlighted = ids.index(highlighted)
