"""Episode benchmarks (issue 15): searching 10,000 episodes (warm), and indexing a new turn the
moment the loop has stored it. Prints JSON.

Run: python tests/benchmarks/bench_episodes.py. Baselines measured in the same run: storing
the session itself (`SessionStore.append`, what every turn pays already), and a plain
case-insensitive substring scan over the same 10,000 texts.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from timing import time_calls

from oryxtui.agent.episodes import EpisodeStore
from oryxtui.agent.messages import Message
from oryxtui.agent.sessions import SessionStore

TOPICS = ["deploy window", "pager code", "settlement batch", "网关值班", "fx-rates cache"]


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "oryxos.db"
        sessions = SessionStore(db)
        store = EpisodeStore(db)
        for number in range(100):  # 100 sessions of 100 turns
            session = sessions.load(f"cli:u{number}:ops", "ops", "cli", f"u{number}")
            messages = []
            for turn in range(100):
                topic = TOPICS[(number + turn) % len(TOPICS)]
                messages += [
                    Message("user", f"what about the {topic} number {turn} of session {number}"),
                    Message("assistant", f"The {topic} {turn} is settled; nothing else changed."),
                ]
            sessions.append(session, *messages)
            store.index_session(session)
        texts = [e.text.lower() for e in store.episodes("ops")]
        store.search("ops", "pager code")  # the index is made once
        search = time_calls(lambda: store.search("ops", "pager code settled"), 30)
        scan = time_calls(lambda: [t for t in texts if "pager code" in t], 30)
        store.sync("ops")

        def as_the_tool() -> None:  # the tool looks for sessions others wrote first
            store.sync("ops")
            store.search("ops", "pager code settled")

        tool = time_calls(as_the_tool, 30)
        session = sessions.load("cli:new:ops", "ops", "cli", "new")
        counter = iter(range(10**6))

        def one_turn() -> None:
            n = next(counter)
            sessions.append(
                session, Message("user", f"new question {n}"), Message("assistant", f"answer {n}")
            )

        stored = time_calls(one_turn, 30)

        def one_turn_indexed() -> None:
            one_turn()
            store.index_session(session)

        indexed = time_calls(one_turn_indexed, 30)
        fresh = store.search("ops", "new question 59")
    print(
        json.dumps(
            {
                "episodes": len(texts),
                "search_warm": search,
                "search_warm_as_the_tool_does (sync first)": tool,
                "baseline_substring_scan": scan,
                "turn_stored": stored,
                "turn_stored_and_indexed": indexed,
                "newest_turn_found_at_once": bool(fresh and fresh[0].user == "new question 59"),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
