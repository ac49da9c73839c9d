"""Embedding provider "fastembed": an ONNX model run in this process. No package ships one of
fastembed's models with its tokenizer, so the test builds a tiny one — a real ONNX graph
(a table looked up per token) and a real tokenizer.json — registers it with fastembed and
loads it from its folder, as `model_path` does for a downloaded model; nothing is fetched."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from oryxtui.config import Settings
from oryxtui.errors import EmbedderError
from oryxtui.memory import MemoryService
from oryxtui.memory.recall.embedders import FastEmbedEmbedder, create_embedder
from oryxtui.workspace import Workspace

TINY = "oryxtui-tests/tiny-table"
VOCABULARY = ["[PAD]", "[UNK]", "ship", "deploy", "window", "when", "pie", "grandmother"]
# Four numbers a word: ship, deploy and window near each other; pie and grandmother elsewhere.
TABLE = np.array(
    [
        [0, 0, 0, 0],
        [0, 0, 0, 0],  # an unknown word (a stored line's time) points nowhere
        [1, 0.2, 0, 0],
        [1, 0, 0.2, 0],
        [0.8, 0, 0.3, 0],
        [0, 0, 0.3, 0.1],
        [0, 1, 0, 0],
        [0, 0.9, 0, 0.2],
    ],
    dtype=np.float32,
)


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import onnx
    from fastembed import TextEmbedding
    from fastembed.common.model_description import ModelSource, PoolingType
    from onnx import TensorProto, helper, numpy_helper
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    folder = tmp_path_factory.mktemp("tiny-model")
    tokenizer = Tokenizer(
        models.WordLevel({word: i for i, word in enumerate(VOCABULARY)}, unk_token="[UNK]")
    )
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.save(str(folder / "tokenizer.json"))
    (folder / "tokenizer_config.json").write_text(
        json.dumps({"model_max_length": 128, "pad_token": "[PAD]"})
    )
    (folder / "special_tokens_map.json").write_text(
        json.dumps({"pad_token": "[PAD]", "unk_token": "[UNK]"})
    )
    (folder / "config.json").write_text(json.dumps({"pad_token_id": 0}))
    graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "input_ids"], ["last_hidden_state"], axis=0)],
        "tiny",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["b", "s"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["b", "s"]),
        ],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["b", "s", 4])],
        [numpy_helper.from_array(TABLE, "table")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    (folder / "onnx").mkdir()
    onnx.save(model, str(folder / "onnx" / "model.onnx"))
    if TINY not in {m["model"] for m in TextEmbedding.list_supported_models()}:
        TextEmbedding.add_custom_model(
            model=TINY,
            pooling=PoolingType.MEAN,
            normalization=True,
            sources=ModelSource(hf=TINY),
            dim=4,
        )
    return folder


def settings(folder: Path | str, **more: object) -> Settings:
    embedding = {"provider": "fastembed", "model": TINY, "model_path": str(folder), **more}
    return Settings.model_validate({"embedding": embedding})


def test_the_model_runs_with_the_mean_of_its_tokens_and_unit_length(tiny_model: Path) -> None:
    embedder = create_embedder(settings(tiny_model).embedding)
    assert isinstance(embedder, FastEmbedEmbedder) and embedder.model_id == f"fastembed/{TINY}"
    ship, deploy, pie = embedder.embed(["when ship", "Deploy window", "grandmother pie"])
    expected = (TABLE[5] + TABLE[2]) / 2
    assert np.allclose(ship, expected / np.linalg.norm(expected), atol=1e-5)
    assert all(np.isclose(float(np.linalg.norm(v)), 1.0, atol=1e-5) for v in (ship, pie))
    assert float(ship @ deploy) > float(ship @ pie) + 0.5


def test_queries_and_passages_get_the_prefixes_set(tiny_model: Path) -> None:
    """A prefix word the vocabulary knows shifts the vector: proof it was sent to the model."""
    embedder = create_embedder(
        settings(tiny_model, query_prefix="pie ", passage_prefix="").embedding
    )
    (query,), (passage,) = embedder.embed(["ship"], "query"), embedder.embed(["ship"])
    assert float(query @ passage) < 0.99
    assert embedder.model_id == f"fastembed/{TINY}"  # no passage prefix: plain vectors


def test_recall_finds_by_meaning_through_the_engine(tiny_model: Path, workspace: Workspace) -> None:
    service = MemoryService.open(workspace, settings(tiny_model))
    for text in ["Deploy window", "grandmother pie", "pie"]:
        service.save("ops", text, "archival")
    found = service.recall("ops", "when ship")
    assert found.semantic == "used"
    assert [e.content for e in found.entries] == ["Deploy window"]


def test_a_model_that_cannot_be_loaded_is_one_sentence_and_recall_goes_on(
    tmp_path: Path, tiny_model: Path, workspace: Workspace
) -> None:
    empty = tmp_path / "nothing-here"
    empty.mkdir()
    with pytest.raises(EmbedderError, match=r"^fastembed cannot load model .* from .*nothing-here"):
        create_embedder(settings(empty).embedding).embed(["x"])
    unknown = Settings.model_validate(
        {"embedding": {"provider": "fastembed", "model": "no/such-model", "model_path": str(empty)}}
    )
    with pytest.raises(EmbedderError, match=r"cannot load model 'no/such-model'"):
        create_embedder(unknown.embedding).embed(["x"])
    service = MemoryService.open(workspace, settings(empty))
    service.save("ops", "Deploy window is Thursday", "archival")
    found = service.recall("ops", "deploy window")
    assert [e.content for e in found.entries] == ["Deploy window is Thursday"]
    assert found.semantic == "failed" and "cannot load model" in (found.problem or "")
