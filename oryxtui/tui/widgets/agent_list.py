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
    style = "italic" if summary.name is None else "bold" if summary.has_definition else "dim"
    label.append(name.ljust(room), style=style)
    label.append(f" {counts}", style="dim")
    if summary.error or summary.lost_count:
        label.stylize("red", 0, 1)
    elif changed:
        label.stylize("green", 0, 1)
    return label


class AgentList(OptionList):
    """Attributes down: the app hands it summaries; it posts OptionList messages up."""

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id)
        # What each row was drawn from, by option id, in order: (summary, changed, width).
        self._shown: dict[str, tuple[AgentSummary, bool, int]] = {}

    def set_agents(self, summaries: Iterable[AgentSummary], changed: set[str | None]) -> None:
        """Show these agents. With the same agents in the same order, only the rows whose label
        changed are redrawn: 500 agents' counts arrive in many batches."""
        width = max(16, self.scrollable_content_region.width or 26)
        wanted = [(option_id(s.name), (s, s.name in changed, width)) for s in summaries]
        ids = [option_id_ for option_id_, _ in wanted]
        shown = self._shown
        if ids == list(shown):
            for index, (option_id_, key) in enumerate(wanted):
                if shown[option_id_] != key:
                    shown[option_id_] = key
                    self.replace_option_prompt_at_index(index, agent_label(*key))
            return
        highlighted = self.highlighted_option.id if self.highlighted_option else None
        self.set_options(Option(agent_label(*key), id=option_id_) for option_id_, key in wanted)
        self._shown = dict(wanted)
        if highlighted in ids:
            self.highlighted = ids.index(highlighted)
