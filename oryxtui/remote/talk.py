"""A server's conversations and its agent loop, with the methods of `EpisodeStore` and
`AgentLoop` that the CLI and the dashboard call: sessions, turns, search, the prompt, and a
chat turn streamed from the server."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from oryxtui import notices
from oryxtui.agent.episodes import Episode
from oryxtui.agent.loop import LoopEvent
from oryxtui.agent.messages import Message
from oryxtui.agent.prompt import Prompt, PromptBlock
from oryxtui.agent.sessions import Session
from oryxtui.errors import NotFound, OryxError
from oryxtui.remote.answers import text_of
from oryxtui.remote.client import Server, agent_path, events
from oryxtui.remote.memory import RemoteMemory

LOOP_KINDS = frozenset({"text", "tool_call", "tool_result", "warning", "final", "error"})


def episode_of(item: object) -> Episode | None:
    if not isinstance(item, dict):
        return None
    session, user, reply = item.get("session"), item.get("user"), item.get("reply")
    turn = item.get("turn")
    if not isinstance(session, str) or not isinstance(user, str) or not isinstance(reply, str):
        return None
    if not isinstance(turn, int) or isinstance(turn, bool):
        return None
    tools = item.get("tools") if isinstance(item.get("tools"), list) else []
    return Episode(
        session,
        turn,
        text_of(item.get("agent")),
        text_of(item.get("channel")),
        text_of(item.get("time")),
        user,
        reply,
        tuple(str(tool) for tool in tools),  # type: ignore[union-attr]
    )


def episodes_of(data: object, where: str) -> list[Episode]:
    items = data if isinstance(data, list) else []
    found = [episode_of(item) for item in items]
    good = [episode for episode in found if episode is not None]
    notices.skipped(len(found) - len(good), "turn", where)
    return good


class RemoteEpisodes:
    """A server's past conversations."""

    def __init__(self, server: Server) -> None:
        self.server = server

    def sync(self, agent: str | None = None, every_agent: bool = False) -> int:
        return 0  # the server indexes its sessions

    def sessions(self, agent: str | None, every_agent: bool = False) -> list[dict[str, Any]]:
        data = self.server.get("/sessions" if every_agent else f"{agent_path(agent)}/sessions")
        items = data if isinstance(data, list) else []
        good = [
            item
            for item in items
            if isinstance(item, dict)
            and isinstance(item.get("session"), str)
            and isinstance(item.get("turns"), int)
        ]
        notices.skipped(len(items) - len(good), "session", f"the server {self.server.name}")
        return good

    def session(self, session_id: str) -> list[Episode]:
        from urllib.parse import quote

        try:
            data = self.server.get_memory(f"/sessions/{quote(session_id, safe='')}")
        except NotFound:
            return []  # as locally: no session with a finished turn
        return episodes_of(data, f"session {session_id}")

    def search(
        self,
        agent: str | None,
        query: str,
        since: str | None = None,
        until: str | None = None,
        limit: int = 5,
    ) -> list[Episode]:
        data = self.server.get(
            f"{agent_path(agent)}/sessions/search", q=query, since=since, until=until, limit=limit
        )
        return episodes_of(data, f"the server {self.server.name}")


@dataclass(frozen=True)
class RemoteProvider:
    label: str


class RemoteSessions:
    """The chat pane's `sessions.load`: a session's turns as messages."""

    def __init__(self, episodes: RemoteEpisodes) -> None:
        self.episodes = episodes

    def load(self, session_id: str, agent: str | None, channel: str, user: str) -> Session:
        messages = []
        for turn in self.episodes.session(session_id):
            messages += [Message("user", turn.user), Message("assistant", turn.reply)]
        return Session(session_id, agent or "", channel, user, messages)


class RemoteLoop:
    """A server's agent loop: the prompt it would send, and turns run there."""

    def __init__(self, server: Server, memory: RemoteMemory | None = None) -> None:
        self.server = server
        self.memory = memory or RemoteMemory(server)
        self.episodes = RemoteEpisodes(server)
        self.sessions = RemoteSessions(self.episodes)

    def provider(self, agent: str | None) -> RemoteProvider:
        model = "the agent's model"
        if agent is not None:
            for row in self.server.get("/agents") or []:
                if isinstance(row, dict) and row.get("name") == agent:
                    model = " ".join(str(row[k]) for k in ("provider", "model") if row.get(k))
        return RemoteProvider(f"{model} on {self.server.name}")

    def prompt(self, agent: str | None, session_id: str, ask: bool = True) -> Prompt:
        channel, user = session_id.split(":")[:2]
        data = self.server.get_memory(f"{agent_path(agent)}/prompt", channel=channel, user=user)
        data = data if isinstance(data, dict) else {}
        blocks = tuple(
            PromptBlock(str(block.get("name")), str(block.get("text") or ""))
            for block in data.get("blocks") or []
            if isinstance(block, dict)
        )
        messages = [m for m in data.get("messages") or [] if isinstance(m, dict)]
        tools = [t for t in data.get("tools") or [] if isinstance(t, dict)]
        warnings = tuple(str(w) for w in data.get("warnings") or [])
        return Prompt(agent, blocks, messages, tools, warnings)

    def turn_view(self, session_id: str, turn: int) -> dict[str, Any] | None:
        """What the model received in that turn, as the server recorded it (None: nothing)."""
        from urllib.parse import quote

        try:
            data = self.server.get_memory(
                f"/sessions/{quote(session_id, safe='')}/turns/{turn}/prompt"
            )
        except NotFound:
            return None
        if not isinstance(data, dict) or not isinstance(data.get("calls"), list):
            notices.skipped(1, "turn", f"the server {self.server.name}")
            return None
        return data

    def run(self, agent: str | None, message: str, channel: str, user: str) -> Iterator[LoopEvent]:
        """The turn, event by event as the server streams it; the server going away mid-turn
        is an error event (what it stored so far stays there)."""
        body: dict[str, Any] = {"message": message, "channel": channel}
        if self.memory.info().get("scope") == "admin" or not self.memory.info().get("caller"):
            body["user"] = user  # a key that is not an admin's chats as itself
        try:
            with self.server.stream("POST", f"{agent_path(agent)}/chat", body) as lines:
                for _, data in events(lines):
                    event = loop_event(data)
                    if event is not None:
                        yield event
        except OryxError as exc:
            yield LoopEvent("error", str(exc))


def loop_event(data: dict[str, Any]) -> LoopEvent | None:
    kind = data.get("kind")
    if kind not in LOOP_KINDS:
        notices.skipped(1, "chat event", "the server's answer")
        return None
    success = data.get("success")
    return LoopEvent(
        str(kind),
        str(data.get("text") or ""),
        text_of(data.get("tool")),
        text_of(data.get("arguments")),
        success if isinstance(success, bool) else None,
    )
