"""Security round 4, item 5, as real processes: a server that sends far too much cannot grow
`agents list --remote` by more than the answer limit, and a server that trickles cannot hold
the attached dashboard when its user presses q."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.api.test_security_round4 import Hostile
from tests.local_http import LocalHttpServer
from tests.support import oryxtui_executable
from tests.tmux import Terminal

pytestmark = [pytest.mark.system, pytest.mark.xdist_group("system")]

# `oryxtui ARGS` in a process of its own that says, last, the most memory it ever held (KB).
PEAK = (
    "import resource, sys\n"
    "from oryxtui.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "print('peak', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
    "sys.exit(code)\n"
)


class Honest(LocalHttpServer):
    """A server that lists one agent, as oryxtui's API does."""

    def _handler(self) -> type:
        from http.server import BaseHTTPRequestHandler

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: object) -> None:
                pass

            def do_GET(self) -> None:
                body = json.dumps({"code": 0, "data": [{"name": "ops"}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler


def peak_kb(url: str, tmp_path: Path) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-c", PEAK, "agents", "list", "--remote", url],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    said, _, peak = done.stderr.rpartition("peak ")
    return int(peak), said


def test_a_flood_grows_the_client_by_no_more_than_the_answer_limit(tmp_path: Path) -> None:
    with Honest() as honest:
        baseline, _ = peak_kb(honest.base_url, tmp_path)  # the same command, same run
    with Hostile("flood") as flood:
        flooded, said = peak_kb(flood.base_url, tmp_path)
    assert "sent an answer over 8 MB; none of it was used" in said
    assert said.count("\n") == 1 and "Traceback" not in said
    assert flooded - baseline < 48 << 10, (baseline, flooded)  # was 250 MB more


def test_q_ends_the_attached_dashboard_while_its_server_trickles(
    tmp_path: Path, terminal: Terminal
) -> None:
    with Hostile("headers") as hostile:
        terminal.start(f"{oryxtui_executable()} attach {hostile.base_url}", width=120)
        terminal.wait(lambda: "q Quit" in terminal.screen(), "the first frame")
        terminal.keys("q")
        # A call waits 30 s for its server; quitting waits for none of them.
        terminal.wait(lambda: not terminal.alive(), "quit", timeout=10)
