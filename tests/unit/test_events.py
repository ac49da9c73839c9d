"""The typed events: what the event stream sends of each, read back as untrusted input."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oryxtui.memory.events import (
    MAX_CHANGE_CHARS,
    AgentsChange,
    Event,
    Hello,
    IndexProgress,
    MemoryChange,
    Reset,
    SessionMoved,
    StoreState,
    from_json,
    kind_of,
    to_json,
)
from oryxtui.memory.format import Scope, entry_id
from oryxtui.memory.history.records import Record

EDIT = Record(
    7,
    "outside",
    "outside",
    time="2026-12-04T10:00:00",
    before=((Scope.ARCHIVAL, "- [2026-12-01 09:00:00] old words"),),
    after=((Scope.ARCHIVAL, "- [2026-12-01 09:00:00] new words"), (Scope.CORE, "- a core fact")),
    at=(3, 0),
    was_at=(3,),
)


def wire(event: Event) -> object:
    """As a client receives it: JSON text, parsed."""
    return json.loads(json.dumps(to_json(event)))


@pytest.mark.parametrize(
    "event",
    [
        AgentsChange(),
        SessionMoved("ops", "s-1"),
        IndexProgress("ops", {"entries": 3, "indexed": 2}),
        IndexProgress(None),
        Hello(),
        Hello(store_down=True),
        Reset(),
        Reset(store_down=True),
        StoreState(down=True),
        StoreState(down=False),
        MemoryChange("ops"),
    ],
)
def test_every_event_reads_back_as_it_was_sent(event: Event) -> None:
    assert from_json(wire(event)) == event
    assert to_json(event)["kind"] == kind_of(event)


def test_a_change_is_sent_whole_with_the_servers_ids_and_where_its_lines_stand() -> None:
    told = from_json(wire(MemoryChange("ops", EDIT, (1, 4))))
    assert isinstance(told, MemoryChange)
    assert told.record == EDIT and told.counts == (1, 4)
    assert told.ids == ((entry_id(*EDIT.before[0]),), tuple(entry_id(*k) for k in EDIT.after))
    sent = to_json(MemoryChange("ops", EDIT))["change"]
    assert (sent["added"], sent["removed"], sent["op"]) == (2, 1, "outside")  # as before


def test_a_change_too_big_to_send_says_what_was_done_and_nothing_to_apply() -> None:
    big = Record(3, "save", "cli", after=((Scope.ARCHIVAL, "- " + "x" * MAX_CHANGE_CHARS),))
    sent = to_json(MemoryChange("ops", big))
    assert sent["change"]["added"] == 1 and "after" not in sent["change"]
    told = from_json(json.loads(json.dumps(sent)))
    assert told == MemoryChange("ops")  # read the memory again


@pytest.mark.parametrize(
    "spoil",
    [
        lambda c: c.update(n="7"),
        lambda c: c.update(op=None),
        lambda c: c["after"][0].update(content="two\nlines"),
        lambda c: c["after"][0].update(id=None),
        lambda c: c["after"][0].update(scope="attic"),
        lambda c: c.update(at=[0]),  # one place for two entries
        lambda c: c.update(was_at=[-1]),
        lambda c: c.update(before="all"),
    ],
)
def test_a_change_that_is_not_what_the_api_documents_is_not_applied(spoil) -> None:  # type: ignore[no-untyped-def]
    data = to_json(MemoryChange("ops", EDIT, (1, 4)))
    spoil(data["change"])
    told = from_json(data)
    assert isinstance(told, MemoryChange) and told.agent == "ops"
    assert told.record is None and told.ids is None  # the memory is read again instead


@pytest.mark.parametrize(
    "data",
    [None, [], "memory", {}, {"kind": "gossip"}, {"kind": "memory", "agent": 3}, {"kind": 1}],
)
def test_what_is_no_event_reads_as_none(data: object) -> None:
    assert from_json(data) is None


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(),
        lambda inner: (
            st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=6)
        ),
    )
)
def test_no_json_whatever_it_holds_is_a_traceback(data: object) -> None:
    from_json(data)
    from_json({"kind": "memory", "agent": "ops", "change": data, "counts": data})
