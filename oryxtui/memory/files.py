"""Files as memory keeps them: their stat signature (what they look like, to see that someone
wrote them), the cross-process lock beside a file, new files written whole beside them, and
putting a new MEMORY.md in place atomically, seeing what the switch displaced.

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
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from oryxtui.errors import MemoryWriteError
from oryxtui.privacy import PRIVATE_FILE, private_folder
from oryxtui.workspace import Workspace

StatSignature = tuple[int, int, int, int]  # inode, size, mtime and ctime in nanoseconds
MISSING: StatSignature = (0, -1, 0, 0)


def signature_of(stat: os.stat_result) -> StatSignature:
    return (stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)


def stat_signature(path: Path) -> StatSignature:
    """What a file looks like now (MISSING if it is not there): equal while nobody wrote it."""
    try:
        return signature_of(os.stat(path))
    except FileNotFoundError:
        return MISSING


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
            mode = PRIVATE_FILE  # a new memory is its owner's alone
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


@contextlib.contextmanager
def file_lock(
    workspace: Workspace, path: Path, timeout: float, create: bool = True
) -> Iterator[None]:
    """The cross-process lock on `path`.lock (a sibling never deleted, so never `path` itself,
    which a save replaces), with every refusal as one sentence. Without `create`, a missing
    folder is not made, and a folder removed meanwhile is refused: a look, not a save,
    must never bring back a folder someone moved away (filelock always makes it, so a look
    takes the same flock itself)."""
    from filelock import FileLock, Timeout  # here: reading never locks, so never pays for it

    workspace.check_write_target(path)
    lock_path = path.with_name(path.name + ".lock")
    try:
        if create:
            private_folder(path.parent)
        workspace.check_write_target(path)
        if lock_path.is_symlink():
            raise MemoryWriteError(
                f"{lock_path} is a symbolic link; remove it so oryxtui can lock safely."
            )
        if not create:
            with _flocked(lock_path, timeout):
                yield
            return
        with FileLock(lock_path, timeout=timeout, mode=PRIVATE_FILE):
            yield
    except Timeout:
        raise MemoryWriteError(
            f"{path} stayed locked by another writer for {timeout:.0f} s; "
            "nothing was saved — try again."
        ) from None
    except FileNotFoundError as exc:
        if create:
            raise MemoryWriteError(
                f"Could not save to {path} ({exc.strerror or exc}); nothing was written."
            ) from None
        raise MemoryWriteError(f"{path.parent} is gone; nothing was recorded.") from None
    except OSError as exc:
        raise MemoryWriteError(
            f"Could not save to {path} ({exc.strerror or exc}); nothing was written."
        ) from None


@contextlib.contextmanager
def _flocked(lock_path: Path, timeout: float) -> Iterator[None]:
    """The flock filelock takes, on a lock file in a folder that must already exist."""
    import fcntl

    from filelock import Timeout

    descriptor = os.open(lock_path, os.O_RDWR | os.O_CREAT, PRIVATE_FILE)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise Timeout(str(lock_path)) from None
                time.sleep(0.01)
        yield
    finally:
        os.close(descriptor)  # and the lock with it
