"""A server's answers are untrusted like every stored format: a forged or broken answer is a
sentence or a skipped, counted record, never a traceback; its text never reaches a terminal
with escape sequences live; `serve` over TLS."""

from __future__ import annotations

import json
import shutil
import subprocess
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from oryxtui.remote.client import Server
from oryxtui.remote.memory import RemoteMemory
from oryxtui.workspace import Workspace
from tests.local_http import JsonHandler, LocalHttpServer
from tests.serve_process import ServeProcess
from tests.support import cli, make_agent, run_oryxtui

HOSTILE = "\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J evil"


class ForgedServer(LocalHttpServer):
    """Answers every GET with `answers[path]` (raw bytes, or JSON), as a compromised or
    broken server might."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers
        super().__init__()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        answers = self.answers

        class Handler(JsonHandler):
            def do_GET(self) -> None:
                path = self.path.split("?")[0]
                answer = answers.get(path, {"code": 404, "message": "No such endpoint."})
                if isinstance(answer, bytes):
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.end_headers()
                    self.wfile.write(answer)
                    return
                self.reply_json(200 if answer.get("code", 0) == 0 else answer["code"], answer)

        return Handler


def envelope(data: Any) -> dict[str, Any]:
    return {"code": 0, "message": "success", "data": data, "timestamp": 0}


AGENTS = envelope([{"name": "ops", "description": "d", "tools": []}])


def test_forged_entries_are_skipped_and_counted_and_escapes_never_live() -> None:
    entries = envelope(
        {
            "agent": "ops",
            "backend": "markdown",
            "core": [{"id": "a1", "time": None, "content": HOSTILE}],
            "archival": [
                {"id": "b1", "time": "2026-01-01 10:00:00", "content": "fine"},
                {"id": "b2", "time": "2026-01-01 10:00:00", "content": "two\nlines"},
                {"id": 3, "content": "no id"},
                "not an entry",
            ],
            "window_start": "nonsense",
            "digests": [99, "x"],
        }
    )
    answers = {
        "/api/v1/agents": AGENTS,
        "/api/v1/agents/ops/memory/entries": entries,
        "/api/v1/info": envelope({"backend": "markdown"}),
    }
    with ForgedServer(answers) as server:
        memory = RemoteMemory(Server(server.base_url))
        snapshot = memory.snapshot("ops")
        assert [e.content for e in snapshot.archival] == ["fine"]
        assert snapshot.window_start == 1 and not snapshot.digests
        shown = run_oryxtui(
            "memory", "show", "--agent", "ops", "--json", "--remote", server.base_url
        )
        assert shown.returncode == 0
        assert "3 entry records" in shown.stderr and "skipped" in shown.stderr
        assert "\x1b" not in shown.stdout  # --json escapes controls
        assert json.loads(shown.stdout)["core"][0]["content"] == HOSTILE


@pytest.mark.parametrize(
    "answer",
    [b"<html>not json</html>", b"[1, 2]", b'{"data": "no code"}', b"\xff\xfe garbage"],
)
def test_an_answer_that_is_not_the_api_is_one_sentence(answer: bytes) -> None:
    with ForgedServer({"/api/v1/agents": answer}) as server:
        result = cli("memory", "show", "--agent", "ops", "--remote", server.base_url)
    assert result.code == 1 and result.stdout == ""
    assert "not oryxtui's API" in result.stderr and result.stderr.count("\n") == 1


def test_serve_over_tls_and_a_remote_trusting_its_certificate(
    workspace: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert shutil.which("openssl"), "openssl makes the test certificate (.ci/run installs it)"
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )
    make_agent(workspace, "ops")
    bad = run_oryxtui(
        "serve", "--root", str(workspace.root), "--tls-cert", str(cert), "--tls-key", str(cert)
    )
    assert bad.returncode == 2 and "cannot be used" in bad.stderr
    half = run_oryxtui("serve", "--root", str(workspace.root), "--tls-cert", str(cert))
    assert half.returncode == 2 and "both" in half.stderr
    with ServeProcess(workspace.root, "--tls-cert", str(cert), "--tls-key", str(key)) as server:
        url = server.url.replace("http://", "https://")
        untrusted = cli("memory", "show", "--agent", "ops", "--remote", url)
        assert untrusted.code == 1 and "certificate" in untrusted.stderr.lower()
        config = tmp_path / "oryxtui" / "config.toml"
        config.parent.mkdir()
        config.write_text(f'[remotes.tls]\nurl = "{url}"\nca_cert = "{cert}"\n')
        monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
        trusted = cli("memory", "show", "--agent", "ops", "--remote", "tls")
        assert trusted.code == 0 and "## 核心记忆" in trusted.stdout


def test_a_server_that_went_away_is_said_so_in_words() -> None:
    """Never reached: down or wrongly named. Reached, then gone: it went away (and oryxtui
    reconnects) — in words, never the transport's own text."""
    from oryxtui.errors import OryxError
    from tests.local_http import JsonHandler, LocalHttpServer

    class Answers(LocalHttpServer):
        def _handler(self) -> type[JsonHandler]:
            class Handler(JsonHandler):
                def do_GET(self) -> None:
                    self.reply_json(200, {"code": 0, "data": {"agents": []}})

            return Handler

    never = Server("http://127.0.0.1:9", name="nowhere")
    with pytest.raises(OryxError) as first:
        never.get("/agents")
    assert str(first.value) == (
        "The server nowhere cannot be reached (connection refused); check that it runs and "
        "that the URL is right."
    )
    with Answers() as served:
        server = Server(served.base_url, name="prod")
        assert server.get("/agents") == {"agents": []}
    with pytest.raises(OryxError) as gone:
        server.get("/agents")
    assert str(gone.value) == (
        "The server prod went away (connection refused); what it showed last stays, and "
        "oryxtui reconnects when it is back."
    )
