"""Who else on this machine may read what oryxtui keeps: the files it makes are its owner's
alone (a new workspace 0700, a new memory, history or database 0600; a file that exists keeps
its mode), and `oryxtui doctor` names any secret another user could read."""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

PRIVATE_FILE = 0o600
PRIVATE_FOLDER = 0o700


def private_opener(path: str, flags: int) -> int:
    """`open(..., opener=private_opener)`: a file it creates is 0600."""
    return os.open(path, flags, PRIVATE_FILE)


def made_private(path: Path) -> None:
    """`path` created empty and 0600 unless it exists (whatever its mode: it is kept)."""
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE))


def write_private(path: Path, text: str) -> None:
    """`text` written to `path` (UTF-8), a file made 0600 whatever the umask."""
    with open(path, "w", encoding="utf-8", opener=private_opener) as handle:
        handle.write(text)


def private_folder(path: Path) -> None:
    """`path` and its missing parents made; those made here are 0700."""
    made_folder(path, PRIVATE_FOLDER)


def made_folder(path: Path, mode: int) -> None:
    """`path` and its missing parents made; those made here get `mode` (whatever the umask),
    those that existed keep theirs."""
    missing = [folder for folder in (path, *path.parents) if not folder.exists()]
    path.mkdir(parents=True, exist_ok=True)
    for folder in missing:
        folder.chmod(mode)


@dataclass(frozen=True)
class Exposure:
    """A secret others may read: who (every user, or its group), and its mode."""

    path: Path
    mode: int
    readers: str  # "every user of this machine" or "the users of its group"


def exposure(path: Path) -> Exposure | None:
    """Who besides its owner may read `path`: its mode lets them, and so does every folder
    above it (a private folder anywhere above keeps it private). None: nobody else."""
    try:
        mode = path.stat().st_mode
        folders = [parent.stat().st_mode for parent in path.parents]
    except OSError:
        return None
    others = mode & stat.S_IROTH and all(f & stat.S_IXOTH for f in folders)
    if others:
        return Exposure(path, stat.S_IMODE(mode), "every user of this machine")
    group = mode & stat.S_IRGRP and all(f & (stat.S_IXGRP | stat.S_IXOTH) for f in folders)
    if group:
        return Exposure(path, stat.S_IMODE(mode), "the users of its group")
    return None
