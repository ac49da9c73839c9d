"""Security round 5 (issue 57), against the real `oryxtui serve` over HTTP, through the official
SDK client and raw requests: an agent folder that links to another agent's is that agent for a
key's reach (2025 sessions, 2026 session-less requests and listen streams alike), and the
per-key session cap holds when many sessions open at the same instant."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import mcp_types as types
import pytest
from prometheus_client.parser import text_string_to_metric_families

from oryxtui.mcp.server import memory_uri
from oryxtui.workspace import Workspace, init_workspace
from tests.mcp_support import http_session, initialize
from tests.serve_process import ServeProcess
from tests.support import agents_with_notes, bearer, make_key

CLIENT = types.Implementation(name="probe", version="1")
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
CAP = 8

pytestmark = pytest.mark.xdist_group("mcp-round5")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Workspace, str]]:
    workspace = init_workspace(tmp_path_factory.mktemp("mcp5") / "project")
    agents_with_notes(workspace, "ops-bot", "atlas")
    (workspace.agents_dir / "ops-alias").symlink_to("atlas", target_is_directory=True)
    make_key(workspace, "admin", "admin")
    env = {"ORYXTUI_MCP__SESSIONS_PER_KEY": str(CAP)}
    with ServeProcess(workspace.root, env=env) as server:
        yield workspace, server.url


def raw(url: str, key: str, agent: str, message: dict[str, object]) -> httpx.Response:
    return httpx.post(
        f"{url}/mcp/agents/{agent}", json=message, headers={**ACCEPT, **bearer(key)}, timeout=30
    )


async def refused(url: str, key: str, agent: str, mode: str) -> str:
    with pytest.raises(BaseException) as caught:  # the SDK's task group wraps its error
        async with http_session(url, key, agent, CLIENT, mode=mode) as client:
            await client.list_tools()
    return repr(caught.value)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_linked_folder_does_not_widen_a_limited_keys_reach(
    served: tuple[Workspace, str], mode: str
) -> None:
    workspace, url = served
    key = make_key(workspace, f"ops-only-{mode}", "write", "ops-*")
    async with http_session(url, key, "ops-bot", CLIENT, mode=mode) as client:
        found = await client.call_tool("recall_memory", {"query": "note"})
        assert "note of ops-bot" in str(found.content)  # the key works where it reaches
    assert "does not reach agent 'ops-alias'" in await refused(url, key, "ops-alias", mode)


def test_raw_requests_through_a_link_are_refused_whatever_they_ask(
    served: tuple[Workspace, str],
) -> None:
    workspace, url = served
    key = make_key(workspace, "ops-raw", "write", "ops-*")
    asks = [
        initialize("raw"),
        {"jsonrpc": "2.0", "id": 2, "method": "resources/read",
         "params": {"uri": memory_uri("ops-alias")}},
        {"jsonrpc": "2.0", "id": 3, "method": "subscriptions/listen", "params": {}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
         "params": {"name": "save_memory", "arguments": {"content": "slipped in"}}},
    ]  # fmt: skip
    for ask in asks:
        answer = raw(url, key, "ops-alias", ask)
        assert answer.status_code == 403, (ask["method"], answer.text)
        assert "does not reach agent 'ops-alias'" in answer.json()["error"]["message"]
    atlas = (workspace.agents_dir / "atlas" / "MEMORY.md").read_text()
    assert "slipped in" not in atlas


def test_an_unlimited_key_reaches_the_linked_agent(served: tuple[Workspace, str]) -> None:
    workspace, url = served
    key = make_key(workspace, "everyone", "read")
    answer = raw(url, key, "ops-alias", initialize("raw"))
    assert answer.status_code == 200 and answer.headers.get("mcp-session-id")


@pytest.fixture
def capped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Workspace, str]]:
    workspace = init_workspace(tmp_path_factory.mktemp("cap") / "project")
    agents_with_notes(workspace, "atlas")
    make_key(workspace, "admin", "admin")
    env = {"ORYXTUI_MCP__SESSIONS_PER_KEY": str(CAP)}
    with ServeProcess(workspace.root, env=env) as server:
        yield workspace, server.url


def test_the_session_cap_holds_when_sessions_open_at_once(
    capped: tuple[Workspace, str],
) -> None:
    workspace, url = capped
    key = make_key(workspace, "burst", "read")
    many = 5 * CAP
    start = threading.Barrier(many)
    answers: list[httpx.Response] = []
    lock = threading.Lock()

    def open_one() -> None:
        with httpx.Client(timeout=60) as client:
            start.wait(timeout=60)
            answer = client.post(
                f"{url}/mcp/agents/atlas",
                json=initialize("burst"),
                headers={**ACCEPT, **bearer(key)},
            )
        with lock:
            answers.append(answer)

    threads = [threading.Thread(target=open_one) for _ in range(many)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert len(answers) == many
    opened = [a for a in answers if a.status_code == 200]
    limited = [a for a in answers if a.status_code == 429]
    assert len(opened) == CAP and len(opened) + len(limited) == many
    assert all("MCP sessions open already" in a.json()["error"]["message"] for a in limited)
    admin = make_key(workspace, "scraper", "metrics")
    scraped = httpx.get(f"{url}/metrics", headers=bearer(admin), timeout=30).text
    (family,) = [
        f for f in text_string_to_metric_families(scraped) if f.name == "oryxtui_mcp_sessions_open"
    ]
    assert family.samples[0].value == CAP
    # The next opening is refused as well: the seats of the refused ones were not kept.
    assert raw(url, key, "atlas", initialize("late")).status_code == 429


def test_the_docs_tell_one_truth_about_listen_streams() -> None:
    """docs/mcp.md once said a listen's key was checked only when it opened; the code (and
    docs/security.md) cut it at revocation."""
    docs = Path(__file__).parents[2] / "docs"
    mcp, security = (docs / "mcp.md").read_text(), (docs / "security.md").read_text()
    assert "not again while it lasts" not in mcp
    for page in (mcp, security):
        assert "revoked or changed" in " ".join(page.split())
