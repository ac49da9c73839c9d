"""Recall quality on conversational memory. Prints JSON.

Run: python tests/benchmarks/bench_quality.py [--data locomo10.json] [--local | --provider
     local|onnx | --embedding-url URL --embedding-model NAME] [--split tune|test|locomo-tune]

Each dialogue turn of a conversation becomes one archival entry of that conversation's agent
(`Speaker: text`, stamped with its session's time); each question is asked as `recall` is
asked; a question is found at k when one of its evidence turns is among the first k hits.
Reported for each system: R@1, R@5, R@10, MRR@10 and the questions with no hit at all (and,
of the questions that share a content word with their evidence, the share with none).

Systems, all in the same run: oryxtui's keyword mode (upstream's substring rule), its lexical
route alone, its default fusion without an embedder, and — with an embedder — its semantic
route alone (with the floor the default uses, and without one), the default fusion, and the
upstream profile; `default_minus_best_route` is the default's R@k less the best single route's
(each with its floor, as recall offers them); baselines: plain BM25 (`rank-bm25`
Okapi, text lower-cased and split on non-alphanumerics) and, with an embedder, plain dense
cosine over the same vectors.

Data: a LoCoMo- (or LongMemEval-converted) file given with --data (the public sets are not
vendored), else the self-made fixture of `quality_fixture.py` in the same schema. `--split
tune` keeps the even-numbered conversations, `--split test` the odd ones (tune on one, report
the other); `all` (the default) keeps every one.

False hits, for each system: of questions no memory can answer — general-knowledge questions
on subjects no conversation touches, and made-up words that occur in no turn
(`unrelated_questions.py`), asked of every conversation — the share that get any hit, and the
share that get a hit only the semantic route found (what a calibrated floor must keep at or
below 1 %).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
from unrelated_questions import UNRELATED, nonsense

from oryxtui.config import Settings
from oryxtui.memory import MemoryService
from oryxtui.memory.format import ARCHIVAL_HEADER, CORE_HEADER, sanitize_content
from oryxtui.memory.recall.embedders import create_embedder
from oryxtui.memory.tokens import terms
from oryxtui.workspace import Workspace, init_workspace

sys.path.insert(0, str(Path(__file__).parent))
import candidate_embedders
import quality_assistant
import quality_fixture
import quality_notes

K = 10
# LoCoMo's conversations recall is tuned on (issue 55); the other five are held out: no run here
# reads them.
LOCOMO_TUNE = frozenset({"conv-26", "conv-30", "conv-41", "conv-42", "conv-43"})
QUICK = {
    "oryxtui lexical route alone",
    "oryxtui semantic route alone",
    "oryxtui default, no embedder",
    "oryxtui default, with the embedder",
}


SETS = {"chats": quality_fixture, "notes": quality_notes, "assistant": quality_assistant}


def load(path: str | None, made: str = "chats") -> list[dict[str, Any]]:
    if path is None:
        return SETS[made].build()
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return data if isinstance(data, list) else [data]


def session_time(text: str) -> str:
    for form in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y"):
        try:
            return datetime.strptime(text.strip(), form).strftime("%Y-%m-%d %H:%M:%S")
        except ValueError:
            continue
    return "2023-01-01 00:00:00"


def turns_of(sample: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(dia_id, time, entry text) of every turn, in order."""
    conversation = sample["conversation"]
    found = []
    numbers = sorted(
        int(m[1]) for key in conversation if (m := re.fullmatch(r"session_(\d+)", key))
    )
    for number in numbers:
        when = session_time(str(conversation.get(f"session_{number}_date_time", "")))
        for turn in conversation[f"session_{number}"]:
            text = sanitize_content(f"{turn['speaker']}: {turn.get('text', '')}")
            found.append((str(turn["dia_id"]), when, text))
    return found


def questions_of(sample: dict[str, Any], answerable: bool = False) -> list[dict[str, Any]]:
    """The questions with evidence; `answerable`: not LoCoMo's adversarial ones (category 5,
    asked about what the conversation does not say), as the issue's protocol counts them."""
    return [
        q
        for q in sample.get("qa", [])
        if q.get("evidence") and q.get("question") and not (answerable and q.get("category") == 5)
    ]


class FalseHits:
    """How often a question no memory can answer gets a hit (any, and by meaning alone)."""

    def __init__(self) -> None:
        self.asked = {"unrelated": 0, "nonsense": 0}
        self.any = {"unrelated": 0, "nonsense": 0}
        self.semantic_only = {"unrelated": 0, "nonsense": 0}

    def add(self, kind: str, hits: int, semantic_only: bool) -> None:
        self.asked[kind] += 1
        self.any[kind] += hits > 0
        self.semantic_only[kind] += semantic_only

    def to_json(self) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for kind, asked in self.asked.items():
            found[f"{kind}_any_hit_pct"] = round(100 * self.any[kind] / (asked or 1), 1)
            found[f"{kind}_semantic_only_pct"] = round(
                100 * self.semantic_only[kind] / (asked or 1), 1
            )
        return found


def only_by_meaning(found: Any) -> bool:
    """A recall with a hit that only the semantic route found."""
    return any(
        "semantic" in hit.routes and not {"lexical", "keyword"} & set(hit.routes)
        for hit in found.hits
    )


class Scores:
    def __init__(self) -> None:
        self.ranks: list[int | None] = []  # 1-based rank of the first evidence hit
        self.no_hit = 0
        self.no_hit_sharing = 0
        self.sharing = 0

    def add(self, ranked: list[set[str]], evidence: set[str], shares_a_word: bool) -> None:
        rank = next((i for i, ids in enumerate(ranked[:K], 1) if ids & evidence), None)
        self.ranks.append(rank)
        self.no_hit += not ranked
        self.sharing += shares_a_word
        self.no_hit_sharing += shares_a_word and not ranked

    def to_json(self) -> dict[str, Any]:
        n = len(self.ranks) or 1

        def at(k: int) -> float:
            return round(100 * sum(1 for r in self.ranks if r and r <= k) / n, 1)

        mrr = sum(1 / r for r in self.ranks if r) / n
        return {
            "R@1": at(1),
            "R@5": at(5),
            "R@10": at(10),
            "MRR@10": round(mrr, 3),
            "no_hit": self.no_hit,
            "no_hit_of_sharing_pct": round(100 * self.no_hit_sharing / (self.sharing or 1), 1),
        }


def tokenize_plain(text: str) -> list[str]:
    return [t for t in re.split(r"[^0-9a-z]+", text.lower()) if t]


def write_memory(workspace: Workspace, agent: str, turns: list[tuple[str, str, str]]) -> None:
    folder = workspace.agents_dir / agent
    folder.mkdir(parents=True, exist_ok=True)
    lines = [f"- [{when}] {text}" for _, when, text in turns]
    (folder / "MEMORY.md").write_text(
        f"{CORE_HEADER}\n{ARCHIVAL_HEADER}\n" + "\n".join(lines) + "\n", encoding="utf-8"
    )


def settings_for(recall: dict[str, Any], embedding: dict[str, Any] | None) -> Settings:
    return Settings.model_validate(
        {"memory": {"recall": {"top_k": K, **recall}}, "embedding": embedding or {}}
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data")
    parser.add_argument("--embedding-url")
    parser.add_argument("--embedding-model")
    parser.add_argument("--local", action="store_true", help='embedding provider "local"')
    parser.add_argument("--provider", choices=["local", "onnx"], help="an in-process embedder")
    parser.add_argument(
        "--candidate",
        choices=sorted(candidate_embedders.CANDIDATES),
        help="a candidate model (candidate_embedders.py) behind the engine, in place of onnx's",
    )
    parser.add_argument(
        "--split",
        choices=["all", "tune", "test", "locomo-tune"],
        default="all",
        help="locomo-tune: LoCoMo's first five conversations only (conv-26, -30, -41, -42, -43),"
        " the ones recall is tuned on; the other five are held out and never read here",
    )
    parser.add_argument(
        "--set",
        choices=list(SETS),
        default="chats",
        help="the self-made set: chats (quality_fixture.py), an agent's notes (quality_notes.py), "
        "or an assistant's memory of a person (quality_assistant.py, never calibrated on)",
    )
    parser.add_argument(
        "--min-similarity",
        type=float,
        help="the semantic floor of the default fusion (to calibrate)",
    )
    parser.add_argument(
        "--quick", action="store_true", help="only the default and its routes, no baselines"
    )
    options = parser.parse_args()
    samples = load(options.data, options.set)
    if options.split == "locomo-tune":  # kept before anything else looks at the samples
        samples = [s for s in samples if s.get("sample_id") in LOCOMO_TUNE]
        if len(samples) != len(LOCOMO_TUNE):
            sys.exit(f"--split locomo-tune: {options.data} lacks some of {sorted(LOCOMO_TUNE)}")
    elif options.split != "all":  # even conversations to tune on, odd ones to report
        samples = samples[0 if options.split == "tune" else 1 :: 2]
    embedding: dict[str, Any] | None = None
    if options.candidate:  # the engine made with onnx's settings, then given the candidate
        embedding = {"provider": "onnx"}
    elif options.local or options.provider:
        embedding = {"provider": options.provider or "local"}
    elif options.embedding_url:
        embedding = {
            "provider": "openai",
            "base_url": options.embedding_url,
            "model": options.embedding_model,
        }
    systems: dict[str, tuple[dict[str, Any], dict[str, Any] | None]] = {
        "oryxtui keyword mode (upstream's substring rule)": ({"mode": "keyword"}, None),
        "oryxtui lexical route alone": (
            {"mode": "hybrid", "weight": {"keyword": 0, "semantic": 0, "recency": 0}},
            None,
        ),
        "oryxtui default, no embedder": ({}, None),
    }
    if embedding:
        systems |= {
            "oryxtui semantic route alone": (
                {"weight": {"keyword": 0, "lexical": 0, "recency": 0}},
                embedding,
            ),
            "oryxtui semantic route alone, no floor": (
                {"weight": {"keyword": 0, "lexical": 0, "recency": 0}, "min_similarity": -1},
                embedding,
            ),
            "oryxtui default, with the embedder": (
                {}
                if options.min_similarity is None
                else {"min_similarity": options.min_similarity},
                embedding,
            ),
            "oryxtui upstream profile, with the embedder": ({"profile": "upstream"}, embedding),
        }
    if options.quick:  # what the test suite checks: the default and its routes
        systems = {name: systems[name] for name in systems if name in QUICK}
    dense = bool(embedding) and not options.quick
    from rank_bm25 import BM25Okapi

    results: dict[str, Scores] = {name: Scores() for name in [*systems, "plain BM25"]}
    if dense:
        results["plain dense cosine"] = Scores()
    false_hits: dict[str, FalseHits] = {name: FalseHits() for name in [*systems, "plain BM25"]}
    if dense:
        false_hits["plain dense cosine"] = FalseHits()
    timings: dict[str, list[float]] = {name: [] for name in systems}
    total_turns = total_questions = 0
    index_seconds = 0.0
    with tempfile.TemporaryDirectory() as folder:
        workspace = init_workspace(Path(folder) / "w")
        services = {
            name: MemoryService.open(workspace, settings_for(recall, emb))
            for name, (recall, emb) in systems.items()
        }
        embedder = create_embedder(settings_for({}, embedding).embedding) if dense else None
        if options.candidate:
            candidate = candidate_embedders.CANDIDATES[options.candidate]()
            embedder = candidate if dense else None
            for service in services.values():
                if service.engine is not None and service.engine.embedder is not None:
                    service.engine.embedder = candidate
        for number, sample in enumerate(samples):
            agent = f"conv{number}"
            turns = turns_of(sample)
            total_turns += len(turns)
            write_memory(workspace, agent, turns)
            ids_of: dict[str, set[str]] = {}
            for dia, _, text in turns:
                ids_of.setdefault(text, set()).add(dia)
            # The baselines rank each distinct text once, as the engine does: a line said ten
            # times ("Thanks!") must not fill their top ten where the engine shows it once.
            texts = list(ids_of)
            bm25 = BM25Okapi([tokenize_plain(t) or [""] for t in texts])
            for service in services.values():
                if service.engine is not None and service.engine.embedder is not None:
                    started = time.perf_counter()
                    service.sync_index(agent)  # the first embeds; the rest find it done
                    index_seconds += time.perf_counter() - started
            vectors = None
            if embedder is not None:
                vectors = np.asarray(embedder.embed(texts, "passage"))
                vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            known = {word for _, _, text in turns for word in terms(text)}
            for kind, question in [
                *(("unrelated", q) for q in UNRELATED),
                *(("nonsense", q) for q in nonsense(len(UNRELATED), known, seed=number)),
            ]:
                for name, service in services.items():
                    found = service.recall(agent, question)
                    false_hits[name].add(kind, len(found.hits), only_by_meaning(found))
                scores = bm25.get_scores(tokenize_plain(question) or [""])
                false_hits["plain BM25"].add(kind, int((scores > 0).sum()), False)
                if vectors is not None:
                    false_hits["plain dense cosine"].add(kind, len(texts), True)
            for qa in questions_of(sample, answerable=options.split == "locomo-tune"):
                total_questions += 1
                question, evidence = str(qa["question"]), {str(e) for e in qa["evidence"]}
                evidence_words = set(terms(" ".join(t for d, _, t in turns if d in evidence)))
                shares = bool(evidence_words & set(terms(question)))
                for name, service in services.items():
                    started = time.perf_counter()
                    found = service.recall(agent, question)
                    timings[name].append(time.perf_counter() - started)
                    ranked = [ids_of.get(e.content, set()) for e in found.entries]
                    results[name].add(ranked, evidence, shares)
                scores = bm25.get_scores(tokenize_plain(question) or [""])
                order = [i for i in np.argsort(-scores, kind="stable")[:K] if scores[i] > 0]
                results["plain BM25"].add([ids_of[texts[i]] for i in order], evidence, shares)
                if vectors is not None and embedder is not None:
                    (query,) = embedder.embed([question], "query")
                    similarity = vectors @ (query / np.linalg.norm(query))
                    top = np.argsort(-similarity, kind="stable")[:K]
                    results["plain dense cosine"].add(
                        [ids_of[texts[i]] for i in top], evidence, shares
                    )
    systems_json = {name: scores.to_json() for name, scores in results.items()}
    routes = [
        name
        for name in (
            "oryxtui lexical route alone",
            "oryxtui semantic route alone",
            *(["oryxtui default, no embedder"] if embedding else []),
        )
    ]
    default = "oryxtui default, with the embedder" if embedding else "oryxtui default, no embedder"
    versus = {
        at: round(
            systems_json[default][at]
            - max(systems_json[name][at] for name in routes if name in systems_json),
            1,
        )
        for at in ("R@1", "R@5", "R@10")
    }
    report = {
        "data": options.data or f"self-made {options.set} ({SETS[options.set].__name__}.py)",
        "split": options.split,
        "conversations": len(samples),
        "turns": total_turns,
        "questions": total_questions,
        "k": K,
        "systems": systems_json,
        # the default's R@k minus the best single route's (each with its floor): >= 0 wanted
        "default_minus_best_route": versus,
        "false_hits": {name: hits.to_json() for name, hits in false_hits.items()},
        "index_seconds": round(index_seconds, 1),
        "index_seconds_per_10k_turns": round(10_000 * index_seconds / (total_turns or 1), 1),
        "recall_ms_median": {
            name: round(1000 * float(np.median(times)), 2) for name, times in timings.items()
        },
    }
    print(json.dumps(report, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
