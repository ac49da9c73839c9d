"""Putting a new MEMORY.md in place atomically, and seeing what the switch displaced.

A writer that ignores our lock (an editor, upstream) can save in the instant between our last
check and our rename. A plain rename would then silently drop its save. On Linux we swap the new
file in with `renameat2(RENAME_EXCHANGE)` instead: the file we displaced lands under the temp name,
so the caller can see whether it was the one it read, and put it back if it was not.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_UNSUPPORTED = {errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EXDEV}


def _load_renameat2():
    if not sys.platform.startswith("linux"):
        return None
    with contextlib.suppress(OSError, AttributeError):
        function = ctypes.CDLL(None, use_errno=True).renameat2
        function.argtypes = [
            ctypes.c_int,
            ctypes.c_char_p,
            ctypes.c_int,
            ctypes.c_char_p,
            ctypes.c_uint,
        ]
        function.restype = ctypes.c_int
        return function
    return None


_renameat2 = _load_renameat2()


def exchange(first: Path | str, second: Path | str) -> bool:
    """Swap two existing files atomically; False when this system or file system cannot.

    Raises FileNotFoundError when either file is missing.
    """
    global _renameat2
    if _renameat2 is None:
        return False
    result = _renameat2(
        _AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE
    )
    if result == 0:
        return True
    code = ctypes.get_errno()
    if code in _UNSUPPORTED:
        _renameat2 = None  # e.g. a file system without exchange support: plain renames from now
        return False
    raise OSError(code, os.strerror(code), str(second))


def write_temp(path: Path, chunks: Iterable[bytes], prefix: str, suffix: str) -> Path:
    """The chunks in a new fsynced file beside `path`, with `path`'s permissions; nothing is
    left behind if producing a chunk fails."""
    descriptor, temp = tempfile.mkstemp(dir=path.parent, prefix=prefix, suffix=suffix)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            for data in chunks:
                handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            mode = os.stat(path).st_mode & 0o7777
        except FileNotFoundError:
            mode = 0o644
        os.chmod(temp, mode)
    except BaseException:
        os.unlink(temp)
        raise
    return Path(temp)


def fsync_folder(folder: Path) -> None:
    descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
