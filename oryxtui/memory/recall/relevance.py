"""What meaning finds relevant: an embedder's calibrated floors, and the rule that picks, of an
agent's entries, those whose similarity to a question stands out enough to be a hit — so that
a question about nothing the agent knows finds nothing."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

# The cosine similarity from which an entry counts as close, unless the embedder says its own
# or `[memory.recall] min_similarity` is set.
SIMILARITY_FLOOR = 0.35


class Standout(NamedTuple):
    """Below the floor, the nearest entry still counts when it reaches `similarity`, stands
    `deviations` above the agent's mean and `lead` deviations above the next nearest: one
    note that answers, not the best of many entries loosely about the same thing."""

    similarity: float
    deviations: float
    lead: float = 0.0


def relevant(
    scores: np.ndarray, floor: float, band: Standout | None, spread: float | None
) -> np.ndarray:
    """Which of the scores (one per entry, all of the agent's) count: at least `floor`, or
    the nearest by `band` (see Standout); and, with `spread`, that many deviations above the
    mean either way (None: the scores are no sample of the agent's entries, the floor alone
    decides)."""
    if spread is None:
        return scores >= floor
    mean, deviation = float(scores.mean()), float(scores.std()) or 1.0
    above = (scores - mean) / deviation
    found = scores >= floor
    if band is not None and len(scores):
        nearest = int(np.argmax(scores))
        runner_up = float(np.partition(above, -2)[-2]) if len(scores) > 1 else -np.inf
        if (
            scores[nearest] >= band.similarity
            and above[nearest] >= band.deviations
            and above[nearest] - runner_up >= band.lead
        ):
            found[nearest] = True
    return found & (above >= spread)


def similarity_floor(setting: float | None, embedder: object | None, query: str = "") -> float:
    """The floor a similarity must reach: the setting, else the embedder's own — for a
    question mostly in CJK script, its CJK floor where it has one (a model that places every
    Chinese sentence near every other needs a higher one)."""
    if setting is not None:
        return setting
    cjk_floor = getattr(embedder, "cjk_similarity_floor", None)
    if cjk_floor is not None and mostly_cjk(query):
        return float(cjk_floor)
    return float(getattr(embedder, "similarity_floor", SIMILARITY_FLOOR))


def standout_floor(
    setting: float | None, embedder: object | None, query: str = ""
) -> Standout | None:
    """When the nearest entry counts below the floor (see Standout) — a short note that
    answers scores lower than a long one, but it stands out of the rest. The embedder's own
    (calibrated with its floor), never when a setting sets the floor or the question is
    mostly CJK."""
    if setting is not None or mostly_cjk(query):
        return None
    band = getattr(embedder, "standout_floor", None)
    return None if band is None else Standout(*(float(value) for value in band))


def mostly_cjk(text: str) -> bool:
    """Half or more of the text's letters are CJK characters."""
    from oryxtui.memory.tokens import pattern

    letters = [char for char in text if char.isalpha()]
    cjk = pattern("is_cjk")
    return bool(letters) and 2 * sum(1 for c in letters if cjk.match(c)) >= len(letters)
