"""What a recall answers, and how far the index has got: plain data, cheap to import (the
engine itself needs NumPy)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from oryxtui.errors import OryxError, UsageError
from oryxtui.memory.format import MemoryEntry

# Upstream's MemoryRecallEngine.DEGRADE_NOTICE, word for word.
DEGRADE_NOTICE = "（语义检索暂不可用，已按关键词与时间返回）"
ROUTES = ("semantic", "keyword", "lexical", "recency")
# What a recall tool answers beside no entries: the agent must not take silence for an error,
# nor answer as if it knew.
NOTHING_FOUND = (
    "Nothing in this memory matches; it was never saved, or in other words: try other words "
    "before answering as if it were known."
)


@dataclass(frozen=True)
class RouteRank:
    rank: int  # 1-based
    score: float | None = None  # the route's own score: similarity, BM25


@dataclass(frozen=True)
class Hit:
    entry: MemoryEntry
    score: float | None = None  # the fused score (None: upstream's keyword recall)
    routes: Mapping[str, RouteRank] = field(default_factory=dict)
    agent: str | None = None  # whose memory it is in (said by a recall across agents)
    # A version no longer true (recall of the past): when it stopped being, what replaced it
    replaced: Mapping[str, object] | None = None

    def to_json(self, explain: bool = False) -> dict[str, object]:
        data: dict[str, object] = dict(self.entry.to_json())
        if self.replaced is not None:
            data["replaced"] = dict(self.replaced)
        if explain:
            data["score"] = self.score
            data["routes"] = {
                name: {"rank": route.rank, "score": route.score}
                for name, route in self.routes.items()
            }
        return data

    @property
    def newer(self) -> str | None:
        """A sentence for a version no longer true: since when, and what is true now."""
        if self.replaced is None:
            return None
        current = self.replaced.get("current")
        text = current.get("content") if isinstance(current, dict) else None
        until = str(self.replaced.get("until") or "").replace("T", " ")
        return f"replaced{' on ' + until if until else ''}; now: {text}"

    def explanation(self) -> str:
        """One line: the fused score and each route's rank (and own score)."""
        parts = [] if self.score is None else [f"score {self.score:.5f}"]
        for name, route in self.routes.items():
            own = "" if route.score is None else f" ({route.score:.3f})"
            parts.append(f"{name} #{route.rank}{own}")
        return " · ".join(parts) or "keyword match"


@dataclass(frozen=True)
class IndexStatus:
    entries: int  # distinct archival entries
    indexed: int  # of them, with a vector of the current model
    model: str
    dim: int | None
    meaningless: bool = False  # the mock embedder
    problem: str | None = None  # the embedder's last failure, while it lasts

    @property
    def pending(self) -> int:
        return self.entries - self.indexed

    def to_json(self) -> dict[str, object]:
        return {
            "entries": self.entries,
            "indexed": self.indexed,
            "pending": self.pending,
            "model": self.model,
            "dimensions": self.dim,
            "meaningless": self.meaningless,
            "problem": self.problem,
        }


class Stopwatch(dict[str, tuple[int, int]]):
    """When each step of a recall ran (epoch ns: start, end); a lap ends where the next begins."""

    def __init__(self) -> None:
        super().__init__()
        self.mark = time.time_ns()

    def lap(self, step: str) -> None:
        now = time.time_ns()
        self[step] = (self.mark, now)
        self.mark = now


@dataclass(frozen=True)
class Recall:
    """What a recall found, and how."""

    query: str
    mode: str  # "keyword" (upstream's: every hit, oldest first), "hybrid", "delegated"
    hits: list[Hit]
    # "used", "failed" (the notice says so), "deferred" (asked to skip it), "off" (no embedder)
    semantic: str = "off"
    notice: str | None = None
    problem: str | None = None  # why the semantic route failed
    index: IndexStatus | None = None
    # When each route ran (epoch ns, start and end): the edges' metrics and spans read it
    timings: Mapping[str, tuple[int, int]] = field(default_factory=dict, compare=False)

    @property
    def entries(self) -> list[MemoryEntry]:
        return [hit.entry for hit in self.hits]

    def to_json(self, explain: bool = False) -> dict[str, object]:
        return {
            "keyword": self.query,
            "mode": self.mode,
            "semantic": self.semantic,
            "notice": self.notice,
            "problem": self.problem,
            "index": None if self.index is None else self.index.to_json(),
            "hits": [hit.to_json(explain) for hit in self.hits],
        }


def core_holding(core: Sequence[MemoryEntry], query: str) -> list[MemoryEntry]:
    """Core entries holding `query` (any case), or all its words in any order."""
    from oryxtui.memory.tokens import tokens

    needle, words = query.strip().lower(), set(tokens(query))
    if not needle:
        return []
    return [
        entry
        for entry in core
        if needle in entry.content.lower() or (words and words <= set(tokens(entry.content)))
    ]


def recall_across(
    recall: Callable[[str | None, str, bool], Recall],
    agents: Sequence[str | None],
    keyword: str,
    semantic: bool,
    top_k: int | None,
) -> Recall:
    """`recall` of each of `agents`, every hit labelled with its agent, merged. An agent whose
    memory cannot be read is left out (its notice says why); a bad query is refused whole."""
    found: list[Recall] = []
    problems = []
    for agent in agents:
        try:
            one = recall(agent, keyword, semantic)
        except OryxError as exc:
            if isinstance(exc, UsageError):
                raise
            problems.append(str(exc))
            continue
        found.append(replace(one, hits=[replace(hit, agent=agent) for hit in one.hits]))
    return merged(keyword, found, problems, top_k)


def merged(
    keyword: str, found: Sequence[Recall], problems: Sequence[str], top_k: int | None
) -> Recall:
    """Recalls of several agents (their hits labelled) as one: ranked recall merges them best
    first (the best `top_k`), keyword recall gives them agent by agent."""
    hits = [hit for recall in found for hit in recall.hits]
    mode = found[0].mode if found else "keyword"
    if mode != "keyword":
        hits.sort(key=lambda hit: -(hit.score or 0.0))
        if top_k is not None:
            hits = hits[:top_k]
    notices = [recall.notice for recall in found if recall.notice] + list(problems)
    semantic_state = next((r.semantic for r in found if r.semantic != "off"), "off")
    problem = next((r.problem for r in found if r.problem), None)
    return Recall(keyword, mode, hits, semantic_state, notices[0] if notices else None, problem)
