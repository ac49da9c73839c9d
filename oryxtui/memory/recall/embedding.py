"""What every embedding provider shares: a vector, a model loaded once on first use, and the
check that an embedder's answer is vectors worth storing."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

import numpy as np

from oryxtui.errors import EmbedderError

Vector = np.ndarray
T = TypeVar("T")


def usable(vectors: Sequence[np.ndarray], where: str) -> list[np.ndarray]:
    """The embedder's answer as vectors to store: one-dimensional, of one size, finite; else
    EmbedderError naming `where` (a NaN stored would silently end recall by meaning)."""
    sizes = {vector.shape for vector in vectors}
    if len(sizes) > 1 or any(len(shape) != 1 or not shape[0] for shape in sizes):
        raise EmbedderError(
            f"{where} answered vectors of different sizes, or empty ones; check the model."
        )
    if not all(np.isfinite(vector).all() for vector in vectors):
        raise EmbedderError(f"{where} answered numbers that are not finite (NaN or infinity).")
    return list(vectors)


class Once(Generic[T]):
    """A model loaded on first use, by one thread (the others wait for it); a failure is not
    kept, so the next use tries again."""

    def __init__(self, load: Callable[[], T]) -> None:
        self._load = load
        self._value: T | None = None
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        return self._value is not None

    def __call__(self) -> T:
        with self._lock:
            if self._value is None:
                self._value = self._load()
            return self._value
