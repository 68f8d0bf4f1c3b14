"""Files written the safe way: atomic replace, private permissions, cross-process locks.

Every layer that writes user data goes through here, so "a crash mid-write never leaves a
torn file" is proved once.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

PRIVATE_FILE_MODE = 0o600
PRIVATE_DIR_MODE = 0o700


def ensure_private_dir(path: Path) -> Path:
    """Create ``path`` (and parents) if missing; new directories are 0700. Returns ``path``."""
    path.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR_MODE)
    return path


def atomic_write_bytes(path: Path, data: bytes, *, mode: int = PRIVATE_FILE_MODE) -> None:
    """Write ``data`` to ``path`` atomically: temp file in the same directory, fsync, rename.

    Readers see either the old or the new file, never a mix. The temp file is removed when
    anything fails; the error propagates. The result has permissions ``mode``.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    with contextlib.suppress(OSError):
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def atomic_write_text(path: Path, text: str, *, mode: int = PRIVATE_FILE_MODE) -> None:
    """UTF-8 variant of :func:`atomic_write_bytes`."""
    atomic_write_bytes(path, text.encode("utf-8"), mode=mode)


class LockError(OSError):
    """The lock file is unsafe (a symlink) or cannot be opened."""


@contextlib.contextmanager
def file_lock(target: Path) -> Iterator[Path]:
    """Hold an exclusive advisory lock on ``<target>.lock`` for the ``with`` block.

    The lock file is a sibling (so ``target`` itself can be replaced atomically), created 0600,
    tightened if looser, and refused if it is a symlink (``O_NOFOLLOW``). Blocks until the
    lock is free. Yields the lock file path.
    """
    lock_path = target.with_name(target.name + ".lock")
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    if lock_path.is_symlink():
        raise LockError(f"refusing to use lock file {lock_path}: it is a symlink")
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, PRIVATE_FILE_MODE)
    except OSError as exc:
        raise LockError(f"cannot open lock file {lock_path}: {exc}") from exc
    try:
        if os.fstat(fd).st_mode & 0o077:
            os.fchmod(fd, PRIVATE_FILE_MODE)
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield lock_path
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


__all__ = [
    "PRIVATE_DIR_MODE",
    "PRIVATE_FILE_MODE",
    "LockError",
    "atomic_write_bytes",
    "atomic_write_text",
    "ensure_private_dir",
    "file_lock",
]
