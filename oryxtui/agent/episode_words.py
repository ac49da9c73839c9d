"""The lexical route over past conversations, answered by the database's own full-text index:
FTS5 in oryxos.db, a `tsvector` GIN index on PostgreSQL. Each episode keeps its terms as the
recall engine reads them (`tokens.terms`: folded words, CJK bigrams), space-separated, in
`episodes.terms`; the index only says which episodes hold a term. BM25 is computed here from
those terms, as `LexicalIndex` computes it over the agent's episodes (the same terms, weights,
common-term rule and tie order — later episode first), so a command pays for the episodes that
match, never for reading them all; a process keeps nothing between searches.

Where SQLite was built without FTS5, the same answer comes from reading the agent's terms."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence

from oryxtui import database
from oryxtui.agent.sessions import Conversations
from oryxtui.memory.recall.bm25 import K1, B, discriminates, idf
from oryxtui.memory.tokens import terms

TERM_CHARS = 200  # a longer "word" (a pasted key, a URL's path) is kept by its first 200
FILL_BATCH = 2000  # episodes given their terms in one transaction (those stored before them)

# Which episodes of an agent hold any of some terms, by the kind of full-text index (the FTS5
# question asked first: joined the other way, SQLite asks it once per episode).
_MATCHING = {
    "fts5": (
        "SELECT id, terms, turn_time FROM episodes WHERE id IN"
        " (SELECT rowid FROM episode_words WHERE episode_words MATCH ?) AND agent_name = ?"
    ),
    "tsvector": (
        "SELECT id, terms, turn_time FROM episodes"
        " WHERE array_to_tsvector(string_to_array(terms, ' ')) @@ ?::tsquery"
        " AND agent_name = ?"
    ),
}
_ALL = "SELECT id, terms, turn_time FROM episodes WHERE agent_name = ?"
# How many of an agent's episodes hold a term; where the table holds one agent's only, the
# index alone answers.
_COUNTING = {
    "fts5": (
        "SELECT count(*) FROM episodes WHERE id IN"
        " (SELECT rowid FROM episode_words WHERE episode_words MATCH ?) AND agent_name = ?"
    ),
    "tsvector": (
        "SELECT count(*) FROM episodes"
        " WHERE array_to_tsvector(string_to_array(terms, ' ')) @@ ?::tsquery"
        " AND agent_name = ?"
    ),
}
_COUNTING_SOLE = {
    "fts5": "SELECT count(*) FROM episode_words WHERE episode_words MATCH ?",
    "tsvector": (
        "SELECT count(*) FROM episodes"
        " WHERE array_to_tsvector(string_to_array(terms, ' ')) @@ ?::tsquery"
    ),
}


def episode_text(user: str, reply: str, tools: str) -> str:
    """What the routes read of an episode: the user's message, the reply, the tools called."""
    return f"{user}\n{reply}\n{tools}"


def episode_terms(user: str, reply: str, tools: str) -> tuple[str, int]:
    """An episode's terms as they are stored: space-separated, and how many."""
    found = [term[:TERM_CHARS] for term in terms(episode_text(user, reply, tools))]
    return " ".join(found), len(found)


def _any_of(kind: str, wanted: Iterable[str]) -> str:
    """A full-text question for the episodes that hold any of `wanted` (terms hold no quotes:
    they are word characters)."""
    if kind == "fts5":
        return " OR ".join(f'"{term}"' for term in wanted)
    return " | ".join(f"'{term}'" for term in wanted)


class EpisodeWords:
    """The lexical route over the episodes of one database (`Conversations`)."""

    def __init__(self, conversations: Conversations) -> None:
        self.database = conversations

    def fill(self, key: str) -> int:
        """Give the agent's episodes stored without terms (by an earlier oryxtui) theirs;
        returns how many. A row another program wrote with no text gets none, once."""
        filled = 0
        connection = self.database.connection()
        while True:
            with self.database.errors():
                rows = connection.execute(
                    "SELECT id, user_text, reply, tools FROM episodes"
                    " WHERE terms IS NULL AND agent_name = ? LIMIT ?",
                    (key, FILL_BATCH),
                ).fetchall()
            if not rows:
                return filled
            updates = []
            for row_id, *parts in rows:
                user, reply, tools = (part if isinstance(part, str) else "" for part in parts)
                updates.append((*episode_terms(user, reply, tools), row_id))
            with self.database.errors(), database.write_transaction(connection):
                connection.executemany(
                    "UPDATE episodes SET terms = ?, term_count = ? WHERE id = ? AND terms IS NULL",
                    updates,
                )
            filled += len(rows)

    def ranked(
        self, key: str, query: str, within: Callable[[str | None], bool] | None = None
    ) -> list[int]:
        """Row ids of the agent's episodes that match `query` by their words, best first
        (BM25; equal scores: the later episode first); `within(time)` narrows them by time."""
        wanted = list(dict.fromkeys(term[:TERM_CHARS] for term in terms(query)))
        if not wanted:
            return []
        self.fill(key)
        with self.database.errors():
            size, total, first, last = (
                self.database.connection()
                .execute(
                    "SELECT count(*), coalesce(sum(term_count), 0),"
                    " (SELECT min(agent_name) FROM episodes),"
                    " (SELECT max(agent_name) FROM episodes)"
                    " FROM episodes WHERE agent_name = ?",
                    (key,),
                )
                .fetchone()
            )
        if not size:
            return []
        sole = first == last == key
        kind = self.database.full_text
        if kind is None:  # no full-text index: every episode of the agent is a candidate
            rows = self._rows(_ALL, (key,))
            found = Counter(t for _, held, _ in rows for t in set(held) if t in wanted)
        else:
            found = Counter({term: self._count(kind, key, term, sole) for term in wanted})
        telling = [t for t in wanted if found[t] and discriminates(size, found[t])]
        chosen = telling or [t for t in wanted if found[t]]
        if not chosen:
            return []
        if kind is not None:
            rows = self._rows(_MATCHING[kind], (_any_of(kind, chosen), key))
        weights = [(t, idf(size, found[t])) for t in wanted if found[t]]
        average = (int(total) / int(size)) or 1.0
        scored: list[tuple[float, int]] = []
        for row_id, held, when in rows:
            if within is not None and not within(when):
                continue
            counts = Counter(held)
            if not any(counts[t] for t in chosen):
                continue  # the index's words are not always the engine's: a near miss
            norm = K1 * (1 - B + B * len(held) / average)
            score = 0.0
            for term, weight in weights:
                if tf := counts[term]:
                    score += weight * tf * (K1 + 1) / (tf + norm)
            scored.append((score, row_id))
        scored.sort(key=lambda item: (-item[0], -item[1]))
        return [row_id for _, row_id in scored]

    def _count(self, kind: str, key: str, term: str, sole: bool) -> int:
        """How many of the agent's episodes hold `term` (`sole`: the table holds only its)."""
        question = _any_of(kind, [term])
        sql = _COUNTING_SOLE[kind] if sole else _COUNTING[kind]
        params = (question,) if sole else (question, key)
        with self.database.errors():
            (count,) = self.database.connection().execute(sql, params).fetchone()
        return int(count)

    def _rows(self, sql: str, params: Sequence[object]) -> list[tuple[int, list[str], str | None]]:
        """(row id, terms, time) of the rows `sql` selects; a row this program did not write
        (its terms or time no text) is left out: the table is derived, and rebuilt."""
        with self.database.errors():
            found = self.database.connection().execute(sql, tuple(params)).fetchall()
        return [
            (int(row_id), held.split(), when or None)
            for row_id, held, when in found
            if isinstance(held, str) and isinstance(when, str | None)
        ]
