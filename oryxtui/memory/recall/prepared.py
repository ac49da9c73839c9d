"""An agent's archival entries as recall has prepared them: their hashes, times and recency
order, upstream's keyword index and the lexical index, and which rows of the vector matrix
hold them — made once per version of the memory, and reused while it stands."""

from __future__ import annotations

import re
from collections.abc import Hashable
from datetime import datetime

import numpy as np

from oryxtui.memory.format import TIME_FORMAT, RecallIndex
from oryxtui.memory.recall.lexical import LexicalIndex
from oryxtui.memory.recall.vectors import VectorMatrix, entry_hash
from oryxtui.memory.snapshot import Corpus

_PREFIX = re.compile(r"- (?:\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}(?::\d{2})?\] ?)?")
_TIME = re.compile(r"- \[(\d{4}-\d{2}-\d{2} \d{2}:\d{2})(:\d{2})?\]")


_RECENT = re.compile(
    r"\b(latest|newest|most recent(ly)?|recent(ly)?|lately|last|current(ly)?|now|nowadays|"
    r"today|these days|still|anymore|any more)\b|最近|最新|现在|目前|如今",
    re.IGNORECASE,
)


def asks_for_recent(query: str) -> bool:
    """Whether a question asks for what is newest ("the latest deploy", "where does she live
    now"): then recency ranks too, as one route among the others."""
    return _RECENT.search(query) is not None


class Prepared:
    """What ranking needs of one version of an agent's archival entries, made once."""

    def __init__(
        self, agent: str, corpus: Corpus, version: Hashable, before: Prepared | None = None
    ) -> None:
        self.version = version
        self.corpus = corpus
        texts = corpus.texts
        first: dict[str, int] = {}
        ids = np.empty(len(texts), dtype=np.int64)
        positions: list[int] = []  # where each entry (each distinct text) first stands
        for position, text in enumerate(texts):
            entry = first.setdefault(text, len(first))
            if entry == len(positions):
                positions.append(position)
            ids[position] = entry
        self.id_of_position = ids  # duplicates are one entry, the first, as upstream's hash
        self.positions = np.asarray(positions, dtype=np.int64)
        self.texts = list(first)
        # An append re-hashes only the new lines: the hashes of the version before are reused.
        known: dict[str, str] = (
            dict(zip(before.texts, before.hashes, strict=True)) if before else {}
        )
        self.hashes: list[str] = [known.get(text) or entry_hash(agent, text) for text in self.texts]
        self.size = len(self.texts)
        self.recency = self._recency(corpus)
        self.recency_rank = np.empty(self.size, dtype=np.int64)  # 0: the newest entry
        self.recency_rank[self.recency] = np.arange(self.size)
        self._lexical: LexicalIndex | None = None
        # Entries appended to the version before: its word index grows by them (a save).
        if before is not None and before._lexical is not None:
            have = len(before.texts)
            if len(self.texts) == have and self.texts == before.texts:
                self._lexical = before._lexical
            elif len(self.texts) > have and self.texts[:have] == before.texts:
                new = [content_of(text) for text in self.texts[have:]]
                self._lexical = before._lexical.extended(new)
        self._keyword: RecallIndex | None = None
        self._rows: tuple[int, int, np.ndarray] | None = None
        self._id_of_hash: dict[str, int] | None = None

    @property
    def id_of_hash(self) -> dict[str, int]:
        """Entry id by its vector's hash."""
        if self._id_of_hash is None:
            self._id_of_hash = {hash_: entry for entry, hash_ in enumerate(self.hashes)}
        return self._id_of_hash

    def _recency(self, corpus: Corpus) -> np.ndarray:
        """Entry ids newest first; no time counts as oldest; equal times put the later first."""
        times = [time_of(corpus, int(position)) for position in self.positions]
        order = np.lexsort((np.arange(self.size), np.asarray(times, dtype=object).astype(str)))
        return order[::-1].astype(np.int64)

    @property
    def keyword(self) -> RecallIndex:
        if self._keyword is None:
            self._keyword = RecallIndex([t.replace("\n", "\x00") for t in self.corpus.texts])
        return self._keyword

    @property
    def lexical(self) -> LexicalIndex:
        if self._lexical is None:
            self._lexical = LexicalIndex([content_of(text) for text in self.texts])
        return self._lexical

    def rows(self, matrix: VectorMatrix) -> np.ndarray:
        """The matrix row of each entry's vector, -1 where it has none."""
        key = (id(matrix.row_of), len(matrix.row_of))
        if self._rows is None or self._rows[:2] != key:
            row_of = matrix.row_of
            rows = np.fromiter((row_of.get(h, -1) for h in self.hashes), np.int64, self.size)
            self._rows = (*key, rows)
        return self._rows[2]


def content_of(text: str) -> str:
    """What an entry says: its line without the "- [time] " before it. Words and meaning read
    this (the time's dozen tokens would cost the model a third of its work per entry, and
    pull every entry's vector toward every other's)."""
    return _PREFIX.sub("", text, count=1)


def time_of(corpus: Corpus, position: int) -> str:
    """The entry's time as sortable text ("" for none): `HH:mm` counts as `HH:mm:00`."""
    if corpus.times is not None:
        time_text = corpus.times[position] or ""
        return time_text if len(time_text) != 16 else time_text + ":00"
    match = _TIME.match(corpus.texts[position])
    return match[1] + (match[2] or ":00") if match else ""


def epoch_ms(time_text: str) -> int | None:
    """An entry's local time as epoch milliseconds (upstream's Instant in SQLite)."""
    if not time_text:
        return None
    try:
        return int(datetime.strptime(time_text, TIME_FORMAT).timestamp() * 1000)
    except (ValueError, OverflowError, OSError):
        return None
