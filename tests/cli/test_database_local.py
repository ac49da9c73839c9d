"""`oryxtui db local`: PostgreSQL with pgvector on this machine in one command — started in a
folder, the database and its tables made, the exact settings to export printed, stopped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oryxtui.workspace import init_workspace
from tests.support import run_oryxtui

pytestmark = pytest.mark.xdist_group("local-postgres")


@pytest.fixture
def folder() -> Path:
    import shutil
    import tempfile

    made = Path(tempfile.mkdtemp(prefix="oryxlocal"))  # short: the socket lives in it
    yield made / "pg"
    run_oryxtui("db", "local", "--dir", str(made / "pg"), "--stop")
    shutil.rmtree(made, ignore_errors=True)


def test_start_use_and_stop(folder: Path, tmp_path: Path) -> None:
    started = run_oryxtui("db", "local", "--dir", str(folder), "--json")
    assert started.returncode == 0, started.stderr
    said = json.loads(started.stdout)
    environment = said["environment"]
    assert environment["ORYXTUI_DATABASE_URL"] == f"postgresql://postgres@/oryxtui?host={folder}"
    again = run_oryxtui("db", "local", "--dir", str(folder))  # running: reused, said again
    assert again.returncode == 0 and "export ORYXTUI_MEMORY__BACKEND=database" in again.stdout
    # Two workspaces (two hosts, say) on it with the printed settings: one memory.
    east, west = init_workspace(tmp_path / "east"), init_workspace(tmp_path / "west")
    saved = run_oryxtui("memory", "save", "--root", str(east.root), "shared", env=environment)
    assert saved.returncode == 0, saved.stderr
    shown = run_oryxtui("memory", "show", "--root", str(west.root), env=environment)
    assert "shared" in shown.stdout  # from the database: west's own files never held it
    assert "shared" not in "".join(p.read_text() for p in west.root.rglob("MEMORY.md"))
    status = json.loads(
        run_oryxtui("db", "status", "--root", str(west.root), "--json", env=environment).stdout
    )
    assert status["pgvector"] and status["tables"]["memory_entries"] == 1
    stopped = run_oryxtui("db", "local", "--dir", str(folder), "--stop")
    assert stopped.returncode == 0 and stopped.stdout == f"Stopped the PostgreSQL in {folder}.\n"
    gone = run_oryxtui("memory", "show", "--root", str(west.root), env=environment)
    assert gone.returncode == 1 and gone.stderr.count("\n") == 1
    assert "Traceback" not in gone.stderr
    assert run_oryxtui("db", "local", "--dir", str(folder), "--stop").stdout.startswith("No ")
    assert not [c for c in _command_lines() if str(folder) in c]  # no postgres of it left


def _command_lines() -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                found.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode())
            except OSError:
                continue  # gone meanwhile
    return found


def test_a_folder_too_long_for_the_socket_is_one_sentence(tmp_path: Path) -> None:
    long = tmp_path / ("x" * 100)
    refused = run_oryxtui("db", "local", "--dir", str(long))
    assert refused.returncode == 2 and "too long a path" in refused.stderr
    assert refused.stderr.count("\n") == 1
