"""Embedding provider "local": vectors that ship in a wheel (the `local` extra), read without a
server, a key or a download; a missing extra or a damaged model is one sentence."""

from __future__ import annotations

from datetime import datetime

import numpy as np
import pytest

from oryxtui.config import Settings
from oryxtui.errors import EmbedderError, MissingExtra
from oryxtui.memory import MemoryService
from oryxtui.memory.recall import embedders
from oryxtui.memory.recall.embedders import LocalEmbedder, create_embedder
from oryxtui.workspace import Workspace
from tests.support import FACTS, ROUTINE_NOTES, embed_offline

LOCAL = Settings.model_validate({"embedding": {"provider": "local"}})
WORDS_OFF = {"lexical": 0, "keyword": 0}
NOTES = [*FACTS, "We rolled back release 4.2 after the checkout errors."]


def test_vectors_mean_something_and_are_unit_length() -> None:
    embedder = create_embedder(LOCAL.embedding)
    assert isinstance(embedder, LocalEmbedder) and not embedder.meaningless
    ship, deploy, pie, empty = embedder.embed(
        [
            "When can we ship the release?",
            "The deploy window is Thursday afternoon.",
            "My grandmother bakes apple pie every Sunday.",
            "",
        ],
        "query",
    )
    for vector in (ship, deploy, pie, empty):
        assert vector.shape == (256,) and vector.dtype == np.float32
        assert np.isclose(float(np.linalg.norm(vector)), 1.0, atol=1e-5)
    assert float(ship @ deploy) > float(ship @ pie) + 0.1


def test_it_loads_offline_and_never_runs_the_packages_code(tmp_path) -> None:
    """No network (proxies pointing nowhere, the hub told to stay offline, an empty cache) and
    the package's own loader, which downloads and configures logging, never imported."""
    done = embed_offline(
        tmp_path, "oryxtui.memory.recall.embedders", "LocalEmbedder", {"wordllama"}
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "256"
    assert not list((tmp_path).rglob("*.json")), "nothing is cached or downloaded"


def test_a_damaged_model_is_one_sentence_and_recall_goes_on(
    monkeypatch: pytest.MonkeyPatch, workspace: Workspace
) -> None:
    monkeypatch.setattr(embedders, "LOCAL_FILES", ("weights/gone.safetensors", "x.json"))
    with pytest.raises(EmbedderError, match=r"cannot be read .*pip install --force-reinstall"):
        LocalEmbedder().embed(["anything"])
    service = MemoryService.open(workspace, LOCAL)
    service.save("ops", "The deploy window is Thursday afternoon.", "archival")
    found = service.recall("ops", "deploy window")  # the words still find it
    assert [e.content for e in found.entries] == ["The deploy window is Thursday afternoon."]
    assert found.semantic == "failed" and "cannot be read" in (found.problem or "")


def test_without_the_extra_the_provider_names_the_install_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from oryxtui import extras

    monkeypatch.setitem(extras.EXTRAS, "local", ("no_such_package_for_oryxtui",))
    with pytest.raises(MissingExtra, match=r"the local extra .* pip install '.*\[local\]'"):
        create_embedder(LOCAL.embedding)


def test_a_whole_agent_is_indexed_and_found_by_meaning(workspace: Workspace) -> None:
    # The time is part of the line that is embedded (as upstream embeds it): held still. The
    # semantic route alone (no words route), at the model's calibrated floors.
    meaning_only = Settings.model_validate(
        {"embedding": {"provider": "local"}, "memory": {"recall": {"weight": WORDS_OFF}}}
    )
    service = MemoryService.open(workspace, meaning_only, lambda: datetime(2026, 12, 5, 16, 0))
    for text in [*NOTES, *ROUTINE_NOTES]:
        service.save("ops", text, "archival")
    status = service.sync_index("ops")
    assert status is not None and status.pending == 0 and status.indexed == 12
    found = service.recall("ops", "which weekdays can we deploy?")
    assert found.semantic == "used"
    assert [e.content for e in found.entries] == [NOTES[0]]
    for unknown in ("what is my aunt's favourite film?", "zzzz-no-such", "failover drill"):
        assert service.recall("ops", unknown).entries == [], unknown


def test_a_handful_of_entries_is_held_to_the_floor_alone(workspace: Workspace) -> None:
    """Of a few scores the nearer ones are barely above their mean (of two, exactly one
    deviation: rounding would decide): below ten entries, the floor alone decides; from ten,
    an entry must also stand out."""
    from oryxtui.memory.recall.fusion import Route

    engine = MemoryService.open(
        workspace, Settings.model_validate({"embedding": {"provider": "mock"}})
    ).engine
    assert engine is not None
    few = Route("semantic", 1.0, np.arange(3), np.array([0.6, 0.55, 0.1]))
    assert engine.relevant(few).tolist() == [0, 1]  # both over 0.35
    many = Route("semantic", 1.0, np.arange(10), np.array([0.9, 0.55, *[0.4] * 8]))
    assert engine.relevant(many).tolist() == [0]  # over the floor, and standing out
