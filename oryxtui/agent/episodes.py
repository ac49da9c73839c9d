"""Episodic memory: every finished turn of every session (any channel, upstream's own sessions
in a shared oryxos.db too) is an episode — the user's message, the final reply, the tools
called, the session and the time — searchable by the lexical route of the recall engine. Episodes
live in the derived `episodes` table of oryxos.db (rebuilt from `sessions` at any time) and are
never written into MEMORY.md; their words are searched by the database's own full-text index
(`episode_words`).

A turn is indexed as soon as the loop has stored it (`index_session`); sessions another program
wrote are picked up when their `last_active_at` moves past the one their episodes were taken
from (`sync`, which reads only those). A turn's time is when oryxtui first saw it finished: the
moment it was stored, for the loop's own turns."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from oryxtui import database, notices
from oryxtui.agent.episode_words import EpisodeWords, episode_terms, episode_text
from oryxtui.agent.messages import Message, parse_messages
from oryxtui.agent.sessions import GLOBAL_PROFILE, Conversations, Session
from oryxtui.config import Settings
from oryxtui.memory.backends.rows import time_text
from oryxtui.memory.format import TIME_FORMAT

if TYPE_CHECKING:
    from oryxtui.agent.episode_vectors import EpisodeVectors
    from oryxtui.memory.recall.embedders import Embedder

REPLY_CHARS = 600  # of each message and reply, what a search answer shows


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
        return episode_text(self.user, self.reply, " ".join(self.tools))

    def to_json(self, chars: int | None = None) -> dict[str, Any]:
        """The episode; with `chars`, the user's message and the reply cut to that many."""
        return {
            "session": self.session_id,
            "turn": self.turn,
            "agent": self.agent,
            "time": self.time,
            "user": clipped(self.user, chars),
            "reply": clipped(self.reply, chars),
            "tools": list(self.tools),
        }


def clipped(text: str, chars: int | None) -> str:
    return text if chars is None or len(text) <= chars else text[:chars] + "…"


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
    """The `episodes` table, kept up with `sessions`, searched by words through the
    database's full-text index, and by meaning where an embedder is set."""

    def __init__(
        self,
        db: Path | Conversations,
        clock: Any = datetime.now,
        embedder: Embedder | None = None,
        min_similarity: float | None = None,  # None: the embedder's own floor
        make_embedder: Callable[[], Embedder | None] | None = None,
    ) -> None:
        self.database: Conversations = database.Database(db) if isinstance(db, Path) else db
        self.clock = clock
        self._embedder = embedder  # meaning as a second route, when one is configured
        # … or made when a search first needs it
        self._make_embedder: Callable[[], Embedder | None] | None = make_embedder
        self.min_similarity = min_similarity
        self.words = EpisodeWords(self.database)
        self._vectors: EpisodeVectors | None = None

    @property
    def embedder(self) -> Embedder | None:
        if self._make_embedder is not None:
            self._embedder, self._make_embedder = self._make_embedder(), None
        return self._embedder

    @property
    def vectors(self) -> EpisodeVectors:
        """The episodes' vectors by the embedder (there is one when this is asked)."""
        embedder = self.embedder
        assert embedder is not None
        if self._vectors is None or self._vectors.embedder is not embedder:
            from oryxtui.agent.episode_vectors import EpisodeVectors

            self._vectors = EpisodeVectors(self.database, embedder, self.min_similarity)
        return self._vectors

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
            rows = []
            for offset, (user, reply, tools) in enumerate(fresh):
                user, reply = database.storable(user), database.storable(reply)
                held, count = episode_terms(user, reply, " ".join(tools))
                turn = known + 1 + offset
                row = (user, reply, " ".join(tools), stamp, held, count)
                rows.append((session_id, turn, agent or GLOBAL_PROFILE, channel, *row))
            with database.write_transaction(connection):
                connection.executemany(
                    "INSERT INTO episodes (session_id, turn, agent_name, channel, user_text,"
                    " reply, tools, turn_time, terms, term_count)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    rows,
                )
        return len(fresh)

    def sync(self, agent: str | None = None, every_agent: bool = False) -> int:
        """Index the turns of the agent's sessions (or with `every_agent`, everyone's) that
        changed since their episodes were last taken (`episode_sources`, kept in the database:
        a new process reads only those); returns how many turns were new."""
        sql = (
            "SELECT s.session_id, s.profile_name, s.channel, s.last_active_at,"
            " CAST(s.last_active_at AS TEXT) FROM sessions s"
            " LEFT JOIN episode_sources k ON k.session_id = s.session_id"
            " WHERE (k.last_active IS NULL OR k.last_active <> CAST(s.last_active_at AS TEXT))"
        )
        params: tuple[object, ...] = ()
        if not every_agent:
            sql += " AND s.profile_name = ?"
            params = (agent or GLOBAL_PROFILE,)
        connection = self.database.connection()
        with self.database.errors():
            rows = connection.execute(sql, params).fetchall()
        added, taken = 0, []
        for session_id, profile, channel, active, version in rows:
            with self.database.errors():
                found = connection.execute(
                    "SELECT messages_json FROM sessions WHERE session_id = ?", (session_id,)
                ).fetchone()
            messages, skipped = parse_messages(found[0] if found else None)
            # What cannot be read of another program's session is left out, and said.
            notices.skipped(skipped, "message", f"session {session_id}")
            when = time_text(active) if active else None
            added += self._store(session_id, _agent(profile), channel, messages, when)
            if version is not None:
                taken.append((session_id, version))
        if taken:  # one transaction for them all (one killed before it: they are read again)
            with self.database.errors(), database.write_transaction(connection):
                connection.executemany(
                    "INSERT INTO episode_sources (session_id, last_active) VALUES (?, ?)"
                    " ON CONFLICT (session_id) DO UPDATE SET last_active = excluded.last_active",
                    taken,
                )
        return added

    def drop_vectors(self, agent: str | None) -> int:
        """Forget the vectors of the agent's episodes (a rebuild: each is made again when a
        search next needs it); returns how many were dropped."""
        connection = self.database.connection()
        with self.database.errors(), database.write_transaction(connection):
            dropped = connection.execute(
                "DELETE FROM episode_vectors WHERE episode_id IN"
                " (SELECT id FROM episodes WHERE agent_name = ?)",
                (agent or GLOBAL_PROFILE,),
            ).rowcount
        if self._vectors is not None:
            self._vectors.forget(agent or GLOBAL_PROFILE)
        return dropped

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
                .execute(
                    sql + f" ORDER BY s.last_active_at DESC, s.{self.database.row_order} DESC",
                    params,
                )
                .fetchall()
            )
        return [
            {
                "session": str(session_id),
                "agent": _agent(profile),
                "channel": channel,
                "created": time_text(created) if created else None,
                "last_active": time_text(active) if active else None,
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
        return [episode for _, episode in self._rows(agent, 0, session_id)]

    def episodes(self, agent: str | None) -> list[Episode]:
        """The agent's episodes, oldest first."""
        return [episode for _, episode in self._rows(agent, 0)]

    def _rows(
        self, agent: str | None, after: int, session_id: str | None = None
    ) -> list[tuple[int, Episode]]:
        """(row id, episode) of the agent's episodes after row `after`, oldest first; with
        `session_id`, of that session only."""
        where = "agent_name = ? AND id > ?"
        params: tuple[object, ...] = (agent or GLOBAL_PROFILE, after)
        if session_id is not None:
            where += " AND session_id = ?"
            params = (*params, session_id)
        return self._read(where + " ORDER BY id", params)

    def _read(self, where: str, params: tuple[object, ...]) -> list[tuple[int, Episode]]:
        """(row id, episode) of the rows `where` selects, in its order."""
        sql = (
            "SELECT id, session_id, turn, agent_name, channel, turn_time, user_text, reply,"
            " tools FROM episodes WHERE "
        )
        with self.database.errors():
            rows = self.database.connection().execute(sql + where, params).fetchall()
        found: list[tuple[int, Episode]] = []
        for row_id, session, turn, name, channel, when, user, reply, tools in rows:
            if type(turn) is not int or not all(
                isinstance(v, str | None) for v in (channel, when, user, reply, tools)
            ):
                continue  # a row this program did not write: the table is derived, rebuilt
            found.append(
                (
                    int(row_id),
                    Episode(
                        str(session),
                        turn,
                        _agent(name),
                        channel,
                        when or None,
                        user or "",
                        reply or "",
                        tuple(tools.split()) if tools else (),
                    ),
                )
            )
        return found

    def search(
        self,
        agent: str | None,
        query: str,
        since: str | None = None,
        until: str | None = None,
        limit: int = 5,
    ) -> list[Episode]:
        """The agent's episodes that best match `query`, best first: by words (BM25, through
        the database's full-text index), and by meaning too when an embedder is set (the two
        routes fused by rank, as recall fuses them); `since` and `until` (ISO dates or
        date-times, inclusive) narrow them by time."""
        from oryxtui.memory.admission import searchable

        searchable(query, "search")
        key = agent or GLOBAL_PROFILE
        low, high = _bound(since, False), _bound(until, True)

        def within(when: str | None) -> bool:
            return (low is None or (when or "") >= low) and (high is None or (when or "") <= high)

        if self.embedder is None:  # the words alone: only the episodes shown are read
            return self._by_ids(self.words.ranked(key, query, within)[:limit])
        return self._fused(key, query, self.words.ranked(key, query), within, limit)

    def _fused(
        self,
        key: str,
        query: str,
        by_words: Sequence[int],
        within: Callable[[str | None], bool],
        limit: int,
    ) -> list[Episode]:
        """The words' ranking (row ids) and the meaning's, fused by rank over all the agent's
        episodes; those outside the time asked for are passed over after."""
        import numpy as np

        from oryxtui.memory.recall.fusion import Route, fuse

        everything = self._rows(_agent(key), 0)
        position = {row: index for index, (row, _) in enumerate(everything)}
        ranked = [position[row] for row in by_words if row in position]
        routes = [Route("lexical", 1.0, np.asarray(ranked, dtype=np.int64))]
        meaning = self.vectors.nearest(key, everything, query)
        if meaning is not None:
            routes.append(Route("semantic", 1.0, meaning))
        eligible = np.asarray([within(e.time) for _, e in everything], dtype=bool)
        chosen, _ = fuse(len(everything), routes, limit, eligible if len(everything) else None)
        return [everything[i][1] for i in chosen.tolist()]

    def _by_ids(self, rows: Sequence[int]) -> list[Episode]:
        """These episodes, in this order (one a row another program spoilt is left out)."""
        found: dict[int, Episode] = {}
        for start in range(0, len(rows), 900):  # SQLite's limit on parameters
            part = rows[start : start + 900]
            marks = ",".join("?" * len(part))
            found.update(self._read(f"id IN ({marks})", tuple(part)))
        return [found[row] for row in rows if row in found]


def _bound(value: str | None, end: bool) -> str | None:
    """An ISO date or date-time as the `yyyy-MM-dd HH:mm:ss` text episodes are stamped with
    (a date alone: the start of that day, or with `end` its end)."""
    if not value:
        return None
    moment = datetime.fromisoformat(value.strip())
    if end and len(value.strip()) <= 10:
        return moment.strftime("%Y-%m-%d") + " 23:59:59"
    return moment.strftime(TIME_FORMAT)


def episode_store(
    db: Path | Conversations, settings: Settings, clock: Any = datetime.now
) -> EpisodeStore:
    """The store as configured: with the embedder of `[embedding]`, if there is one, made
    when a search first asks for meaning (listing sessions loads no NumPy, SDK or model)."""

    def make() -> Embedder | None:
        if not settings.embedding.provider:
            return None
        from oryxtui.memory.recall.embedders import create_embedder

        return create_embedder(settings.embedding)

    return EpisodeStore(db, clock, None, settings.memory.recall.min_similarity, make)
