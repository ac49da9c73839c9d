"""What the self-made sets' generators share once their entries are written: a day's entries in
LoCoMo's schema — the facts put in among the routine ones at random places, each turn with its
id — and each question's evidence, by where its facts landed."""

from __future__ import annotations

import random
from typing import Any


def day_turns(
    rng: random.Random, routine: list[str], facts: list[str], speaker: str, day: int
) -> tuple[list[dict[str, str]], list[str]]:
    """The day's turns (the routine entries with `facts` put in at random places) and the id of
    the turn each fact became, in the order of `facts`."""
    entries = list(routine)
    for index, fact in enumerate(facts):
        entries.insert(rng.randint(0, len(entries)), f"§{index}§{fact}")
    turns, landed = [], {}
    for position, text in enumerate(entries, 1):
        dia_id = f"D{day}:{position}"
        if text.startswith("§"):
            marker, _, text = text[1:].partition("§")
            landed[int(marker)] = dia_id
        turns.append({"speaker": speaker, "dia_id": dia_id, "text": text})
    return turns, [landed[index] for index in range(len(facts))]


class Facts:
    """The facts of one conversation, placed on its days, and the questions about them."""

    def __init__(self, days: int) -> None:
        self.on: dict[int, list[str]] = {day: [] for day in range(1, days + 1)}
        self.ids: dict[int, list[str]] = {}
        self.qa: list[dict[str, Any]] = []

    def place(self, day: int, text: str) -> tuple[int, int]:
        self.on[day].append(text)
        return day, len(self.on[day]) - 1

    def ask(self, question: str, places: list[tuple[int, int]], kind: str) -> None:
        self.qa.append({"question": question, "places": places, "kind": kind})

    def day(
        self, rng: random.Random, routine: list[str], speaker: str, day: int
    ) -> list[dict[str, str]]:
        """The day's turns, its facts among `routine`; where each landed is kept."""
        turns, self.ids[day] = day_turns(rng, routine, self.on[day], speaker, day)
        return turns

    def questions(self) -> list[dict[str, Any]]:
        """Each question with its evidence: the ids of the turns its facts became."""
        for item in self.qa:
            item["evidence"] = [self.ids[day][index] for day, index in item.pop("places")]
            item["answer"] = ""
        return self.qa
