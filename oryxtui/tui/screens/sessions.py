"""The sessions view (`S`): an agent's past conversations, newest first, each session's turns,
and a search over all of them; enter on a hit opens its session at that turn."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from oryxtui.agent.episodes import Episode

if TYPE_CHECKING:
    from oryxtui.places import Episodes, Loop
from oryxtui.errors import OryxError
from oryxtui.phrases import agent_label, counted
from oryxtui.tui.text import display_text
from oryxtui.workspace import AgentName

SEARCH_PAUSE = 0.2


def turn_text(episode: Episode, marked: bool = False) -> Text:
    text = Text()
    tools = f"  [{', '.join(episode.tools)}]" if episode.tools else ""
    header = f"#{episode.turn}  {episode.time or '?'}{tools}\n"
    text.append(("▶ " if marked else "") + header, style="bold reverse" if marked else "bold")
    text.append("you: ", style="dim")
    text.append(display_text(episode.user) + "\n")
    text.append("reply: ", style="dim")
    text.append("\n".join(display_text(line) for line in episode.reply.split("\n")) + "\n")
    return text


class SessionsScreen(Screen[None]):
    BINDINGS = [
        Binding("escape", "back", "Back", id="sessions.back"),
        Binding("slash", "search", "Search", id="sessions.search"),
        Binding("ctrl+t", "turn_prompt", "Prompt sent", id="sessions.prompt"),
    ]

    def __init__(
        self,
        agent_loop: Callable[[], Loop],
        agent: AgentName,
        at: tuple[str, int | None] | None = None,
    ) -> None:
        super().__init__()
        self.agent_loop = agent_loop  # its episode store (made in a worker: it loads the loop)
        self.agent = agent
        self.at = at  # a session (and turn) to open at: where an entry came from
        self.sessions: list[dict[str, object]] = []
        self.hits: list[Episode] = []
        self.turns: list[Episode] = []
        self._pause: Timer | None = None

    def compose(self) -> ComposeResult:
        yield Label(f"Conversations of {agent_label(self.agent)}", id="sessions-title")
        yield Input(placeholder="search every turn (/)", id="sessions-search")
        with Horizontal(id="sessions-body"):
            listed = OptionList(id="sessions-list")
            listed.border_title = "Sessions, newest first"
            yield listed
            with VerticalScroll(id="sessions-turns") as turns:
                turns.border_title = "Turns"
                yield Static("", id="sessions-text")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()
        self._load_sessions()

    def action_turn_prompt(self) -> None:
        """What the model received in the turn opened at (or the shown session's last)."""
        from oryxtui.tui.screens.turn_prompt import TurnPromptScreen

        if not self.turns:
            return
        session = self.turns[0].session_id
        at = self.at
        turn = at[1] if at is not None and at[0] == session and at[1] is not None else None
        turn = self.turns[-1].turn if turn is None else turn
        self.app.push_screen(TurnPromptScreen(self.agent_loop, session, turn))

    def reload(self) -> None:
        """List the sessions again (a turn happened elsewhere), unless a search is shown; the
        highlighted session stays highlighted."""
        if not self.hits:
            self._load_sessions()

    @property
    def store(self) -> Episodes:
        """The loop's episode store (call from workers: the first call loads the loop)."""
        return self.agent_loop().episodes

    @work(thread=True, exclusive=True, exit_on_error=False, group="sessions")
    def _load_sessions(self) -> None:
        try:
            found = self.store.sessions(self.agent)
        except OryxError as exc:
            self.app.call_from_thread(self._say, str(exc))
            return
        self.app.call_from_thread(self._show_sessions, found)

    def _say(self, message: str) -> None:
        self.query_one("#sessions-title", Label).update(display_text(message))

    def _show_sessions(self, found: Sequence[dict[str, object]]) -> None:
        listed = self.query_one(OptionList)
        was = listed.highlighted
        before = (
            str(self.sessions[was]["session"])
            if was is not None and was < len(self.sessions)
            else None
        )
        self.sessions, self.hits = list(found), []
        listed.border_title = f"Sessions, newest first · {len(found)}"
        listed.set_options(
            Option(
                Text(f"{s['last_active'] or '?'}  {counted(int(str(s['turns'])), 'turn')}\n")
                + Text(display_text(str(s["session"])), style="dim"),
                id=f"s{i}",
            )
            for i, s in enumerate(found)
        )
        if found:
            ids = [str(s["session"]) for s in found]
            if self.at is not None and self.at[0] in ids:
                before = self.at[0]
            listed.highlighted = ids.index(before) if before in ids else 0
        else:
            self.query_one("#sessions-text", Static).update("No conversations yet.")

    @on(OptionList.OptionHighlighted, "#sessions-list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        index = event.option_index
        if self.hits:
            if index < len(self.hits):
                hit = self.hits[index]
                self._load_turns(hit.session_id, hit.turn)
        elif index < len(self.sessions):
            session = str(self.sessions[index]["session"])
            at = self.at
            self._load_turns(session, at[1] if at is not None and at[0] == session else None)

    @work(thread=True, exclusive=True, exit_on_error=False, group="turns")
    def _load_turns(self, session_id: str, turn: int | None) -> None:
        try:
            turns = self.store.session(session_id)
        except OryxError as exc:
            self.app.call_from_thread(self._say, str(exc))
            return
        self.app.call_from_thread(self._show_turns, session_id, turns, turn)

    def _show_turns(self, session_id: str, turns: Sequence[Episode], turn: int | None) -> None:
        self.turns = list(turns)
        holder = self.query_one("#sessions-turns", VerticalScroll)
        holder.border_title = display_text(f"{session_id} · {counted(len(turns), 'turn')}")
        text = Text()
        line = 0
        target = 0
        for episode in turns:
            if episode.turn == turn:
                target = line
            part = turn_text(episode, marked=episode.turn == turn)
            line += part.plain.count("\n") + 1
            text.append_text(part)
            text.append("\n")
        self.query_one("#sessions-text", Static).update(text)
        if turn is None:
            self.call_after_refresh(holder.scroll_end, animate=False)
        else:
            self.call_after_refresh(holder.scroll_to, y=target, animate=False)

    # Search -----------------------------------------------------------------------------------

    def action_search(self) -> None:
        self.query_one("#sessions-search", Input).focus()

    def on_key(self, event: events.Key) -> None:
        """Typing anywhere in the view searches: the text goes to the search field."""
        search = self.query_one("#sessions-search", Input)
        if self.focused is search or not event.is_printable or not event.character:
            return
        if event.character == "/":
            return  # the binding: it only puts the focus on the field
        event.stop()
        search.focus()
        search.insert_text_at_cursor(event.character)

    @on(Input.Changed, "#sessions-search")
    def _typed(self, event: Input.Changed) -> None:
        if self._pause is not None:
            self._pause.stop()
        query = event.value
        self._pause = self.set_timer(SEARCH_PAUSE, lambda: self._search(query))

    @on(Input.Submitted, "#sessions-search")
    def _to_hits(self) -> None:
        self.query_one(OptionList).focus()

    @work(thread=True, exclusive=True, exit_on_error=False, group="search")
    def _search(self, query: str) -> None:
        if not query.strip():
            self.app.call_from_thread(self._show_sessions, self.sessions)
            return
        try:
            self.store.sync(self.agent)
            found = self.store.search(self.agent, query, limit=50)
        except OryxError as exc:
            self.app.call_from_thread(self._say, str(exc))
            return
        self.app.call_from_thread(self._show_hits, query, found)

    def _show_hits(self, query: str, found: Sequence[Episode]) -> None:
        if query != self.query_one("#sessions-search", Input).value:
            return  # a newer query is on its way
        self.hits = list(found)
        listed = self.query_one(OptionList)
        listed.border_title = f"Turns matching, best first · {len(found)}"
        listed.set_options(
            Option(
                Text(f"{e.time or '?'}  #{e.turn}  ", style="dim")
                + Text(display_text(e.user, 80))
                + Text(f"\n{display_text(e.session_id)}", style="dim"),
                id=f"h{i}",
            )
            for i, e in enumerate(found)
        )
        if found:
            listed.highlighted = 0
        else:
            self.query_one("#sessions-text", Static).update(f"No turn matches {query!r}.")

    def action_back(self) -> None:
        """Escape: out of the search first, then back to the dashboard."""
        search = self.query_one("#sessions-search", Input)
        if search.value:
            search.value = ""
            self.query_one(OptionList).focus()
            return
        self.dismiss()
