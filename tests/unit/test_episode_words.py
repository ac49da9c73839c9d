"""The episodes' lexical route through the database's own full-text index (issue 34, item 13):
FTS5 in oryxos.db, a tsvector GIN index on PostgreSQL, and reading the terms where SQLite has
no FTS5 — each ranks exactly as the in-process `LexicalIndex` ranks the same episodes; an
oryxos.db from before gains the index with its episodes; a new process reads only the
sessions that moved."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oryxtui.agent.episodes import EpisodeStore
from oryxtui.agent.messages import Message
from oryxtui.agent.sessions import GLOBAL_PROFILE, Session
from oryxtui.memory.recall.lexical import LexicalIndex
from tests.support import fixed_clock

WORDS = [
    "deploy", "deploys", "deployed", "window", "friday", "pager", "code", "Caroline's",
    "support", "group", "settlement", "batch", "fx_rates", "cache", "網關", "部署窗口",
    "値班", "the", "café", "running", "runs", "4711", "Zürich", "stories",
]  # fmt: skip
QUESTIONS = [
    "deploy window friday",
    "When did Caroline go to the support group?",
    "部署窗口",
    "pager 4711",
    "fx_rates cache",
    "the",
    "café zürich",
    "run story",
    "nothing here matches",
]


def session(name: str, agent: str, turns: list[tuple[str, str]]) -> Session:
    messages = [
        m for user, reply in turns for m in (Message("user", user), Message("assistant", reply))
    ]
    return Session(f"cli:{name}:{agent}", agent, "cli", name, messages)


def corpus(seed: int, size: int) -> list[tuple[str, str]]:
    chooser = random.Random(seed)
    return [
        (
            " ".join(chooser.choices(WORDS, k=chooser.randint(1, 7))),
            " ".join(chooser.choices(WORDS, k=3)),
        )
        for _ in range(size)
    ]


def expected(store: EpisodeStore, agent: str, question: str) -> list[int]:
    """Row ids as the in-process index ranks the agent's episodes."""
    rows = store._rows(agent, 0)
    documents, _ = LexicalIndex([episode.text for _, episode in rows]).search(question)
    return [rows[d][0] for d in documents.tolist()]


def without_fts5(store: EpisodeStore) -> EpisodeStore:
    """The store as on a SQLite built without FTS5: no index, no triggers."""
    connection = store.database.connection()
    for trigger in ("insert", "delete", "update"):
        connection.execute(f"DROP TRIGGER episode_words_{trigger}")
    connection.execute("DROP TABLE episode_words")
    assert store.database.full_text is None
    return store


@pytest.fixture(params=["fts5", "no-fts5", "tsvector"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[EpisodeStore]:
    if request.param == "tsvector":
        from oryxtui.config import DatabaseSettings
        from oryxtui.postgres import PortableDatabase, Postgres

        database = Postgres(DatabaseSettings(url=request.getfixturevalue("database_url")))
        yield EpisodeStore(PortableDatabase(database), fixed_clock)
        database.close()
        return
    made = EpisodeStore(tmp_path / "oryxos.db", fixed_clock)
    assert made.database.full_text == "fts5"
    yield without_fts5(made) if request.param == "no-fts5" else made


def test_each_index_ranks_as_the_in_process_index(store: EpisodeStore) -> None:
    for number, turns in enumerate([corpus(1, 60), corpus(2, 45)]):
        store.index_session(session(f"u{number}", "ops", turns))
    store.index_session(session("other", "atlas", corpus(3, 80)))  # another agent's: not counted
    for question in QUESTIONS:
        assert store.words.ranked("ops", question) == expected(store, "ops", question), question
    assert store.words.ranked("ops", "nothing here matches") == []
    assert store.words.ranked("atlas", "pager") == expected(store, "atlas", "pager")
    found = store.search("ops", "pager 4711", limit=3)
    assert [e.user for e in found] == [
        e.user for e in store._by_ids(expected(store, "ops", "pager 4711")[:3])
    ]


@settings(max_examples=40, deadline=None)
@given(
    turns=st.lists(
        st.tuples(
            st.lists(st.sampled_from(WORDS), min_size=0, max_size=8).map(" ".join),
            st.text(max_size=30),
        ),
        min_size=1,
        max_size=30,
    ),
    question=st.one_of(st.sampled_from(QUESTIONS), st.text(max_size=20)),
)
def test_any_episodes_and_question_rank_alike_in_fts5(
    tmp_path_factory: pytest.TempPathFactory, turns: list[tuple[str, str]], question: str
) -> None:
    store = EpisodeStore(tmp_path_factory.mktemp("db") / "oryxos.db", fixed_clock)
    store.index_session(session("u", "ops", turns))
    store.index_session(session("v", GLOBAL_PROFILE, turns[:3]))
    assert store.words.ranked("ops", question) == expected(store, "ops", question)


OLD_EPISODES = """
CREATE TABLE episodes (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id VARCHAR(255) NOT NULL,
    turn INTEGER NOT NULL, agent_name VARCHAR(128) NOT NULL, channel VARCHAR(64),
    user_text TEXT NOT NULL, reply TEXT NOT NULL, tools TEXT NOT NULL DEFAULT '',
    turn_time TIMESTAMP, UNIQUE (session_id, turn)
)"""


def test_a_database_from_before_gains_the_index_with_its_episodes(tmp_path: Path) -> None:
    db = tmp_path / "oryxos.db"
    with sqlite3.connect(db) as old:  # oryxos.db as an earlier oryxtui left it
        old.execute(OLD_EPISODES)
        old.executemany(
            "INSERT INTO episodes (session_id, turn, agent_name, user_text, reply, turn_time)"
            " VALUES ('s', ?, 'ops', ?, ?, '2026-07-01 09:00:00')",
            [(0, "the pager code is 4711", "Noted."), (1, "deploy window friday", "Yes.")],
        )
    store = EpisodeStore(db, fixed_clock)
    assert [e.user for e in store.search("ops", "pager code")] == ["the pager code is 4711"]
    with sqlite3.connect(db) as older:  # an earlier oryxtui still writing beside this one
        older.execute(
            "INSERT INTO episodes (session_id, turn, agent_name, user_text, reply)"
            " VALUES ('s', 2, 'ops', 'the pager moved to 4712', 'Noted.')"
        )
    found = [e.user for e in store.search("ops", "pager")]
    assert found == ["the pager moved to 4712", "the pager code is 4711"]
    assert store.words.fill("ops") == 0  # each given its terms once
    with sqlite3.connect(db) as check:  # raises "malformed" where the index and rows disagree
        check.execute("INSERT INTO episode_words (episode_words) VALUES ('integrity-check')")


def test_a_new_process_reads_only_the_sessions_that_moved(tmp_path: Path) -> None:
    db = tmp_path / "oryxos.db"
    first = EpisodeStore(db, fixed_clock)
    first.sync()  # the tables
    with sqlite3.connect(db) as upstream:
        for name in ("a", "b"):
            upstream.execute(
                "INSERT INTO sessions (session_id, profile_name, channel, user_id, messages_json,"
                " created_at, last_active_at) VALUES (?, 'ops', 'web', 'u', ?, 1, ?)",
                (
                    f"web:{name}:ops",
                    f'[{{"role":"user","content":"hello {name}"}},'
                    f'{{"role":"assistant","content":"hi {name}"}}]',
                    "2026-07-01 09:00:00",
                ),
            )
    assert first.sync("ops") == 2
    with sqlite3.connect(db) as upstream:  # a's messages spoilt without its time moving
        upstream.execute(
            "UPDATE sessions SET messages_json = 'not json' WHERE session_id = 'web:a:ops'"
        )
        upstream.execute(
            "UPDATE sessions SET last_active_at = '2026-07-01 10:00:00', messages_json ="
            ' \'[{"role":"user","content":"hello b"},{"role":"assistant","content":"hi b"},'
            '{"role":"user","content":"again"},{"role":"assistant","content":"again b"}]\''
            " WHERE session_id = 'web:b:ops'"
        )
    later = EpisodeStore(db, fixed_clock)  # another process: nothing in memory
    assert later.sync("ops") == 1  # b's new turn; a is not read again
    assert sorted(e.user for e in later.search("ops", "hello")) == ["hello a", "hello b"]
    assert later.sync("ops") == 0
