"""The recall modal: a keyword, live results as you type, matches highlighted. Enter on a hit
shows it (its agent selected, its pane focused, the cursor on it, so i, m and x act on it);
y copies it. The core entries that hold the words come first, marked core.

Hybrid recall shows each hit's routes (semantic, keyword, lexical, recency) with its rank in
each. The cheap routes answer every keystroke; meaning (an embedder round trip) once typing
pauses."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from oryxtui.errors import OryxError
from oryxtui.memory.format import MemoryEntry
from oryxtui.memory.recall.results import Hit, IndexStatus, Recall
from oryxtui.memory.tokens import bigrams, pattern, tokens
from oryxtui.phrases import agent_label
from oryxtui.tui.text import display_text, tell
from oryxtui.workspace import AgentName

Recaller = Callable[[str, bool], Recall]  # (keyword, semantic) → what was found
# (query, every agent) → the core entries holding it, each with its agent
CoreFinder = Callable[[str, bool], list[tuple[AgentName, MemoryEntry]]]


@dataclass(frozen=True)
class Found:
    """One result: whose memory it is in, the entry, and how recall ranked it (None: core)."""

    agent: AgentName
    entry: MemoryEntry
    hit: Hit | None = None


MAX_SHOWN = 500
SEMANTIC_PAUSE = 0.35  # seconds of no typing before the semantic route runs
ROUTE_LETTERS = {"semantic": "meaning", "keyword": "keyword", "lexical": "words", "recency": "time"}


def routes_text(hit: Hit) -> Text:
    """Which routes found the hit, and its rank in each: `meaning #2 · words #1 · time #40`."""
    parts = []
    for name, route in hit.routes.items():
        label = ROUTE_LETTERS.get(name, name)
        own = f" {route.score:.2f}" if name == "semantic" and route.score is not None else ""
        parts.append(f"{label} #{route.rank}{own}")
    text = Text("    " + " · ".join(parts), style="dim")
    if hit.score is not None:
        text.append(f"   score {hit.score:.4f}", style="dim")
    return text


def index_text(index: IndexStatus | None) -> str:
    """`index 9,998/10,000 · nomic-embed-text`, the mock labelled as meaningless."""
    if index is None:
        return ""
    model = index.model.split("/", 1)[-1]
    if index.meaningless:
        model = f"{index.model} (meaningless: for tests and demos)"
    return f"index {index.indexed:,}/{index.entries:,} · {model}"


def highlighted(line: str, keyword: str, words: bool = False) -> Text:
    """The line as literal text, every case-insensitive occurrence of `keyword` highlighted;
    with `words`, each of its words too (what the lexical route matched)."""
    shown = display_text(line)
    text = Text(shown)
    lowered = shown.lower()
    if len(lowered) != len(shown):  # lower() moved the offsets: nothing to align
        return text
    needle = keyword.lower()
    start = lowered.find(needle) if needle.strip() else -1
    while start >= 0:
        text.stylize("bold reverse", start, start + len(needle))
        start = lowered.find(needle, start + len(needle))
    for begin, end in _matched_words(lowered, keyword) if words else ():
        text.stylize("bold reverse", begin, end)
    return text


def _matched_words(lowered: str, keyword: str) -> Iterator[tuple[int, int]]:
    """Where the line holds the keyword's words as the lexical route matched them: whole words
    ("I" never lights the i of "connection"), and a CJK run by its bigrams."""
    wanted = set(tokens(keyword))
    is_cjk = pattern("is_cjk").match
    for match in pattern("token").finditer(lowered):
        word, at = match.group(), match.start()
        if not is_cjk(word):
            if word in wanted:
                yield match.span()
            continue
        for offset, pair in enumerate(bigrams(word)):
            if pair in wanted:
                yield at + offset, at + offset + len(pair)


class RecallScreen(ModalScreen[Found | None]):
    """Dismissed with the result to show (enter), or None."""

    BINDINGS = [
        Binding("escape", "close", "Close", id="recall.close"),
        Binding("down", "focus_results", "Results", show=False),
        Binding("ctrl+t", "everywhere", "All agents", id="recall.everywhere"),
        Binding("y", "copy", "Copy", id="recall.copy"),
    ]

    def __init__(
        self,
        agent: AgentName,
        recall: Recaller,
        ranked: bool = False,
        embeds: bool = False,
        recall_across: Recaller | None = None,
        find_core: CoreFinder | None = None,
    ) -> None:
        super().__init__()
        self.agent = agent
        self.agent_label = agent_label(agent)
        self.own_recall = recall
        self.recall_across = recall_across  # every agent at once (ctrl+t)
        self.find_core = find_core
        self.everywhere = False
        self.ranked = ranked
        self.embeds = embeds  # an embedder answers: meaning waits for a pause in typing
        self.rows: list[Found] = []  # as listed
        self._pause: Timer | None = None
        self._semantic_done = ""  # the keyword the semantic route last answered

    def compose(self) -> ComposeResult:
        with Vertical(id="recall-dialog", classes="dialog"):
            yield Label(self._title(), id="recall-title", classes="dialog-title", markup=False)
            yield Input(placeholder="keyword", id="recall-keyword")
            yield Static("", id="recall-status", classes="dialog-hint", markup=False)
            yield OptionList(id="recall-results")
            across = " · ctrl+t all agents" if self.recall_across is not None else ""
            yield Static(
                f"type to search · ↓ to the results · enter shows it · y copies{across} · "
                "escape closes",
                classes="dialog-hint",
                markup=False,
            )

    def _title(self) -> str:
        where = "every agent" if self.everywhere else self.agent_label
        order = "most relevant first" if self.ranked else "case-insensitive"
        return f"Recall from {where} (core holding the words, then archival, {order})"

    def recall(self, keyword: str, semantic: bool) -> Recall:
        if self.everywhere and self.recall_across is not None:
            return self.recall_across(keyword, semantic)
        return self.own_recall(keyword, semantic)

    def action_everywhere(self) -> None:
        """Search every agent's memory, or only this agent's again."""
        if self.recall_across is None:
            return
        self.everywhere = not self.everywhere
        self.query_one("#recall-title", Label).update(self._title())
        keyword = self.query_one("#recall-keyword", Input).value
        self._semantic_done = ""
        self._run_recall(keyword, semantic=True)

    @on(Input.Changed, "#recall-keyword")
    def _search(self, event: Input.Changed) -> None:
        self._run_recall(event.value, semantic=not self.embeds)
        if self._pause is not None:
            self._pause.stop()
        if self.embeds:
            keyword = event.value
            self._pause = self.set_timer(
                SEMANTIC_PAUSE, lambda: self._run_recall(keyword, semantic=True)
            )

    @on(Input.Submitted, "#recall-keyword")
    def _to_results(self) -> None:
        self.action_focus_results()

    @work(thread=True, exclusive=True, exit_on_error=False, group="recall")
    def _run_recall(self, keyword: str, semantic: bool) -> None:
        if not keyword.strip():
            self.app.call_from_thread(self._show, keyword, None, [], None)
            return
        try:
            found = self.recall(keyword, semantic)
            core = self.find_core(keyword, self.everywhere) if self.find_core else []
        except OryxError as exc:
            self.app.call_from_thread(self._show, keyword, None, [], str(exc))
            return
        self.app.call_from_thread(self._show, keyword, found, core, None)

    def _show(
        self,
        keyword: str,
        found: Recall | None,
        core: list[tuple[AgentName, MemoryEntry]],
        error: str | None,
    ) -> None:
        if keyword != self.query_one("#recall-keyword", Input).value:
            return  # a newer keyword is on its way
        if found is not None and found.semantic == "deferred" and self._semantic_done == keyword:
            return  # the full answer for this keyword is already shown
        if found is not None and found.semantic != "deferred":
            self._semantic_done = keyword
        hits = found.hits if found is not None else []
        ranked = found is not None and found.mode != "keyword"
        shown = hits[:MAX_SHOWN] if ranked else hits[-MAX_SHOWN:]
        own = self.agent
        self.rows = [Found(agent, entry) for agent, entry in core] + [
            Found(hit.agent if self.everywhere else own, hit.entry, hit) for hit in shown
        ]
        results = self.query_one("#recall-results", OptionList)
        results.set_options(
            Option(self._prompt(row, keyword, ranked, self.everywhere), id=str(index))
            for index, row in enumerate(self.rows)
        )
        status = self.query_one("#recall-status", Static)
        status.set_class(bool(error or (found and found.notice)), "error")
        if error:
            status.update(error)
        elif found is not None:
            status.update(self._status(found, len(hits), len(core)))
        else:
            status.update("")

    @staticmethod
    def _prompt(row: Found, keyword: str, ranked: bool, everywhere: bool = False) -> Text:
        hit = row.hit
        words = hit is None or "lexical" in hit.routes
        text = highlighted(row.entry.line, keyword, words=words)
        if hit is None:  # a core entry: always in the prompt, found here to reach it
            text = Text("core  ", style="bold") + text
        if everywhere:  # whose memory it is in, first
            owner = Text(f"{display_text(row.agent or 'global')}  ", style="bold")
            text = owner + text
        if ranked and hit is not None and hit.routes:
            text.append("\n")
            text.append_text(routes_text(hit))
        return text

    @staticmethod
    def _status(found: Recall, count: int, core: int = 0) -> str:
        noun = "match" if count == 1 else "matches"
        also = f" (and {core} in core)" if core else ""
        if found.mode == "keyword":
            more = f" (newest {MAX_SHOWN} shown)" if count > MAX_SHOWN else ""
            return f"{count} archival {noun}{more}{also}"
        parts = [f"{count} archival {noun}, best first{also}"]
        if found.semantic == "deferred":
            parts.append("meaning when you pause…")
        elif found.semantic == "failed":
            parts.append(f"meaning unavailable: {found.problem} {found.notice}")
        if index := index_text(found.index):
            parts.append(index)
        return " · ".join(parts)

    @on(OptionList.OptionSelected, "#recall-results")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        """Enter on a result: close, and the dashboard shows it."""
        self.dismiss(self.rows[int(event.option.id or 0)])

    def action_copy(self) -> None:
        """Copy the highlighted result's line (the terminal must allow clipboard writes)."""
        results = self.query_one("#recall-results", OptionList)
        if results.highlighted is None or not 0 <= results.highlighted < len(self.rows):
            return
        self.app.copy_to_clipboard(self.rows[results.highlighted].entry.line)
        tell(self, "Copied the entry's line to the clipboard.", title="Recall")

    def action_focus_results(self) -> None:
        results = self.query_one("#recall-results", OptionList)
        if results.option_count:
            results.focus()
            if results.highlighted is None:
                results.highlighted = 0

    def action_close(self) -> None:
        self.dismiss(None)
