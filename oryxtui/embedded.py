"""A PostgreSQL with pgvector on this machine for trying the shared setup (`oryxtui db local`):
the server the `pgserver` wheel carries (PostgreSQL 16, pgvector; no pg_trgm, so keyword recall
scans instead of using a trigram index), started in a folder of its own, left running after the
command, stopped with `--stop`. For a team, a managed PostgreSQL or deploy/compose.yaml."""

from __future__ import annotations

import os
import stat
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from oryxtui.config import DatabaseSettings
from oryxtui.errors import DatabaseError, UsageError
from oryxtui.extras import require
from oryxtui.postgres import Postgres
from oryxtui.privacy import made_folder

DATABASE = "oryxtui"
# The server's socket is made in its folder, and a socket path holds at most 107 bytes.
LONGEST_FOLDER = 90


# As root, pgserver runs PostgreSQL as the system user `pgserver`, and first opens every folder
# above its data folder and its programs to group and others (g+rx,o+rx) so that user can
# pass. oryxtui never lets it: a folder that lacks these bits is named, nothing is changed.
OPENED_BITS = stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH
ROOT_FOLDER = Path("/var/lib/oryxtui/postgres")  # root's default: its parents need no change


def default_folder() -> Path:
    """Where the local server keeps its data: $XDG_DATA_HOME/oryxtui/postgres — as root
    (whose home others cannot enter), /var/lib/oryxtui/postgres unless XDG_DATA_HOME says."""
    data = os.environ.get("XDG_DATA_HOME")
    if not data and _as_root():
        return ROOT_FOLDER
    return Path(data or Path.home() / ".local" / "share") / "oryxtui" / "postgres"


def _as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def folders_it_would_open(folder: Path, programs: Path) -> list[tuple[Path, int]]:
    """The folders above `folder` (the data) and `programs` (PostgreSQL's) whose mode pgserver
    would widen when run as root, with their modes now; none otherwise."""
    if not _as_root():
        return []
    found: dict[Path, int] = {}
    for path in (folder, programs):
        for parent in path.parents:
            try:
                mode = parent.stat().st_mode
            except OSError:
                continue  # made by oryxtui below, open as it needs
            if mode & OPENED_BITS != OPENED_BITS:
                found[parent] = stat.S_IMODE(mode)
    return sorted(found.items())


def _refuse_to_open(folder: Path) -> None:
    from pgserver._commands import POSTGRES_BIN_PATH

    opened = folders_it_would_open(folder, POSTGRES_BIN_PATH)
    if not opened:
        return
    named = ", ".join(f"{path} ({mode:04o})" for path, mode in opened[:4])
    more = f" and {len(opened) - 4} more" if len(opened) > 4 else ""
    raise UsageError(
        f"As root, `db local` runs PostgreSQL as the system user pgserver, which could only "
        f"pass through {named}{more} if they were opened to every user (g+rx,o+rx); nothing "
        "was changed — keep the data in a folder every user may already pass through "
        f"(--dir {ROOT_FOLDER}), install oryxtui outside a private folder, run it as "
        "another user, or open those folders yourself if that is what you want."
    )


@dataclass(frozen=True)
class LocalServer:
    folder: Path
    url: str  # postgresql://postgres@/oryxtui?host=FOLDER: the socket, no password, no port
    schema: tuple[int, int]  # the schema version before and after `db upgrade`


def start(folder: Path) -> LocalServer:
    """Start the server in `folder` (made if need be; one already running there is reused),
    make the `oryxtui` database and its tables; it keeps running after this process."""
    require("localdb", "oryxtui db local")
    folder = _checked(folder)
    _refuse_to_open(folder)
    _made_open(folder.parent)
    server = _server(folder, keep_running=True)
    rows = server.psql(f"SELECT 1 FROM pg_database WHERE datname = '{DATABASE}';")
    if "(1 row)" not in rows:
        server.psql(f"CREATE DATABASE {DATABASE};")
    url = f"postgresql://postgres@/{DATABASE}?host={folder}"
    database = Postgres(DatabaseSettings(url=url))
    try:
        schema = database.upgrade()
    finally:
        database.close()
    return LocalServer(folder, url, schema)


def stop(folder: Path) -> bool:
    """Stop the server of `folder`; False if none was running there."""
    require("localdb", "oryxtui db local --stop")
    folder = _checked(folder)
    if not (folder / "postmaster.pid").exists():
        return False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pgserver._commands import pg_ctl  # type: ignore[attr-defined]
        from pgserver.postgres_server import PostgresServer

    # As the server runs: under its own system user where this is root (pgserver's rule).
    user = "pgserver" if os.geteuid() == 0 else None
    try:
        pg_ctl(["-w", "-m", "fast", "stop"], pgdata=folder, user=user, timeout=60)
    except Exception as exc:  # pg_ctl's own failure, or its timeout
        raise DatabaseError(
            f"The local PostgreSQL in {folder} did not stop ({type(exc).__name__}); its log is "
            f"{folder / 'log'}."
        ) from None
    PostgresServer._instances.pop(folder.resolve(), None)  # a handle this process holds
    return True


def _made_open(folder: Path) -> None:
    """`folder` and the parents it lacks, made — as root, passable by every user (0755), as the
    server's user needs: folders of oryxtui's own, which hold only the data folder (0700)."""
    if _as_root():
        made_folder(folder, 0o755)
    else:
        folder.mkdir(parents=True, exist_ok=True)


def _checked(folder: Path) -> Path:
    folder = folder.expanduser().absolute()
    if len(str(folder)) > LONGEST_FOLDER:
        raise UsageError(
            f"The folder {folder} is too long a path for the server's socket (at most "
            f"{LONGEST_FOLDER} characters); choose a shorter one with --dir."
        )
    return folder


def _server(folder: Path, keep_running: bool) -> Any:
    try:
        with warnings.catch_warnings():  # platformdirs: no XDG_RUNTIME_DIR on a server
            warnings.simplefilter("ignore")
            import pgserver

            return pgserver.get_server(folder, cleanup_mode=None if keep_running else "stop")
    except Exception as exc:  # a folder that is not a data folder, a port in use, …
        first = (str(exc).strip().splitlines() or ["no reason given"])[0][:200]
        raise DatabaseError(
            f"The local PostgreSQL in {folder} cannot be started ({type(exc).__name__}: "
            f"{first}); choose an empty folder with --dir."
        ) from None
