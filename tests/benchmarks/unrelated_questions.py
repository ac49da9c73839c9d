"""Questions a memory cannot answer, for measuring how often recall finds something anyway:
general-knowledge questions on subjects no conversation of the benchmarks touches (English and
Chinese), and made-up words that occur in no turn. Written before any floor was set on them."""

from __future__ import annotations

import random
from collections.abc import Iterable

from oryxtui.memory.tokens import terms

UNRELATED = [
    "What is the atomic number of molybdenum?",
    "Who composed the Brandenburg Concertos?",
    "What is the capital of Mongolia?",
    "How many moons does Neptune have?",
    "What is the boiling point of ethanol?",
    "Which enzyme breaks down lactose?",
    "In which year did the Berlin Wall fall?",
    "How fast does sound travel through water?",
    "Who wrote The Brothers Karamazov?",
    "What is the derivative of the arctangent function?",
    "How deep is the Mariana Trench?",
    "Which planet has the Great Red Spot?",
    "What is the tallest volcano in the solar system?",
    "What is the chemical formula of rust?",
    "How many bones are in the human hand?",
    "Who painted Las Meninas?",
    "What is the currency of Kazakhstan?",
    "What is a quasar?",
    "Which language is spoken in Andorra?",
    "Which gas makes up most of Earth's atmosphere?",
    "What is the half-life of carbon-14?",
    "Who discovered penicillin?",
    "What is the longest river in Africa?",
    "How does a torque converter work?",
    "Which element has the symbol W?",
    "When was the Magna Carta sealed?",
    "What does the Pythagorean theorem state?",
    "What is the melting point of tungsten?",
    "Who formulated the laws of planetary motion?",
    "What is the largest desert in Asia?",
    "How many chromosomes does a horse have?",
    "What is the main ingredient of hummus?",
    "Which ocean current warms northwestern Europe?",
    "What is the function of the pancreas?",
    "Who invented the printing press with movable type in Europe?",
    "What is the speed of light in a vacuum?",
    "钼的原子序数是多少？",
    "蒙古的首都是哪里？",
    "海王星有几颗卫星？",
    "谁发现了青霉素？",
]
_LETTERS = "bcdfghjklmnpqrstvwxz"
_VOWELS = "aeiouy"


def nonsense(count: int, known: Iterable[str], seed: int = 11) -> list[str]:
    """`count` made-up queries (one to three invented words) none of whose words, nor their
    terms, is in `known` (the terms of every turn)."""
    rng = random.Random(seed)
    taken = set(known)
    found: list[str] = ["zzzz-no-such"]
    while len(found) < count:
        words = []
        for _ in range(rng.randint(1, 3)):
            word = "".join(
                rng.choice(_LETTERS) + (rng.choice(_VOWELS) if rng.random() < 0.4 else "")
                for _ in range(rng.randint(2, 4))
            )
            words.append(word)
        # Made up as the engine reads it: a word whose folded term is real ("bes" → "be") is
        # no made-up word, whatever its letters.
        if not taken & {*words, *terms(" ".join(words))}:
            found.append(" ".join(words))
    return found[:count]
