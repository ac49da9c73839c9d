"""Moments a person types (`--as-of`, `--since`, the API's `as_of`): read in one place."""

from __future__ import annotations

from datetime import datetime, timedelta

from oryxtui.errors import UsageError


def moment_of(text: str, end_of_day: bool = True) -> datetime:
    """A moment as a person types it: "2026-07-01 09:30[:00]", ISO 8601 (an offset is turned
    into local time), or a date alone (the end of that day: what was known on it; with
    `end_of_day` False, its start). The one reader of every moment typed at the command line
    or sent to the API: what is not a time, or not one this machine can place, is a
    UsageError of one sentence."""
    given = text.strip()
    try:
        moment = datetime.fromisoformat(given)
        if len(given) == 10 and end_of_day:
            moment += timedelta(days=1, seconds=-1)
        if moment.tzinfo is not None:
            moment = moment.astimezone().replace(tzinfo=None)
        moment.timestamp()  # a local time this machine's clock can place
    except ValueError:
        raise UsageError(
            f"{text[:64]!r} is not a time; give it as 2026-07-01, 2026-07-01 09:30 or "
            "2026-07-01T09:30:00+02:00."
        ) from None
    except (OverflowError, OSError):
        raise UsageError(
            f"{text[:64]!r} is out of the range of times oryxtui can place; give a moment "
            "between the years 2 and 9998."
        ) from None
    return moment
