"""What a new entry is related to, for the caller that judges: the entries most likely about the
same thing — the memory's, ranked as recall ranks (words and, where there is an embedder,
meaning), and the changes held for review, ranked by words — so that a calling model, which
reads them, can replace an older version itself. No model is called here; nothing is done."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from oryxtui.errors import OryxError, UsageError
from oryxtui.memory.format import MemoryEntry
from oryxtui.memory.service.base import AgentArg
from oryxtui.memory.service.reviewing import Awaiting, Reviewing
from oryxtui.memory.snapshot import Corpus
from oryxtui.memory.tokens import terms

if TYPE_CHECKING:
    from oryxtui.memory.recall.results import Recall

RELATED = 5  # entries a save's answer names at most
# Recall's first candidates, of which those about the same subject go first: on the project's
# facts set with `onnx` (bench_facts.py; set on its tune half, 2026-12-07) the previous version
# is among the 5 for 91 % of the test half's updates (85.7 % in recall's order alone; with 8
# or 12 candidates no better, with 30 the subject's other entries crowd it out).
CANDIDATES = 10


@dataclass(frozen=True)
class Related:
    """An entry probably about the same thing as a save; `held`: a change waiting for review
    (in no memory and no prompt yet)."""

    entry: MemoryEntry
    held: bool = False

    def to_json(self) -> dict[str, object]:
        return {**self.entry.to_json(), "scope": self.entry.scope.value, "held": self.held}


class _Frozen:
    """Entries that are not a memory's own file (a memory as it stood, the held changes):
    something recall can rank."""

    def __init__(self, corpus: Corpus) -> None:
        self._corpus = corpus

    def corpus_version(self, agent: str | None) -> Hashable:
        return id(self._corpus)

    def corpus(self, agent: str | None) -> Corpus:
        return self._corpus


class Relating(Reviewing):
    def by_words(self, name: str | None, entries: Sequence[MemoryEntry], query: str) -> Recall:
        """`entries` ranked for `query` as recall ranks by words and time (no meaning: these
        entries have no vectors)."""
        from oryxtui.memory.recall.engine import RecallEngine

        setup = self.recall_setup
        if setup is None:
            raise UsageError("Ranking needs a workspace's settings; nothing was searched.")
        corpus = Corpus([e.line for e in entries], list(entries))
        engine = RecallEngine(_Frozen(corpus), None, setup.settings, None)  # type: ignore[arg-type]
        return engine.recall(name, query, semantic=False)

    if TYPE_CHECKING:  # Currency's: what a text is about among the agent's entries

        def about(self, agent: AgentArg, content: str) -> frozenset[str]: ...

    def related(
        self,
        agent: AgentArg,
        content: str,
        waiting: Sequence[Awaiting] | None = None,
        limit: int = RELATED,
    ) -> list[Related]:
        """Up to `limit` entries most likely about the same thing as `content`: the held
        changes recall finds by words first (no prompt shows them, and an update of a held
        fact is held too), then the memory's by recall — of its first `CANDIDATES`, those
        that name what `content` is about (the person, the service) before the others. Empty
        where the memory cannot rank (a server that ranks, mem0) or cannot be read: a save
        never fails because of it. `waiting`: the held changes, when the caller read them."""
        name = self.resolve_agent(agent)
        engine = self.engine
        if engine is None:
            return []
        text = self.admission.text(content)
        found: dict[str, Related] = {}
        try:
            waiting = self.held(name) if waiting is None else waiting
            held = [item.entry for item in waiting if item.proposes in ("save", "edit", "move")]
            if held:
                for hit in self.by_words(name, held, text).hits:
                    found.setdefault(hit.entry.line, Related(hit.entry, held=True))
            subject = self.about(name, text)
            hits = [hit.entry for hit in engine.recall(name, text, limit=CANDIDATES).hits]
            hits.sort(key=lambda entry: not subject & set(terms(entry.content)))  # stable
            for entry in hits:
                found.setdefault(entry.line, Related(entry))
        except OryxError:
            pass  # what could be ranked stands
        return list(found.values())[:limit]
