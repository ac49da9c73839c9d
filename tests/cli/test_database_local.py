"""`oryxtui db local`: PostgreSQL with pgvector on this machine in one command — started in a
folder, the database and its tables made, the exact settings to export printed, stopped."""

from __future__ import annotations

import json
import os
import stat
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
    made.chmod(0o755)  # as root, the server's user passes through it: oryxtui opens nothing
    yield made / "pg"
    run_oryxtui("db", "local", "--dir", str(made / "pg"), "--stop")
    shutil.rmtree(made, ignore_errors=True)


def test_start_use_and_stop(folder: Path, tmp_path: Path) -> None:
    modes = _modes_above(folder)
    started = run_oryxtui("db", "local", "--dir", str(folder), "--json")
    assert started.returncode == 0, started.stderr
    assert _modes_above(folder) == modes  # no folder above it opened to anyone
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


def _modes_above(folder: Path) -> dict[Path, int]:
    """The mode of every folder above the data folder and PostgreSQL's programs."""
    from pgserver._commands import POSTGRES_BIN_PATH

    above = [*folder.parents, *POSTGRES_BIN_PATH.parents]
    return {path: path.stat().st_mode for path in above if path.exists()}


@pytest.mark.skipif(os.geteuid() != 0, reason="pgserver opens folders only when run as root")
def test_as_root_no_folder_above_the_data_is_opened_to_every_user(open_folder: Path) -> None:
    tmp_path = open_folder  # the socket would live in the data folder: a short path
    home = tmp_path / "home"  # a throwaway HOME, private as root's own
    (home / ".local" / "share").mkdir(parents=True)
    for path in (home, home / ".local", home / ".local" / "share"):
        path.chmod(0o700)
    (home / "secret.txt").write_text("mine")
    modes = _modes_above(home / ".local" / "share" / "oryxtui" / "postgres")
    environment = {"HOME": str(home), "XDG_DATA_HOME": str(home / ".local" / "share")}
    refused = run_oryxtui("db", "local", env=environment)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
    said = refused.stderr
    assert f"{home} (0700)" in said and "nothing was changed" in said
    assert "--dir /var/lib/oryxtui/postgres" in said
    assert _modes_above(home / ".local" / "share" / "oryxtui" / "postgres") == modes
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert not (home / ".local" / "share" / "oryxtui").exists()  # nothing made either
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    refused = run_oryxtui("db", "local", "--dir", str(private / "pg"))
    assert refused.returncode == 2 and f"{private} (0700)" in refused.stderr
    assert stat.S_IMODE(private.stat().st_mode) == 0o700 and not (private / "pg").exists()


def test_roots_default_folder_needs_no_folder_opened(monkeypatch: pytest.MonkeyPatch) -> None:
    from oryxtui import embedded

    monkeypatch.delenv("XDG_DATA_HOME", raising=False)  # the default: none set

    if os.geteuid() == 0:
        assert embedded.default_folder() == embedded.ROOT_FOLDER
        present = [p for p in embedded.ROOT_FOLDER.parents if p.exists()]
        assert all(p.stat().st_mode & embedded.OPENED_BITS == embedded.OPENED_BITS for p in present)
    assert embedded.folders_it_would_open(Path("/"), Path("/")) == []


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
