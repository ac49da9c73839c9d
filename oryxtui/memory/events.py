"""What changed, as one set of types. The workspace watcher, a shared database's announcements
and a server's event stream produce them; the dashboard, the server's feed and the attached
dashboard's fleet consume them, matching on the type. `to_json` is what `/api/v1/events` sends
(the `kind` of each is its name there); `from_json` reads a server's event back as untrusted
input: anything that is not one of these is None (the caller skips and counts it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

from oryxtui.memory.format import MemoryEntry, Scope, entry_from_line, entry_id
from oryxtui.memory.history.records import Key, Record

# The biggest change sent whole in an event (its lines); past it, the event says only what was
# done and a client reads the memory again.
MAX_CHANGE_CHARS = 64 << 10


@dataclass(frozen=True)
class MemoryChange:
    """An agent's memory changed (None: the global memory). `record`: the change, as its
    history holds it (None: not known — read the memory again). `counts`: how many core and
    archival entries the memory holds after it, for a copy that applied it to check itself."""

    agent: str | None
    record: Record | None = None
    counts: tuple[int, int] | None = None
    problem: str | None = None  # the change could not be read: why, in one sentence
    # Read from a server: the ids it gives the entries the change removed and added, in the
    # order of `record.before` and `record.after` (its lines are rebuilt from time and content).
    ids: tuple[tuple[str, ...], tuple[str, ...]] | None = None


@dataclass(frozen=True)
class AgentsChange:
    """An agent came or went, or its AGENT.md changed."""


@dataclass(frozen=True)
class SessionMoved:
    """A session of `agent` moved on (a turn was added); `session` None: which is not known."""

    agent: str | None
    session: str | None = None


@dataclass(frozen=True)
class IndexProgress:
    """The recall index of `agent` moved on; `status` its JSON where known."""

    agent: str | None
    status: dict[str, Any] | None = None


@dataclass(frozen=True)
class KeysChange:
    """A key was made, revoked or changed (a server's own streams check theirs again)."""


@dataclass(frozen=True)
class HistoryWritten:
    """A memory's history was written but not its file: a save held for review, an approval,
    or oryxtui recording a change it found (the watcher's; the feed tells what it holds)."""

    agent: str | None


@dataclass(frozen=True)
class DatabaseWritten:
    """oryxos.db was written: sessions, keys, and memory kept in its tables may have changed."""


@dataclass(frozen=True)
class Hello:
    """Told everything from here on: what was read before may be older (read it again)."""

    store_down: bool = False  # a server's shared database is out of reach as it says hello


@dataclass(frozen=True)
class Reset:
    """What happened is not known (a listener came back, a client fell behind): read
    everything again."""

    store_down: bool = False  # a server's shared database is out of reach as it says so


@dataclass(frozen=True)
class StoreState:
    """The shared database a server reads went out of reach, or came back."""

    down: bool


@dataclass(frozen=True)
class ServerState:
    """An attached server was lost, refused the key, or is back (`state` None)."""

    server: str
    state: str | None


Event = (
    MemoryChange
    | AgentsChange
    | SessionMoved
    | IndexProgress
    | KeysChange
    | DatabaseWritten
    | HistoryWritten
    | Hello
    | Reset
    | StoreState
    | ServerState
)


def kind_of(event: Event) -> str:
    """The event's `kind` on the wire."""
    return _KINDS[type(event)]


_KINDS: dict[type, str] = {
    MemoryChange: "memory",
    AgentsChange: "agents",
    SessionMoved: "session",
    IndexProgress: "index",
    KeysChange: "keys",
    DatabaseWritten: "database",
    HistoryWritten: "history",
    Hello: "hello",
    Reset: "reset",
    StoreState: "store",
    ServerState: "server",
}


# Sending ----------------------------------------------------------------------------------------


def to_json(event: Event) -> dict[str, Any]:
    """The event as the event stream sends it."""
    data: dict[str, Any] = {"kind": kind_of(event)}
    match event:
        case MemoryChange(agent, record, counts, problem):
            data["agent"] = agent
            if record is not None:
                data["change"] = change_json(record)
            if counts is not None:
                data["counts"] = {"core": counts[0], "archival": counts[1]}
            if problem is not None:
                data["problem"] = problem
        case SessionMoved(agent, session):
            data |= {"agent": agent, "session": session}
        case IndexProgress(agent, status):
            data["agent"] = agent
            if status is not None:
                data["status"] = status
        case Hello(store_down) | Reset(store_down) if store_down:
            data["store"] = "down"
        case StoreState(down):
            data["state"] = "down" if down else "up"
        case ServerState(server, state):
            data |= {"server": server, "state": state}
    return data


def change_json(record: Record) -> dict[str, Any]:
    """A change as an event tells it: what was done, by whom, when, how many entries it added
    and removed, and — up to MAX_CHANGE_CHARS — the entries themselves (as the history API
    shows them) with where an outside change put them."""
    told: dict[str, Any] = {
        "n": record.n,
        "op": record.op,
        "actor": record.actor,
        "session": record.session,
        "time": record.time,
        "added": len(record.after),
        "removed": len(record.before),
    }
    if record.successor is not None:  # a replacement by an entry already there
        told["successor"] = _key_json(record.successor)
    if sum(len(line) for _, line in (*record.before, *record.after)) <= MAX_CHANGE_CHARS:
        told["before"] = [_key_json(key) for key in record.before]
        told["after"] = [_key_json(key) for key in record.after]
        if record.at:
            told["at"] = list(record.at)
        if record.was_at:
            told["was_at"] = list(record.was_at)
    return told


def _key_json(key: Key) -> dict[str, Any]:
    entry = entry_from_line(key[1], key[0])
    return {
        "scope": key[0].value,
        "id": entry_id(*key),
        "time": entry.time,
        "content": entry.content,
    }


# Reading a server's events ----------------------------------------------------------------------


def from_json(data: object) -> Event | None:
    """A server's event, or None for one that is not what the API documents."""
    if not isinstance(data, dict):
        return None
    kind, agent = data.get("kind"), data.get("agent")
    if agent is not None and not isinstance(agent, str):
        return None
    match kind:
        case "memory":
            told = told_change(data.get("change"))
            record, ids = told if told is not None else (None, None)
            return MemoryChange(agent, record, _counts(data), ids=ids)
        case "agents":
            return AgentsChange()
        case "session":
            session = data.get("session")
            return SessionMoved(agent, session if isinstance(session, str) else None)
        case "index":
            status = data.get("status")
            return IndexProgress(agent, status if isinstance(status, dict) else None)
        case "hello":
            return Hello(store_down=data.get("store") == "down")
        case "reset":
            return Reset(store_down=data.get("store") == "down")
        case "store":
            return StoreState(down=data.get("state") == "down")
    return None


def told_change(
    item: object,
) -> tuple[Record, tuple[tuple[str, ...], tuple[str, ...]]] | None:
    """The change an event tells (its entries' lines rebuilt from their time and content, as
    the history API's are), with the ids the server gives those entries; None when it is not
    whole: its entries were left out, or one of them is not what the API documents."""
    if not isinstance(item, dict) or not _is_int(item.get("n")):
        return None
    before, after = _entries(item.get("before")), _entries(item.get("after"))
    if before is None or after is None:
        return None
    at, was_at = _ints(item.get("at"), after), _ints(item.get("was_at"), before)
    op, actor = item.get("op"), item.get("actor")
    time, session = item.get("time"), item.get("session")
    if at is None or was_at is None or not isinstance(op, str) or not isinstance(actor, str):
        return None
    successor = told_entry(item.get("successor")) if item.get("successor") is not None else None
    if item.get("successor") is not None and successor is None:
        return None
    record = Record(
        item["n"],
        op,
        actor,
        time=time if isinstance(time, str) else None,
        session=session if isinstance(session, str) else None,
        before=tuple((entry.scope, entry.line) for entry in before),
        after=tuple((entry.scope, entry.line) for entry in after),
        at=at,
        was_at=was_at,
        successor=None if successor is None else (successor.scope, successor.line),
    )
    return record, (tuple(entry.id for entry in before), tuple(entry.id for entry in after))


def _entries(items: object) -> list[MemoryEntry] | None:
    """Each entry as the server gave it; None when any is malformed (a change is applied
    whole or not at all)."""
    if not isinstance(items, list):
        return None
    entries = [told_entry(item) for item in items]
    good = [entry for entry in entries if entry is not None]
    return good if len(good) == len(entries) else None


def told_entry(item: object, scope: Scope | None = None) -> MemoryEntry | None:
    """An entry from the API's JSON (`scope` given, or from its own field), or None for one
    that is not what the API documents."""
    if not isinstance(item, dict):
        return None
    content, given_id, time = item.get("content"), item.get("id"), item.get("time")
    if scope is None:
        try:
            scope = Scope(str(item.get("scope")))
        except ValueError:
            return None
    if not isinstance(content, str) or not isinstance(given_id, str) or not given_id:
        return None
    if time is not None and not isinstance(time, str):
        return None
    if "\n" in content or (time is not None and "\n" in time):
        return None  # no line break in an entry: it could not be a line of the memory
    line = f"- [{time}] {content}" if time else f"- {content}"
    return ToldEntry(scope, time, content, line, given_id)


@dataclass(frozen=True, slots=True)
class ToldEntry(MemoryEntry):
    """An entry as a server addresses it: its id is the server's (the line is rebuilt from
    the time and the content, which a hand-written line may not match byte for byte)."""

    given_id: str = ""

    @property
    def id(self) -> str:
        return self.given_id


def _ints(value: object, keys: Sequence[object]) -> tuple[int, ...] | None:
    """Where each entry stands: none given, or one place for each."""
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) != len(keys):
        return None
    return tuple(value) if all(_is_int(v) and v >= 0 for v in value) else None


def _counts(data: dict[str, Any]) -> tuple[int, int] | None:
    counts = data.get("counts")
    if not isinstance(counts, dict):
        return None
    core, archival = counts.get("core"), counts.get("archival")
    return (core, archival) if _is_int(core) and _is_int(archival) else None


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)
