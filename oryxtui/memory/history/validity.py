"""What is still true, derived from the history: the versions a replacement retired (when they
stopped being true and what took their place, chains A → B → C followed to their end), the
suggestions a save made of what it probably replaces, and the last change made by a time."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from oryxtui.memory.history.records import MARKS, Key, Record


@dataclass(frozen=True)
class Retired:
    """A version a replacement took out of the memory."""

    key: Key
    until: str | None  # when it stopped being true: the replacement's time
    successor: Key  # the entry that took its place (itself perhaps replaced since)
    change: int  # the replacement's number in the history
    actor: str


def _hand_replacement(record: Record) -> Key | None:
    """An outside change that rewrote one line where it stood (a person in an editor): the
    line that took the old one's place."""
    if record.op != "outside" or len(record.before) != 1 or len(record.after) != 1:
        return None
    (old_scope, old), (new_scope, new) = record.before[0], record.after[0]
    same_place = record.was_at == record.at
    return record.after[0] if old_scope is new_scope and old != new and same_place else None


def retired(records: Iterable[Record]) -> dict[Key, Retired]:
    """Every version a replacement retired that was not written again since (a brought-back
    version is current again), by its line."""
    found: dict[Key, Retired] = {}
    for record in records:
        for key, until, by, actor in record.retired:  # folded into a baseline
            found[key] = Retired(key, until, by, record.n, actor)
        successor = record.succeeded_by or _hand_replacement(record)
        if successor is not None:
            for key in record.before:
                if key == successor:  # never "replaced by itself", whatever a history says
                    continue
                until = record.until or record.time
                found[key] = Retired(key, until, successor, record.n, record.actor)
        if record.op not in MARKS:
            for key in record.after:
                found.pop(key, None)
    return found


def current_of(gone: dict[Key, Retired], key: Key) -> Key:
    """The newest version of the entry `key`: its successors followed to the end."""
    seen = {key}
    while key in gone:
        following = gone[key].successor
        if following in seen:  # a cycle: it ends at the last version before it closes
            break
        key = following
        seen.add(key)
    return key


def versions_before(gone: dict[Key, Retired], key: Key) -> list[Retired]:
    """The versions `key` replaced, directly or along a chain, newest first."""
    earlier: dict[Key, list[Retired]] = {}
    for item in gone.values():
        earlier.setdefault(item.successor, []).append(item)
    chain: list[Retired] = []
    wanted, seen = [key], {key}
    while wanted:
        for item in sorted(earlier.get(wanted.pop(), ()), key=lambda r: -r.change):
            if item.key not in seen:
                seen.add(item.key)
                chain.append(item)
                wanted.append(item.key)
    return chain


@dataclass(frozen=True)
class Suggestion:
    """A save's note that it probably replaces an entry still in the memory."""

    old: Key
    new: Key
    change: int  # the save that made it


def open_suggestions(records: Iterable[Record], present: set[Key]) -> list[Suggestion]:
    """The suggestions nobody acted on: both entries still in the memory and not dismissed;
    newest first."""
    made: dict[tuple[Key, Key], int] = {}
    for record in records:
        if record.may_update and record.after:
            for old in record.may_update:
                made[(old, record.after[0])] = record.n
        elif record.op == "dismiss" and record.successor is not None:
            for old in record.before:
                made.pop((old, record.successor), None)
    found = [
        Suggestion(old, new, n)
        for (old, new), n in made.items()
        if old in present and new in present
    ]
    return sorted(found, key=lambda s: -s.change)


def last_change_by(records: Sequence[Record], moment: str) -> int | None:
    """The number of the last change made by `moment` ("yyyy-MM-ddTHH:mm:ss", local); None:
    the history starts after it."""
    last = None
    for record in records:
        if record.time is not None and record.time > moment:
            break
        last = record.n
    return last
