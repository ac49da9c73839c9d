"""The records of a memory's history: who changes memory (`Actor`), one change (`Record`) as
its JSON line holds it, and reading a line back as untrusted input (every field checked)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

from oryxtui.errors import OryxError
from oryxtui.memory.format import ENTRY_LINE, MemoryEntry, Scope, clean_entry_line, entry_from_line

Key = tuple[Scope, str]  # an entry as the history keeps it: its section and its line
Lines = dict[Scope, list[str]]  # a memory: each section's entry lines, in order
Signature = tuple[int, ...]  # what a memory looked like when last seen (stat, or row counts)

# The changes a person or a program makes; `baseline` (the memory when the history starts, or
# where it was compacted), `seen` (nothing changed) and `untracked` (the memory grew too big to
# keep a copy of) are the history's own bookkeeping.
OPS = (
    "save",
    "digest",
    "edit",
    "move",
    "delete",
    "dedupe",
    "restore",
    "import",
    "accept",
    "outside",
    "review",  # approved (after: the lines, in the memory or held); changes no line
    "hold",  # a change held for review: a save (after: the line, not in the memory), or
    # the edit, move or delete it `proposes` (before: the entry as it was, after: as it would be)
    "discard",  # a held change rejected (before: the line, never in the memory)
    "reject",  # an entry rejected in review: removed, as a delete
    "replace",  # one entry takes another's place: the old leaves (before), its successor is
    # written (after), or is there already (`successor`)
    "dismiss",  # a suggestion that a save replaces an entry, dismissed (before: the entry,
    # successor: the save); changes no line
)
# Ops that mark lines without changing the memory.
MARKS = ("review", "hold", "discard", "accept", "dismiss")
# What a held change may propose besides a save: each applied, once approved, as that op.
PROPOSALS = ("edit", "move", "delete", "replace")
ACTORS = ("dashboard", "cli", "api", "agent", "mcp", "outside")
OP_LABELS = {
    "save": "saved",
    "digest": "digest written",
    "edit": "edited",
    "move": "moved",
    "delete": "deleted",
    "dedupe": "removed duplicates",
    "restore": "brought back",
    "import": "imported",
    "accept": "accepted a removal",
    "outside": "changed outside oryxtui",
    "review": "approved",
    "hold": "held for review",
    "discard": "rejected before it was written",
    "reject": "rejected",
    "replace": "replaced",
    "dismiss": "kept beside a newer entry",
}


@dataclass(frozen=True)
class Actor:
    """Who changes memory: `dashboard`, `cli`, `api`, `agent` (with its session) or `outside`."""

    kind: str
    session: str | None = None
    turn: int | None = None  # an agent's: its session's turn (0: the first) that made it
    via: str | None = None  # an agent's: who drove the turn, where not its session's own


CLI = Actor("cli")
# The actor of a change made in this context (an agent's tool call sets it); else the service's.
current_actor: ContextVar[Actor | None] = ContextVar("oryxtui_current_actor", default=None)
ACTOR_NAME = re.compile(r"[A-Za-z0-9:_.-]{1,80}")  # an actor as stored: checked when read


MCP = "mcp:"  # an MCP client's actor: mcp:<its name, as it says in `initialize`>
_NOT_IN_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


def is_mcp(actor: str) -> bool:
    return actor.startswith(MCP)


def mcp_client(name: object) -> Actor:
    """The actor of an MCP client by the name it gave (untrusted: any text, or none), made of
    the characters an actor may hold: "Claude Code" → mcp:Claude-Code."""
    clean = _NOT_IN_NAME.sub("-", name if isinstance(name, str) else "").strip("-.")[:60]
    return Actor(MCP + (clean or "client"))


def acting_agent(session: str | None, turn: int | None) -> Actor:
    """The actor of what an agent does in a turn; `via` names the key that drove the turn
    over the API (the actor of the request around it), so the history says whose it was."""
    outer = current_actor.get()
    via = None if outer is None else (outer.via if outer.kind == "agent" else outer.kind)
    return Actor("agent", session, turn, via)


def unrecorded(memory: Path, error: BaseException) -> str:
    """The notice for a change that landed but could not be recorded in its history."""
    reason = str(error) if isinstance(error, OryxError) else f"{type(error).__name__}: {error}"
    return (
        f"The change to {memory} is made, but its history could not be recorded ({reason}); "
        "oryxtui records it as an outside change when it can read the history again."
    )


def describe_actor(record: Record) -> str:
    """What happened and by what, in words: "edited by dashboard", "saved by agent (session
    …)", "changed outside oryxtui"."""
    label = OP_LABELS.get(record.op, record.op)
    if record.proposes:
        label = f"{record.proposes} {label}"
    if record.actor == "outside":
        return label if record.op == "outside" else f"{label} outside oryxtui"
    turn = f", turn {record.turn}" if record.turn is not None else ""
    session = f" (session {record.session}{turn})" if record.session else ""
    via = f" via {record.via}" if record.via else ""
    return f"{label} by {record.actor}{session}{via}"


@dataclass(frozen=True)
class Record:
    """One change. For an outside change, `was_at` and `at` give where each `before` line stood
    and each `after` line stands in its section; other changes put lines where their op does
    (the end of the section, or the edited line's place) and remove the first equal line."""

    n: int
    op: str
    actor: str
    time: str | None = None
    session: str | None = None
    before: tuple[Key, ...] = ()
    after: tuple[Key, ...] = ()
    at: tuple[int, ...] = ()
    was_at: tuple[int, ...] = ()  # outside: where each `before` line stood in its section
    ours: tuple[Key, ...] | None = None  # a baseline after compaction: what oryxtui wrote
    digests: tuple[str, ...] | None = None  # … and the digests it wrote
    signature: Signature | None = None
    turn: int | None = None  # an agent's change: the turn of its session that made it
    via: str | None = None  # an agent's change: the key that drove its turn over the API
    proposes: str | None = None  # a hold: the change it holds (None: a save)
    settles: tuple[int, ...] = ()  # a review or discard: the holds it approves or rejects
    successor: Key | None = None  # a replace or dismiss: the entry taking `before`'s place
    may_update: tuple[Key, ...] = ()  # a save: the entries it probably replaces (suggested)
    until: str | None = None  # an imported replacement: when it stopped being true, where known
    # A baseline: the versions replaced in the records it folded (line, until, successor, by)
    retired: tuple[tuple[Key, str | None, Key, str], ...] = ()

    @property
    def succeeded_by(self) -> Key | None:
        """A replacement's new entry: the one it wrote, or the one already there."""
        if self.op != "replace":
            return None
        return self.successor or (self.after[0] if self.after else None)

    @property
    def shown(self) -> bool:
        """A change someone made (not the history's bookkeeping), worth a line in the log."""
        return self.op in OPS and (self.op != "outside" or bool(self.before or self.after))

    @property
    def removed(self) -> list[MemoryEntry]:
        return [_entry(key) for key in self.before]

    @property
    def added(self) -> list[MemoryEntry]:
        return [_entry(key) for key in self.after]

    def stored(self) -> dict[str, object]:
        """The record as its JSON line holds it."""
        fields: dict[str, object] = {"n": self.n, "time": self.time, "op": self.op}
        fields["actor"] = self.actor
        if self.session:
            fields["session"] = self.session
        if self.turn is not None:
            fields["turn"] = self.turn
        if self.via:
            fields["via"] = self.via
        if self.before:
            fields["before"] = [
                {**_stored_key(key), **({"at": self.was_at[i]} if self.was_at else {})}
                for i, key in enumerate(self.before)
            ]
        if self.after:
            fields["after"] = [
                {**_stored_key(key), **({"at": self.at[i]} if self.at else {})}
                for i, key in enumerate(self.after)
            ]
        if self.ours is not None:
            fields["ours"] = [_stored_key(key) for key in self.ours]
        if self.digests is not None:
            fields["digests"] = list(self.digests)
        if self.signature is not None:
            fields["signature"] = list(self.signature)
        if self.proposes is not None:
            fields["proposes"] = self.proposes
        if self.settles:
            fields["settles"] = list(self.settles)
        if self.successor is not None:
            fields["successor"] = _stored_key(self.successor)
        if self.may_update:
            fields["may_update"] = [_stored_key(key) for key in self.may_update]
        if self.until is not None:
            fields["until"] = self.until
        if self.retired:
            fields["retired"] = [
                {**_stored_key(key), "until": until, "successor": _stored_key(by), "actor": actor}
                for key, until, by, actor in self.retired
            ]
        return fields

    def to_json(self, agent: str | None) -> dict[str, object]:
        """The record as `memory log --json` and the REST API show it."""
        return {
            "n": self.n,
            "time": self.time,
            "agent": agent,
            "actor": self.actor,
            "session": self.session,
            "turn": self.turn,
            **({"via": self.via} if self.via else {}),
            "op": self.op,
            **({"proposes": self.proposes} if self.proposes else {}),
            "before": [{"scope": e.scope.value, **e.to_json()} for e in self.removed],
            "after": [{"scope": e.scope.value, **e.to_json()} for e in self.added],
        }


def _stored_key(key: Key) -> dict[str, str]:
    return {"scope": key[0].value, "line": key[1]}


def _entry(key: Key) -> MemoryEntry:
    return entry_from_line(key[1], key[0])


def change(
    op: str,
    actor: Actor,
    before: Iterable[MemoryEntry] = (),
    after: Iterable[MemoryEntry] = (),
) -> Record:
    """A change to record (its number and time are given when it is written)."""
    return Record(
        0,
        op,
        actor.kind,
        session=actor.session,
        before=tuple((e.scope, e.line) for e in before),
        after=tuple((e.scope, e.line) for e in after),
        turn=actor.turn,
        via=actor.via,
    )


def replacement(op: str, actor: Actor, old: MemoryEntry, new: MemoryEntry | None) -> Record:
    """The change that replaced `old` by `new` (None: removed it): one into the other section
    is a move, whatever else changed (replayed as the line leaving one section for the end of
    the other)."""
    if new is not None and new.scope is not old.scope:
        op = "move"
    return change(op, actor, [old], [new] if new is not None else [])


MAX_RECORD_CHARS = 32 << 20  # a change to a memory of at most 16 MB, with room to spare
MAX_NUMBER = 1 << 53
_SIGNATURE_RANGE = 1 << 63


def _no_constants(name: str) -> float:
    raise ValueError(f"{name} is not a number a record holds")


def _number(value: object, low: int, high: int) -> int:
    """`value` when it is an integer (not a bool, not a float) within [low, high]."""
    if type(value) is not int or not low <= value <= high:
        raise ValueError(f"{value!r} is not a number in range")
    return value


def parsed(raw: str, last: int) -> Record | None:
    """One line of a history as its record; None if it is none. A journal's record (`scope`,
    `line`, perhaps `forgotten`) is a save, or an accepted removal, of unknown time. A history
    is a file anyone can edit: every field is checked (numbers are integers in range, lines
    are text of one line), and a record numbered at or below the one before it is none."""
    if len(raw) > MAX_RECORD_CHARS:
        return None
    try:
        stored = json.loads(raw, parse_constant=_no_constants)
        if not isinstance(stored, dict):
            return None
        if "op" not in stored:
            return _journal(stored, last)
        op = stored["op"]
        if op not in (*OPS, "baseline", "seen", "untracked"):
            return None
        n = last + 1 if stored.get("n") is None else _number(stored["n"], 1, MAX_NUMBER)
        if n <= last:
            return None
        gone, items = _items(stored.get("before")), _items(stored.get("after"))
        before = tuple(_key(item) for item in gone)
        after = tuple(_key(item) for item in items)
        if None in before or None in after:
            return None
        proposes = stored.get("proposes")
        if proposes is not None and not _a_proposal(op, proposes, before, after):
            return None
        ours, digests = stored.get("ours"), stored.get("digests")
        signature = stored.get("signature")
        time, session, actor = stored.get("time"), stored.get("session"), stored.get("actor")
        via = stored.get("via")
        successor, may_update, retired = _validity(stored)
        return Record(
            n,
            op,
            actor if isinstance(actor, str) and actor else "outside",
            time=time if isinstance(time, str) and time else None,
            session=session if isinstance(session, str) and session else None,
            before=before,  # type: ignore[arg-type]
            after=after,  # type: ignore[arg-type]
            at=_places(items),
            was_at=_places(gone),
            ours=None if ours is None else tuple(k for k in map(_key, _items(ours)) if k),
            digests=None
            if digests is None
            else tuple(line for line in _items(digests) if isinstance(line, str)),
            signature=None
            if signature is None
            else tuple(_number(v, -_SIGNATURE_RANGE, _SIGNATURE_RANGE) for v in _items(signature)),
            turn=None if stored.get("turn") is None else _number(stored["turn"], 0, MAX_NUMBER),
            via=via if isinstance(via, str) and ACTOR_NAME.fullmatch(via) else None,
            proposes=proposes,
            settles=tuple(_number(v, 1, MAX_NUMBER) for v in _items(stored.get("settles"))),
            successor=successor,
            may_update=may_update,
            until=until if isinstance(until := stored.get("until"), str) and until else None,
            retired=retired,
        )
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None


def _journal(stored: dict[str, object], last: int) -> Record | None:
    """A journal's record: a save, or (`forgotten`) an accepted removal."""
    key = _key(stored)
    if key is None:
        return None
    if stored.get("forgotten") is True:
        return Record(last + 1, "accept", "oryxtui", before=(key,))
    return Record(last + 1, "save", "oryxtui", after=(key,))


def _validity(
    stored: dict[str, object],
) -> tuple[Key | None, tuple[Key, ...], tuple[tuple[Key, str | None, Key, str], ...]]:
    """A replacement's successor, a save's suggestions and a baseline's versions replaced, as
    written (ValueError: forged)."""
    successor = None if stored.get("successor") is None else _key(stored["successor"])
    if stored.get("successor") is not None and successor is None:
        raise ValueError("not an entry")
    may_update = [_key(item) for item in _items(stored.get("may_update"))]
    if any(key is None for key in may_update):
        raise ValueError("not an entry")
    retired = []
    for item in _items(stored.get("retired")):
        if not isinstance(item, dict):
            raise ValueError("not a version")
        key, by = _key(item), _key(item.get("successor"))
        until, actor = item.get("until"), item.get("actor")
        if key is None or by is None or not isinstance(until, str | None):
            raise ValueError("not a version")
        retired.append((key, until, by, actor if isinstance(actor, str) else "outside"))
    return successor, tuple(k for k in may_update if k is not None), tuple(retired)


def _a_proposal(
    op: str, proposes: object, before: tuple[object, ...], after: tuple[object, ...]
) -> bool:
    """A held edit, move or delete names the one entry it changes, and (but a delete) the
    entry it would become."""
    if op != "hold" or proposes not in PROPOSALS:
        return False
    return len(before) == 1 and len(after) == (0 if proposes == "delete" else 1)


def _items(value: object) -> list[object]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError("not a list")
    return value


def _places(items: list[object]) -> tuple[int, ...]:
    """Where each line stands: an outside change says it of every line, others of none."""
    if not items or not isinstance(items[0], dict) or "at" not in items[0]:
        return ()
    return tuple(_number(item["at"], 0, MAX_NUMBER) for item in items)  # type: ignore[index]


_SCOPES = {scope.value: scope for scope in Scope}  # (a lookup, not Enum's call: 10,000 a record)


def _key(item: object) -> Key | None:
    """An entry of a record as written (a line of the memory, whatever it holds); KeyError
    for a section there is none of."""
    if type(item) is not dict:
        return None
    line, scope = item.get("line"), item.get("scope")
    if type(line) is not str or type(scope) is not str or "\n" in line:
        return None
    return _SCOPES[scope], line


def cleaned(key: Key) -> MemoryEntry:
    """A recorded entry as it may be written back, cleaned as a save is: a history is a file
    anyone can edit, so no record can forge a section or a line."""
    scope, line = key
    match = ENTRY_LINE.fullmatch(line)
    if match is not None:
        return entry_from_line(clean_entry_line(match[1], match[2]), scope)
    return entry_from_line(clean_entry_line(None, line.removeprefix("- ")), scope)
