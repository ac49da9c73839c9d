"""The seam between here and there (`oryxtui.places`): a workspace, one server in its place,
and servers attached at once answer the same questions alike — their agents, who wrote each
entry, what awaits review, a past turn's prompt — so the CLI, the dashboard and the API ask
the place and never which kind it is. (That each side implements the protocols is mypy's to
prove; that nothing but the seam imports `oryxtui.remote`, the import contracts'.)"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from oryxtui.api.app import create_api
from oryxtui.config import load_settings
from oryxtui.demo import create_demo_workspace
from oryxtui.errors import UsageError
from oryxtui.places import (
    Attached,
    Here,
    There,
    attach_servers,
    here_only,
    server_place,
    workspace_place,
)
from oryxtui.remote.names import qualified, split
from tests.api_server import RunningApi

AGENT = "ops-bot"


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Here, There, Attached]]:
    workspace, _ = create_demo_workspace(tmp_path_factory.mktemp("places") / "demo")
    app = create_api(workspace, load_settings(workspace.config_path))  # as `serve` makes it
    with RunningApi(workspace, app=app) as client:
        url = str(client.base_url)
        yield workspace_place(str(workspace.root)), server_place(url), attach_servers([url])


def test_each_place_lists_the_same_agents(places: tuple[Here, There, Attached]) -> None:
    here, there, attached = places
    assert here.known_agents() == there.known_agents() == here.list_agents()
    assert here.memories() == there.memories() == [None, *here.list_agents()]
    # Attached servers name each agent with its server (`agent@server`), its global memory too.
    named = [split(name) for name in attached.list_agents()]
    assert [agent for _, agent in named] == [*here.list_agents(), None]
    assert here.global_memory and there.global_memory and not attached.global_memory


def test_who_wrote_each_entry_is_told_alike(places: tuple[Here, There, Attached]) -> None:
    here, there, attached = places
    origins = here.origins(AGENT)
    assert origins and origins == there.origins(AGENT)
    (server, _) = split(attached.list_agents()[0])
    assert attached.origins(qualified(server, AGENT)) == origins
    entry = here.memory.snapshot(AGENT).archival[-1]
    assert here.origins(AGENT, [entry]) == {entry.id: origins[entry.id]}  # one asked, one read


def test_the_past_and_the_inbox_are_asked_of_the_place(
    places: tuple[Here, There, Attached],
) -> None:
    here, there, _ = places
    assert here.awaiting(AGENT) == there.awaiting(AGENT)
    (session, *_) = here.episodes.sessions(AGENT)
    assert there.episodes.sessions(AGENT)[0]["session"] == session["session"]
    assert here.turn_view("no-such-session", 0) is None is there.turn_view("no-such-session", 0)


def test_what_is_done_on_this_machine_only_is_refused_there(
    places: tuple[Here, There, Attached],
) -> None:
    here, there, attached = places
    assert here_only(here, "never said") is here
    for remote in (there, attached):
        with pytest.raises(UsageError, match="run it there"):
            here_only(remote, "The server keeps its own index; run it there.")
        with pytest.raises(UsageError, match="made on the server"):
            remote.create_agent("newcomer")
    assert here.watched() is here.workspace and there.watched() is None
    assert here.listened() is None  # files: watched, not announced
    assert there.listened() is not None and attached.listened() is not None
    assert attached.servers()[0] == dict.fromkeys(attached.fleet.places)  # each connected
