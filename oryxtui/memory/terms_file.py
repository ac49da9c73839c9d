"""The check's term index kept on disk beside a MEMORY.md (`MEMORY.md.terms`), so that a process
that saves once — a hook, a script — reads the terms of the memory's entries instead of working
them out again: a save into 10,000 entries spent a third of its time there.

Derived data, never trusted: it names how many entries it covers and a digest of their lines,
and holds each entry's terms (each term's entries are made from them again: 5 ms for 10,000,
less than checking a kept copy would cost, and never at odds with them). It is used only while
the memory still begins with exactly those entries (the ones saved since are indexed by each
process, and the file is written again once they are many); otherwise, or when it cannot be
read, it is made anew. Written whole (a temporary file renamed over it) and private, as the
memory is; two programs writing it at once leave one whole file."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from oryxtui.privacy import PRIVATE_FILE

FORMAT = "oryxtui-terms/3"


def digest(lines: Sequence[str]) -> str:
    """What identifies entries: their lines, in order."""
    return hashlib.sha256("\n".join(lines).encode("utf-8", "replace")).hexdigest()


def read_terms(path: Path, lines: Sequence[str]) -> list[object] | None:
    """The terms of the first entries of a memory (`lines`), as the file holds them (that they
    are lists of words is checked as they are indexed: `Subjects.kept`); None when the file is
    missing, damaged, or not of these entries."""
    try:
        data = json.loads(path.read_bytes())
        count, terms = data["count"], data["terms"]
        if data["format"] != FORMAT or not isinstance(count, int) or count > len(lines):
            return None
        if not isinstance(terms, list) or len(terms) != count:
            return None
        if data["digest"] != digest(lines[:count]):
            return None
    except (OSError, ValueError, KeyError, TypeError):  # missing, damaged, foreign
        return None
    return terms


def write_terms(path: Path, lines: Sequence[str], terms: Sequence[Iterable[str]]) -> None:
    """The file made anew for the entries of `lines`; nothing when it cannot be written (it
    is derived)."""
    data = {
        "format": FORMAT,
        "count": len(lines),
        "digest": digest(lines),
        "terms": [sorted(held) for held in terms],
    }
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    with contextlib.suppress(OSError):
        handle, temporary = tempfile.mkstemp(prefix=".terms-", dir=path.parent)
        try:
            os.fchmod(handle, PRIVATE_FILE)
            with os.fdopen(handle, "w", encoding="utf-8") as opened:
                opened.write(text)
            os.replace(temporary, path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
