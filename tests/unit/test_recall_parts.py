"""The recall engine's parts, against upstream's definitions: fusion arithmetic and its
order, the mock embedder value for value, entry hashes and vector BLOBs, the lexical route;
and what meaning admits below its floor, and what of an entry a model reads."""

from __future__ import annotations

import hashlib
from datetime import datetime

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from oryxtui.config import Settings
from oryxtui.memory import MemoryService
from oryxtui.memory.recall.embedders import MOCK_MODEL_ID, MockEmbedder, mock_vector
from oryxtui.memory.recall.fusion import Route, fuse
from oryxtui.memory.recall.lexical import LexicalIndex
from oryxtui.memory.recall.relevance import Standout, relevant
from oryxtui.memory.recall.vectors import VectorMatrix, decode, encode, entry_hash
from oryxtui.memory.tokens import fold, normal, pattern, terms, words
from oryxtui.workspace import Workspace

# upstream's MockEmbeddingModel.embed(text) through VectorCodec.encode, printed by the Java
# code at a27474c (compiled and run once; the BLOB bytes in hex)
JAVA_MOCK_HELLO = (
    "30099d3dab29273e75ef873d8399cbbd67453d3dfc2e5d3dabec483e33763dbe17dd5c3b07e203be"
    "eb796cbbaa1b103df896afbd32303abe301444bd4b7d463c71c7a83dc144473ecbd196bdabf93bbe"
    "33610abe5c1cb23b6ed85ebedeb4bebdb62c063e0313a03d2e750cbd0efb0b3e2947febdf82018bd"
    "3adf51bc4059e73c69d9063e319e1f3e3c0e883b0e53bfbc49bd21be78e5273e2bd257be51e14bbe"
    "6b90d13d342dd93da84b1cbdfa898dbc89df50bed3cd03bc8c6391bdcdb1423dc91038be909441be"
    "aea8e9bd255bb4bdc727493c1e7f8dbc56a94fbe10ffc43da38528bedc3821be666a583e69a659be"
    "edc0393edae8fcbc26040f3e4233d1bd"
)
JAVA_MOCK_CJK_LINE = (
    "cdaf5dbeacff3b3dbb931d3dca9e063d94f680bc5934bfbda3abe83d42c8593ec854143d84605abe"
    "9244463eaf85f13c1b051a3e20db813d782f3dbe3f3b08be4fc969bce8372cbd722a5dbe17c90a3e"
    "4a9713be37623fbe2002ec3c78ccd93d25ac7a3d58e0c53de6dbce3c7979043ee8f04e3df27c153c"
    "5fa7203efe1696bdd6863ebe11fd5cbd618deabc1a159f3d6268273e7eaf583e5ed7833db15511be"
    "93a4733b27bbb5bde5592b3e0b83a23dafcb06beae37053e1181263e540d19be93cb67bdddfc94bd"
    "9c3707bc2c20083e9c438c3d49a9e5bd99323e3ee33812becb74debda104703bf04f44be9d63593e"
    "bf03c53d6d8ea03d7b9240be34ffdc3d"
)


def ids(*values: int) -> np.ndarray:
    return np.asarray(values, dtype=np.int64)


def test_upstreams_worked_example_top_keyword_and_recency_fifth_by_meaning() -> None:
    entry = 4
    routes = [
        Route("semantic", 1.0, ids(0, 1, 2, 3, entry)),
        Route("keyword", 1.0, ids(entry)),
        Route("recency", 1.0, ids(entry, 3, 2, 1, 0)),
    ]
    chosen, scores = fuse(5, routes, top_k=20)
    assert chosen[0] == entry
    assert scores[0] == 1 / 65 + 1 / 61 + 1 / 61  # summed route by route, as Java does


def test_weights_scale_each_route_and_zero_weighs_nothing() -> None:
    routes = [Route("semantic", 0.0, ids(0, 1)), Route("keyword", 2.0, ids(1))]
    chosen, scores = fuse(2, routes, top_k=5)
    assert chosen.tolist() == [1, 0]
    assert scores.tolist() == [2 / 61, 0.0]


def test_equal_scores_keep_the_order_the_routes_named_them_in() -> None:
    # 0 and 1 tie (each is first in one route); semantic named 1 first, so 1 comes first, as
    # Java's stable sort over upstream's LinkedHashMap keeps it.
    routes = [Route("semantic", 1.0, ids(1)), Route("keyword", 1.0, ids(0))]
    assert fuse(2, routes, top_k=5)[0].tolist() == [1, 0]


def test_a_line_written_twice_counts_twice_in_the_keyword_route_as_upstreams() -> None:
    routes = [Route("keyword", 1.0, ids(0, 1, 0)), Route("recency", 1.0, ids(1, 0))]
    chosen, scores = fuse(2, routes, top_k=5)
    assert chosen.tolist() == [0, 1]
    assert scores[0] == (1 / 61 + 1 / 63) + 1 / 62


def test_the_cut_and_the_eligible_mask() -> None:
    routes = [Route("recency", 1.0, ids(3, 2, 1, 0))]
    assert fuse(4, routes, top_k=2)[0].tolist() == [3, 2]
    eligible = np.array([True, False, True, False])
    assert fuse(4, routes, top_k=5, eligible=eligible)[0].tolist() == [2, 0]


def test_route_ranks_are_one_based_and_the_best_wins() -> None:
    route = Route("keyword", 1.0, ids(2, 0, 2))
    assert route.ranks(4).tolist() == [2, 0, 1, 0]


def test_the_mock_embedder_gives_upstreams_vectors_bit_for_bit() -> None:
    assert encode(mock_vector("hello")).hex() == JAVA_MOCK_HELLO
    assert encode(mock_vector("- [2026-07-22 09:31:12] 部署窗口")).hex() == JAVA_MOCK_CJK_LINE
    (vector,) = MockEmbedder().embed(["hello"])
    assert vector.dtype == np.float32 and len(vector) == 64
    assert abs(float(np.dot(vector, vector)) - 1.0) < 1e-6
    assert MockEmbedder.model_id == MOCK_MODEL_ID == "mock/deterministic"
    assert MockEmbedder.meaningless


def test_entry_hash_and_blob_are_upstreams() -> None:
    line = "- [2026-07-22 09:31:12] deploy window"
    expected = hashlib.sha256(("ops|ARCHIVAL|" + line).encode()).hexdigest()
    assert entry_hash("ops", line) == expected
    assert entry_hash("__global__", "x") == hashlib.sha256(b"__global__|ARCHIVAL|x").hexdigest()
    vector = np.asarray([1.5, -2.0, 0.25], dtype=np.float32)
    assert encode(vector) == bytes.fromhex("0000c03f000000c00000803e")  # float32 little-endian
    assert decode(encode(vector)).tolist() == [1.5, -2.0, 0.25]


def test_the_matrix_grows_and_keeps_to_one_size() -> None:
    matrix = VectorMatrix()
    matrix.add([("a", np.ones(3, np.float32)), ("b", np.zeros(3, np.float32))])
    matrix.add([("a", np.full(3, 2.0, np.float32))])  # the same hash again: replaced
    assert matrix.matrix.shape == (2, 3) and matrix.row_of == {"a": 0, "b": 1}
    assert matrix.norms[0] == np.sqrt(12.0)
    matrix.add([("c", np.ones(5, np.float32))])  # not of this index: left out
    assert matrix.dim == 3 and matrix.row_of == {"a": 0, "b": 1}
    matrix.reset(5)  # the embedder answers another size now
    matrix.add([("c", np.ones(5, np.float32))])
    assert matrix.dim == 5 and matrix.row_of == {"c": 0}


def test_terms_are_folded_content_words_and_cjk_bigrams() -> None:
    assert terms("Deploy-window, FRIDAY 14:00") == ["deploy", "window", "friday", "14", "00"]
    assert terms("部署窗口在周五") == ["部署", "署窗", "窗口", "口在", "在周", "周五"]
    assert terms("猫 and the API") == ["猫", "api"]  # stop words carry nothing
    assert terms("デプロイ 배포 창") == ["デプ", "プロ", "ロイ", "배포", "창"]
    assert terms("When did Caroline’s groups meet?") == ["carolin", "group", "meet"]
    assert terms("ＦＲＩＤＡＹ") == ["friday"]  # NFKC: full-width letters are letters
    assert [fold(w) for w in ("stories", "boxes", "class", "status", "news")] == [
        "story",
        "box",
        "class",
        "status",
        "new",
    ]
    # -ed, -ing and a final e: every form of a verb meets.
    assert {fold(w) for w in ("deploy", "deploys", "deployed", "deploying")} == {"deploy"}
    assert {fold(w) for w in ("move", "moved", "moving", "moves")} == {"mov"}
    assert fold("running") == "run" and fold("need") == "need"


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=40) | st.from_regex(r"[ -~]{0,40}"))
def test_words_of_plain_text_are_those_the_full_expression_finds(text: str) -> None:
    """ASCII text is read with an expression that knows no CJK (it compiles in microseconds,
    where the full one takes milliseconds a process): the same words, whatever the text."""
    folded = normal(text)
    assert words(folded) == pattern("word").findall(folded)


def test_lexical_finds_the_words_in_any_order_best_first() -> None:
    index = LexicalIndex(
        [
            "friday is the deploy window",
            "window cleaning on monday",
            "deploy the window fix on friday, deploy window closes",
            "部署窗口在周五下午",
            "窗口清洁",
        ]
    )
    found, scores = index.search("deploy window friday")
    assert set(found[:2].tolist()) == {0, 2} and found.tolist()[2:] == [1]  # one word: last
    assert list(scores) == sorted(scores, reverse=True)
    assert index.search("When is the deploy window?")[0].tolist()[:2] in ([0, 2], [2, 0])
    assert index.search("窗口部署")[0].tolist() == [3, 4]
    assert index.search("nothing like it")[0].tolist() == []
    assert index.search("  ")[0].tolist() == []


def test_lexical_ties_put_the_later_entry_first() -> None:
    index = LexicalIndex(["blue words", "blue words"])
    assert index.search("blue")[0].tolist() == [1, 0]


def test_a_word_most_entries_hold_matches_nothing_by_itself() -> None:
    chat = [f"Caroline: small talk number {n}" for n in range(40)]
    chat += ["Caroline: I ran a marathon in Porto", "Melanie: nice"]
    index = LexicalIndex(chat)
    found = index.search("Where did Caroline run the marathon?")[0].tolist()
    assert found == [40]  # the name alone is in 41 of 42 entries: no match by itself
    only_name = index.search("What about Caroline?")[0].tolist()
    assert len(only_name) == 41  # a question of only such words still matches them
    assert index.coverage("Where did Caroline run the marathon?") > 0.3  # "run": not held
    assert index.coverage("Has Caroline's baby started walking?") < 0.1  # leave it to meaning
    assert index.coverage("nothing here") == 0.0


def test_below_the_floor_only_a_nearest_that_leads_the_next_counts() -> None:
    band = Standout(0.33, 2.8, 2.0)
    rest = np.linspace(0.05, 0.15, 60)
    # One turn loosely about the subject among many (a long conversation): it stands out of
    # the mean but barely out of the next — nothing counts.
    crowded = np.concatenate([rest, [0.40, 0.38]])
    assert not relevant(crowded, 0.46, band, 1.0).any()
    # A terse note that answers: far above the next nearest — it counts, and only it.
    alone = np.concatenate([rest, [0.40]])
    assert np.flatnonzero(relevant(alone, 0.46, band, 1.0)).tolist() == [60]
    # At the floor, leading or not, each counts; without a sample, the floor alone decides.
    both = np.concatenate([rest, [0.50, 0.49]])
    assert np.flatnonzero(relevant(both, 0.46, band, 1.0)).tolist() == [60, 61]
    assert not relevant(alone, 0.46, band, None).any()


class _Reader:
    """An embedder that records what it is given."""

    meaningless = False
    model_id = "test/reader"

    def __init__(self, reads_content: bool) -> None:
        self.reads_content = reads_content
        self.seen: list[str] = []

    def embed(self, texts: list[str], kind: str = "passage") -> list[np.ndarray]:
        self.seen.extend(texts)
        return [mock_vector(text) for text in texts]


def test_a_model_reads_an_entry_whole_as_upstream_or_without_its_time(
    workspace: Workspace,
) -> None:
    mock = Settings.model_validate({"embedding": {"provider": "mock"}})
    for reads_content in (False, True):
        service = MemoryService.open(workspace, mock, lambda: datetime(2026, 12, 7, 9, 30))
        assert service.engine is not None
        reader = _Reader(reads_content)
        service.engine.embedder = reader
        service.save(f"reader{int(reads_content)}", "the staging database is db-stg-3")
        service.sync_index(f"reader{int(reads_content)}")
        expected = "the staging database is db-stg-3"
        assert reader.seen == [expected if reads_content else f"- [2026-12-07 09:30:00] {expected}"]


def test_a_word_index_grown_by_appends_scores_as_one_made_whole() -> None:
    from oryxtui.memory.recall import lexical

    words = [
        "deploy",
        "window",
        "friday",
        "ledger",
        "staging",
        "host",
        "payout",
        "team",
        "rotate",
        "certificate",
        "部署窗口",
    ]
    texts = [
        " ".join(words[(i * 7 + k * 3) % len(words)] for k in range(1 + i % 6)) + f" s{i % 13}"
        for i in range(300)
    ]
    grown = lexical.LexicalIndex(texts[:200])
    for start in range(200, 300, 25):  # four saves' worth of appends
        extended = grown.extended(texts[start : start + 25])
        assert extended is not None
        grown = extended
    whole = lexical.LexicalIndex(texts)
    for query in ("deploy friday", "ledger s3", "staging host payout", "部署", "certificate s12"):
        found, scores = grown.search(query)
        expected, expected_scores = whole.search(query)
        assert found.tolist() == expected.tolist()
        assert np.allclose(scores, expected_scores)
        assert grown.coverage(query) == whole.coverage(query)
    # Past its segments it is made whole again (the caller does).
    many = lexical.LexicalIndex(texts[:1])
    for text in texts[1 : lexical.MAX_SEGMENTS]:
        step = many.extended([text])
        assert step is not None
        many = step
    assert many.extended(["one more"]) is None


def test_recall_after_saves_ranks_as_a_fresh_engine_does(workspace: Workspace) -> None:
    settings = Settings()
    memory = MemoryService.open(workspace, settings, lambda: datetime(2026, 12, 7, 9, 30))
    for n in range(40):
        memory.save("grow", f"routine check {n} of service s{n % 7}: deploy window ok")
    memory.recall("grow", "deploy window")  # the word index made
    for n in range(5):
        memory.save("grow", f"staging host for ledger is stg-{n}")
        warm = memory.recall("grow", "staging host ledger")
        fresh = MemoryService.open(workspace, settings).recall("grow", "staging host ledger")
        assert [h.entry for h in warm.hits] == [h.entry for h in fresh.hits]
        assert [h.score for h in warm.hits] == [h.score for h in fresh.hits]


def test_a_substring_admits_an_entry_only_where_it_begins_a_word(workspace: Workspace) -> None:
    memory = MemoryService.open(workspace, Settings(), lambda: datetime(2026, 12, 7, 9, 30))
    for text in ("Harry Potter is so immersive", "RSI flare-up after the long week",
                 "staging moved to db-stg-3", "部署窗口在周五"):  # fmt: skip
        memory.save("words", text)
    assert [h.entry.content for h in memory.recall("words", "rsi").hits] == [
        "RSI flare-up after the long week"
    ]  # not "immersive"
    assert [h.entry.content for h in memory.recall("words", "stg").hits] == [
        "staging moved to db-stg-3"
    ]
    assert memory.recall("words", "rr").hits == []  # "Harry": inside a word
    assert [h.entry.content for h in memory.recall("words", "窗口").hits] == ["部署窗口在周五"]
    upstream = Settings.model_validate({"memory": {"recall": {"profile": "upstream"}}})
    kept = MemoryService.open(workspace, upstream).recall("words", "rr")
    assert [h.entry.content for h in kept.hits if "Harry" in h.entry.content]  # upstream's rule
