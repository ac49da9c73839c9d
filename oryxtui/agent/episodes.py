"""Episodic memory: every finished turn of every session (any channel, upstream's own sessions
in a shared oryxos.db too) is an episode — the user's message, the final reply, the tools
called, the session and the time — searchable by the lexical route of the recall engine. Episodes
live in the derived `episodes` table of oryxos.db (rebuilt from `sessions` at any time) and are
never written into MEMORY.md.

A turn is indexed as soon as the loop has stored it (`index_session`); sessions another program
wrote are picked up when their `last_active_at` moves (`sync`). A turn's time is when oryxtui
first saw it finished: the moment it was stored, for the loop's own turns."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from oryxtui import database
from oryxtui.agent.messages import Message
from oryxtui.agent.sessions import GLOBAL_PROFILE, Session
from oryxtui.memory.format import TIME_FORMAT

if TYPE_CHECKING:
    from oryxtui.memory.recall.lexical import LexicalIndex

REPLY_CHARS = 600  # of each reply, what a search answer shows
TAIL_LIMIT = 512  # episodes searched beside the big index before it is made again


@dataclass(frozen=True)
class Episode:
    session_id: str
    turn: int  # 0 for the session's first turn
    agent: str | None
    channel: str | None
    time: str | None
    user: str
    reply: str
    tools: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        """What the lexical route reads."""
        return f"{self.user}\n{self.reply}\n{' '.join(self.tools)}"

    def to_json(self, reply_chars: int | None = None) -> dict[str, Any]:
        reply = self.reply
        if reply_chars is not None and len(reply) > reply_chars:
            reply = reply[:reply_chars] + "…"
        return {
            "session": self.session_id,
            "turn": self.turn,
            "agent": self.agent,
            "time": self.time,
            "user": self.user,
            "reply": reply,
            "tools": list(self.tools),
        }


def finished_turns(messages: Sequence[Message]) -> list[tuple[str, str, tuple[str, ...]]]:
    """(user message, final reply, tools called) of each turn that has its final reply."""
    turns = []
    starts = [i for i, m in enumerate(messages) if m.role == "user"]
    for number, start in enumerate(starts):
        stop = starts[number + 1] if number + 1 < len(starts) else len(messages)
        turn = messages[start:stop]
        last = turn[-1]
        if last.role != "assistant" or last.tool_calls:
            continue  # still running (or cut short): not an episode yet
        tools = tuple(dict.fromkeys(c.name for m in turn for c in m.tool_calls))
        turns.append((turn[0].content, last.content, tools))
    return turns


def _agent(profile: object) -> str | None:
    return None if profile in (None, GLOBAL_PROFILE) else str(profile)


class EpisodeStore:
    """The `episodes` table, kept up with `sessions`, and searched through a lexical index per
    agent (a big one made at times, and the newest episodes searched beside it)."""

    def __init__(self, db_path: Path, clock: Any = datetime.now) -> None:
        self.database = database.Database(db_path)
        self.clock = clock
        self._seen: dict[str, object] = {}  # session id → last_active_at when last indexed
        self._indexes: dict[str, tuple[int, LexicalIndex, list[Episode]]] = {}
        self._lock = threading.Lock()

    # Indexing ---------------------------------------------------------------------------------

    def index_session(self, session: Session, when: str | None = None) -> int:
        """Store the session's finished turns not stored yet; returns how many were new."""
        agent = _agent(session.profile_name)
        return self._store(session.session_id, agent, session.channel, session.messages, when)

    def _store(
        self,
        session_id: str,
        agent: str | None,
        channel: str | None,
        messages: Sequence[Message],
        when: str | None,
    ) -> int:
        turns = finished_turns(messages)
        connection = self.database.connection()
        with self.database.errors():
            row = connection.execute(
                "SELECT coalesce(max(turn), -1) FROM episodes WHERE session_id = ?",
                (session_id,),
            ).fetchone()
            known = int(row[0])
            fresh = turns[known + 1 :]
            if not fresh:
                return 0
            stamp = when or self.clock().strftime(TIME_FORMAT)
            with database.write_transaction(connection):
                connection.executemany(
                    "INSERT OR IGNORE INTO episodes (session_id, turn, agent_name, channel,"
                    " user_text, reply, tools, turn_time) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        (
                            session_id,
                            known + 1 + offset,
                            agent or GLOBAL_PROFILE,
                            channel,
                            database.storable(user),
                            database.storable(reply),
                            " ".join(tools),
                            stamp,
                        )
                        for offset, (user, reply, tools) in enumerate(fresh)
                    ],
                )
        return len(fresh)

    def sync(self, agent: str | None = None, every_agent: bool = False) -> int:
        """Index the turns of the agent's sessions (or with `every_agent`, everyone's) that
        changed since last looked at; returns how many turns were new."""
        sql = "SELECT session_id, profile_name, channel, last_active_at FROM sessions"
        params: tuple[object, ...] = ()
        if not every_agent:
            sql += " WHERE profile_name = ?"
            params = (agent or GLOBAL_PROFILE,)
        connection = self.database.connection()
        with self.database.errors():
            rows = connection.execute(sql, params).fetchall()
        added = 0
        for session_id, profile, channel, active in rows:
            if self._seen.get(session_id) == active:
                continue  # unchanged: its messages are not even read
            with self.database.errors():
                found = connection.execute(
                    "SELECT messages_json FROM sessions WHERE session_id = ?", (session_id,)
                ).fetchone()
            try:
                raw = json.loads((found[0] if found else None) or "[]")
                messages = [Message.from_json(item) for item in raw if isinstance(item, dict)]
            except (ValueError, TypeError, RecursionError):
                messages = []  # a session this program cannot read: no episodes from it
            when = str(active).replace("T", " ")[:19] if active else None
            added += self._store(session_id, _agent(profile), channel, messages, when)
            self._seen[session_id] = active
        return added

    # Reading ----------------------------------------------------------------------------------

    def sessions(self, agent: str | None, every_agent: bool = False) -> list[dict[str, Any]]:
        """The agent's sessions (or everyone's), newest first, with their turn counts."""
        self.sync(agent, every_agent)
        sql = (
            "SELECT s.session_id, s.profile_name, s.channel, s.created_at, s.last_active_at,"
            " (SELECT count(*) FROM episodes e WHERE e.session_id = s.session_id)"
            " FROM sessions s"
        )
        params: tuple[object, ...] = ()
        if not every_agent:
            sql += " WHERE s.profile_name = ?"
            params = (agent or GLOBAL_PROFILE,)
        with self.database.errors():
            rows = (
                self.database.connection()
                .execute(sql + " ORDER BY s.last_active_at DESC, s.rowid DESC", params)
                .fetchall()
            )
        return [
            {
                "session": str(session_id),
                "agent": _agent(profile),
                "channel": channel,
                "created": str(created).replace("T", " ")[:19] if created else None,
                "last_active": str(active).replace("T", " ")[:19] if active else None,
                "turns": int(turns),
            }
            for session_id, profile, channel, created, active, turns in rows
        ]

    def session(self, session_id: str) -> list[Episode]:
        """A session's finished turns, in order (indexed first)."""
        with self.database.errors():
            row = (
                self.database.connection()
                .execute("SELECT profile_name FROM sessions WHERE session_id = ?", (session_id,))
                .fetchone()
            )
        if row is None:
            return []
        agent = _agent(row[0])
        self.sync(agent)
        return [e for e in self.episodes(agent) if e.session_id == session_id]

    def episodes(self, agent: str | None) -> list[Episode]:
        """The agent's episodes, oldest first."""
        return [episode for _, episode in self._rows(agent, 0)]

    def _rows(self, agent: str | None, after: int) -> list[tuple[int, Episode]]:
        with self.database.errors():
            rows = (
                self.database.connection()
                .execute(
                    "SELECT id, session_id, turn, agent_name, channel, turn_time, user_text, reply,"
                    " tools FROM episodes WHERE agent_name = ? AND id > ? ORDER BY id",
                    (agent or GLOBAL_PROFILE, after),
                )
                .fetchall()
            )
        return [
            (
                int(row_id),
                Episode(
                    str(session_id),
                    int(turn),
                    _agent(name),
                    channel,
                    str(when) if when else None,
                    str(user),
                    str(reply),
                    tuple(str(tools).split()) if tools else (),
                ),
            )
            for row_id, session_id, turn, name, channel, when, user, reply, tools in rows
        ]

    def search(
        self,
        agent: str | None,
        query: str,
        since: str | None = None,
        until: str | None = None,
        limit: int = 5,
    ) -> list[Episode]:
        """The agent's episodes that best match `query` (lexical, BM25), best first; `since`
        and `until` (ISO dates or date-times, inclusive) narrow them by time."""
        from oryxtui.memory.recall.lexical import LexicalIndex

        key = agent or GLOBAL_PROFILE
        with self._lock:
            built = self._indexes.get(key)
            last = built[0] if built else 0
            tail = self._rows(agent, last)
            if built is None or len(tail) > TAIL_LIMIT:
                everything = ([*built[2]] if built else []) + [e for _, e in tail]
                top = tail[-1][0] if tail else last
                built = (top, LexicalIndex([e.text for e in everything]), everything)
                self._indexes[key] = built
                tail = []
        _, index, indexed = built
        scored: list[tuple[float, int, Episode]] = []
        documents, scores = index.search(query)
        for document, score in zip(documents.tolist(), scores.tolist(), strict=True):
            scored.append((score, document, indexed[document]))
        if tail:
            fresh = [e for _, e in tail]
            tail_docs, tail_scores = LexicalIndex([e.text for e in fresh]).search(query)
            for document, score in zip(tail_docs.tolist(), tail_scores.tolist(), strict=True):
                scored.append((score, len(indexed) + document, fresh[document]))
        scored.sort(key=lambda item: (-item[0], -item[1]))
        low, high = _bound(since, False), _bound(until, True)
        found = [
            episode
            for _, _, episode in scored
            if (low is None or (episode.time or "") >= low)
            and (high is None or (episode.time or "") <= high)
        ]
        return found[:limit]


def _bound(value: str | None, end: bool) -> str | None:
    """An ISO date or date-time as the `yyyy-MM-dd HH:mm:ss` text episodes are stamped with
    (a date alone: the start of that day, or with `end` its end)."""
    if not value:
        return None
    moment = datetime.fromisoformat(value.strip())
    if end and len(value.strip()) <= 10:
        return moment.strftime("%Y-%m-%d") + " 23:59:59"
    return moment.strftime(TIME_FORMAT)
