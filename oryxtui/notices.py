"""Warnings that travel beside a result: something went wrong next to a change that landed (its
history could not be recorded), or records that were skipped because they could not be read.

A change that has landed is reported as done; what went wrong beside it is a notice, never an
error (a retry would do the change twice). Whoever shows results to a person collects the
notices of a call and shows them: the CLI once per command, the REST API per request (the
envelope's `warnings`), the tool executor per tool call. Nobody collecting: they are logged
to `oryxtui.notices`, which the dashboard shows as notifications.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

NOTICES = "oryxtui.notices"  # the logger notices go to when nobody collects them
log = logging.getLogger(NOTICES)


class _Notes(list[str]):
    def __init__(self, shown: Callable[[str], str]) -> None:
        super().__init__()
        self.shown = shown


_collected: ContextVar[_Notes | None] = ContextVar("oryxtui_notices", default=None)


@contextmanager
def collecting(shown: Callable[[str], str] = str) -> Iterator[list[str]]:
    """The notices given while the block runs (in this context and the threads it hands its
    context to), each once, in order, each as `shown` makes it (the API takes paths out)."""
    notes = _Notes(shown)
    token = _collected.set(notes)
    try:
        yield notes
    finally:
        _collected.reset(token)


def collected() -> list[str]:
    """The notices collected so far where the caller runs (none when nobody collects)."""
    return list(_collected.get() or ())


def notice(message: str) -> None:
    """Tell whoever collects (else the log) that something went wrong beside a result."""
    notes = _collected.get()
    if notes is None:
        log.warning(message)
    elif (shown := notes.shown(message)) not in notes:
        notes.append(shown)


def skipped(count: int, what: str, where: str) -> None:
    """`count` unreadable `what` records of `where` were skipped (nothing if none)."""
    if count:
        many = count != 1
        notice(
            f"{count:,} {what} record{'s' if many else ''} in {where} could not be read and "
            f"{'were' if many else 'was'} skipped."
        )
