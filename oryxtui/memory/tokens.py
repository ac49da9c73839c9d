"""Words as recall's lexical route sees them: lower-cased word tokens, and overlapping
character bigrams for Chinese, Japanese and Korean text (no spaces between its words). Plain
Python, so the dashboard can highlight them without loading NumPy."""

from __future__ import annotations

import re
import unicodedata
from functools import cache
from typing import Literal

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f"


# The expressions, by name: a word or a run of CJK characters (`token`); a CJK character at
# the start of a token (`is_cjk`); a word keeping its apostrophes, "caroline's" (`word`); and
# the whole text in one pass, a line break ending an entry's terms (`term_split`).
_SOURCES = {
    "token": rf"[{_CJK}]+|[^\W{_CJK}]+",
    "is_cjk": rf"[{_CJK}]",
    "word": rf"[{_CJK}]+|[^\W{_CJK}]+(?:'[^\W{_CJK}]+)*",
    "term_split": rf"\n|[{_CJK}]+|[^\W{_CJK}]+(?:'[^\W{_CJK}]+)*",
}


@cache
def pattern(name: Literal["token", "is_cjk", "word", "term_split"]) -> re.Pattern[str]:
    """One expression, compiled when first used: their Unicode classes take milliseconds each
    to compile, which a command that reads no words (or only some) should not pay."""
    return re.compile(_SOURCES[name])


# A word of ASCII text once case-folded: what `word` finds there (no CJK can be in it), with an
# expression that compiles in microseconds and matches twice as fast.
_ASCII_WORD = re.compile(r"[a-z0-9_]+(?:'[a-z0-9_]+)*")


def words(folded: str) -> list[str]:
    """The words of normalised text (`normal`), as the `word` expression finds them: ASCII text
    never compiles the expressions that know CJK."""
    return (_ASCII_WORD if folded.isascii() else pattern("word")).findall(folded)


def is_cjk(token: str) -> bool:
    """A token (of `token` or `word`) is a run of CJK characters."""
    return token[0] >= "\u3040" and pattern("is_cjk").match(token) is not None


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens; a run of CJK characters gives its overlapping bigrams (a lone
    character stays as it is)."""
    found: list[str] = []
    is_cjk = pattern("is_cjk").match
    for token in pattern("token").findall(text.lower()):
        if is_cjk(token):
            found += bigrams(token)
        else:
            found.append(token)
    return found


def bigrams(run: str) -> list[str]:
    return [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]


# Words that carry no meaning of their own in a question or an entry (English): "when did the",
# "what was her". Kept short and conservative: a word a person may search for stays.
STOP_WORDS = frozenset(
    """
    a about above after again against all am an and any are aren't as at be because been
    before being below between both but by can could did didn't do does doesn't doing don't
    down during each few for from further had has have having he her here hers herself him
    himself his how i if in into is isn't it it's its itself just me more most my myself no
    nor not of off on once only or other our ours ourselves out over own same she should so
    some such than that that's the their theirs them themselves then there these they this
    those through to too under until up very was wasn't we were what what's when where which
    while who whom why will with would you your yours yourself yourselves i'm you're ive
    i've let's s t d ll m re ve
    """.split()  # noqa: SIM905 (words read best as words)
)
_APOSTROPHES = str.maketrans({"’": "'", "‘": "'", "ʼ": "'"})


def normal(text: str) -> str:
    """Text as terms are read from it: NFKC, case-folded, one kind of apostrophe."""
    return unicodedata.normalize("NFKC", text).casefold().translate(_APOSTROPHES)


def fold(word: str) -> str:
    """A word as the lexical route matches it: a possessive, a plural, -ed and -ing and a final
    e folded away ("caroline's" → "carolin", "stories" → "story", "deployed" → "deploy",
    "moving" → "mov"), so every form of a word meets its others; no heavier stemming."""
    if word.endswith("'s"):
        word = word[:-2]
    word = word.replace("'", "")
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ches", "shes", "sses", "xes", "zes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    # -ed and -ing, and a final e, so that deploy, deploys, deployed and deploying, and move,
    # moved and moving, meet.
    for ending in ("ing", "ed"):
        stem = word[: -len(ending)]
        if word.endswith(ending) and len(stem) >= 3 and any(c in "aeiouy" for c in stem):
            if stem[-1] == stem[-2] and stem[-1] not in "lsz":
                stem = stem[:-1]  # running → run
            word = stem
            break
    if len(word) > 3 and word.endswith("e") and not word.endswith("ee"):
        word = word[:-1]
    return word


def terms(text: str) -> list[str]:
    """The terms the lexical route indexes and looks for: NFKC-normalised, case-folded words
    without stop words, each folded (`fold`); CJK runs as overlapping character bigrams."""
    found: list[str] = []
    for token in words(normal(text)):
        if is_cjk(token):
            found += bigrams(token)
        elif term := term_of(token):
            found.append(term)
    return found


def term_of(word: str) -> str | None:
    """The term a normalised (non-CJK) word stands for; None for a stop word."""
    if word in STOP_WORDS:
        return None
    term = fold(word)
    return term if term and term not in STOP_WORDS else None
