"""An attached dashboard keeps a copy of each memory it read and applies the changes the
server's event stream sends (issue 35, part 2): after every kind of change, on every local
backend, the copy is exactly what a fresh read answers — and it was not read again."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from oryxtui.api.app import create_api
from oryxtui.config import Settings
from oryxtui.memory import MemoryService
from oryxtui.memory.events import Event, MemoryChange
from oryxtui.memory.format import Scope
from oryxtui.memory.history.records import Record
from oryxtui.memory.snapshot import MemorySnapshot
from oryxtui.remote.client import Server
from oryxtui.remote.fleet import Fleet
from oryxtui.remote.memory import RemoteMemory
from oryxtui.workspace import init_workspace
from tests.api_server import RunningApi
from tests.support import make_agent


def shape(snapshot: MemorySnapshot) -> tuple[object, ...]:
    """What a view shows of a memory: the entries (by the server's ids, with their text) in
    order, where the window starts, which are digests."""
    return (
        [(e.id, e.line) for e in snapshot.core],
        [(e.id, e.line) for e in snapshot.archival],
        snapshot.window.start,
        snapshot.digest_lines,
    )


def wait(condition: Callable[[], object], what: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


@pytest.fixture(params=["markdown", "sqlite"])
def attached(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[MemoryService, RemoteMemory, list[Event]]]:
    workspace = init_workspace(tmp_path / "w")
    make_agent(workspace, "ops")
    settings = Settings.model_validate(
        {"memory": {"backend": request.param, "archival_max_chars": 120}}
    )
    writer = MemoryService.open(workspace, settings)  # another program, on the server's host
    for i in range(6):
        writer.save("ops", f"note {i} about the deploy pipeline", "archival")
    with RunningApi(workspace, app=create_api(workspace, settings)) as client:
        fleet = Fleet([Server(str(client.base_url), name="one")])
        heard: list[Event] = []
        stop = threading.Event()
        listening = threading.Thread(
            target=fleet.listen, args=(stop, heard.append, heard.append), daemon=True
        )
        listening.start()
        remote = fleet.places["one"].memory
        wait(lambda: remote.server.streamed > 0, "the event stream")
        try:
            yield writer, remote, heard
        finally:
            stop.set()
            listening.join(timeout=10)


def test_every_kind_of_change_is_applied_to_the_copy_exactly(
    attached: tuple[MemoryService, RemoteMemory, list[Event]], tmp_path: Path
) -> None:
    writer, remote, heard = attached
    copies = remote.copies
    assert copies is not None
    first = remote.snapshot("ops")  # read once: the copy starts here
    assert copies.snapshot("ops") is not None and len(first.archival) == 6

    def fresh() -> MemorySnapshot:
        return remote._snapshot("ops", remote.server.get("/agents/ops/memory/entries"))

    def changes() -> list[Event]:
        return [e for e in heard if isinstance(e, MemoryChange) and e.agent == "ops@one"]

    archival = lambda: writer.snapshot("ops").archival  # noqa: E731
    steps: list[tuple[str, Callable[[], object]]] = [
        ("save", lambda: writer.save("ops", "pager rota moved to mondays", "archival")),
        ("core save", lambda: writer.save("ops", "the on-call phone is 4242", "core")),
        ("edit", lambda: writer.edit("ops", archival()[1].id, "note 1, corrected")),
        ("move", lambda: writer.move("ops", archival()[2].id, "core")),
        ("delete", lambda: writer.delete("ops", archival()[0].id)),
        ("replace", lambda: writer.replace("ops", archival()[-2].id, "pager rota: tuesdays")),
        (
            "replace by one there",
            lambda: writer.supersede("ops", archival()[0].id, archival()[-1].id),
        ),
    ]
    if writer.backend == "markdown":  # windowed: older entries to digest; a file to edit
        steps.append(("digest", lambda: writer.consolidate("ops")))
        memory_file = writer.snapshot("ops").memory_file
        assert memory_file is not None

        def edit_by_hand() -> None:  # a line typed in the middle, another removed
            lines = memory_file.read_text().splitlines(keepends=True)
            at = next(i for i, line in enumerate(lines) if "note 3" in line)
            lines[at] = "- [2026-12-01 09:30:00] typed in an editor\n"
            memory_file.write_text("".join(lines))

        steps.append(("outside", edit_by_hand))
    for what, step in steps:
        told = len(changes())
        step()
        wait(lambda: len(changes()) > told, f"the {what} event")  # noqa: B023
        expected = shape(fresh())
        wait(lambda: copies.snapshot("ops") is not None, f"the copy after the {what}")
        before = remote.server.received
        assert shape(remote.snapshot("ops")) == expected, what
        assert remote.server.received == before, f"the {what} read the memory again"
    assert copies.dropped == 0 and copies.applied >= len(steps)


def test_a_change_the_copy_cannot_follow_drops_it_and_the_next_read_fetches(
    attached: tuple[MemoryService, RemoteMemory, list[Event]],
) -> None:
    writer, remote, _ = attached
    copies = remote.copies
    assert copies is not None
    remote.snapshot("ops")
    n = writer.newest_change("ops")
    assert n is not None
    # Counts that do not match what the copy holds after applying the change: dropped.
    line = "- [2026-12-04 10:00:00] a save the server counts otherwise"
    sent = Record(n + 1, "save", "cli", after=((Scope.ARCHIVAL, line),))
    copies.follow(MemoryChange("ops", sent, (0, 99), ids=((), ("some-id",))))
    assert copies.snapshot("ops") is None and copies.dropped == 1
    before = remote.server.received
    assert len(remote.snapshot("ops").archival) == 6
    assert remote.server.received > before  # read again, whole
    copies.follow(MemoryChange("ops"))  # a change not sent whole: the same
    assert copies.snapshot("ops") is None
