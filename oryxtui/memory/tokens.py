"""Words as recall's lexical route sees them: lower-cased word tokens, and overlapping
character bigrams for Chinese, Japanese and Korean text (no spaces between its words). Plain
Python, so the dashboard can highlight them without loading NumPy."""

from __future__ import annotations

import re

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f"
_TOKEN = re.compile(rf"[{_CJK}]+|[^\W{_CJK}]+")
IS_CJK = re.compile(rf"[{_CJK}]")
# The whole text in one pass: a line break ends an entry's tokens.
SPLIT = re.compile(rf"\n|[{_CJK}]+|[^\W{_CJK}]+")


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens; a run of CJK characters gives its overlapping bigrams (a lone
    character stays as it is)."""
    found: list[str] = []
    for token in _TOKEN.findall(text.lower()):
        if IS_CJK.match(token):
            found += bigrams(token)
        else:
            found.append(token)
    return found


def bigrams(run: str) -> list[str]:
    return [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]
