"""Files written and read the safe way: atomic replace, private permissions, cross-process
locks, and reads of regular files only, with a size cap.

Every layer that writes user data goes through here, so "a crash mid-write never leaves a
torn file" is proved once. Every file the program reads goes through
:func:`read_regular_bytes` / :func:`read_regular_text`: the path is opened non-blocking
(``O_NONBLOCK``: a FIFO never waits for a writer, a device never blocks), checked with
``fstat`` on that descriptor (no race with a swap after a ``stat``), refused unless it is a
regular file, and read to at most ``max_bytes`` (a larger file is refused, never read
whole). The error is :class:`UnsafeFileError` (an ``OSError``) naming the file and the fix.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
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


DEFAULT_READ_CAP = 16 * 1024 * 1024
"""Bytes :func:`read_regular_bytes` reads when the caller names no cap."""
BENCH_FILE_MAX_BYTES = 2 * 1024 * 1024 * 1024
"""Cap of a benchmark data file (LoCoMo, LongMemEval): large, but never unbounded."""


class UnsafeFileError(OSError):
    """A file that must not be read: not a regular file (FIFO, socket, device, directory)
    or larger than its cap. The message names the file and the fix."""


def special_kind(mode: int) -> str:
    """What a non-regular file of ``st_mode`` ``mode`` is, for an error message."""
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "device or special file"


def read_regular_bytes(
    path: Path | str,
    *,
    max_bytes: int = DEFAULT_READ_CAP,
    what: str = "file",
    head: bool = False,
) -> bytes:
    """The bytes of ``path``, which must be a regular file of at most ``max_bytes``.

    Never blocks on a FIFO or device (opened ``O_NONBLOCK``, checked with ``fstat`` on the
    descriptor) and never reads more than ``max_bytes + 1`` bytes (a file that grows while
    read is refused too). Raises :class:`UnsafeFileError` naming ``path`` (``what`` says
    which file it is, e.g. ``"MCP token file"``); a missing file raises FileNotFoundError.
    With ``head`` a larger file is not refused: its first ``max_bytes`` bytes are returned."""
    path = Path(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    flags |= getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnsafeFileError(
                errno.EINVAL,
                f"{what} {path} is a {special_kind(info.st_mode)}, not a regular file: "
                f"replace it with a regular file (or move it aside: mv {path} {path}.bad)",
            )
        if info.st_size > max_bytes and not head:
            raise _too_large(path, what, info.st_size, max_bytes)
        chunks: list[bytes] = []
        remaining = max_bytes if head else max_bytes + 1
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        data = b"".join(chunks)
        if len(data) > max_bytes:
            raise _too_large(path, what, len(data), max_bytes)
        return data
    finally:
        os.close(fd)


def _too_large(path: Path, what: str, size: int, cap: int) -> UnsafeFileError:
    return UnsafeFileError(
        errno.EFBIG,
        f"{what} {path} is larger than {cap:,} bytes (at least {size:,}): it cannot be "
        "what hermes-core expects there; fix or remove it",
    )


def read_regular_text(
    path: Path | str,
    *,
    max_bytes: int = DEFAULT_READ_CAP,
    what: str = "file",
    errors: str = "strict",
    head: bool = False,
) -> str:
    """:func:`read_regular_bytes` decoded as UTF-8 (a leading BOM removed). With
    ``errors="strict"`` invalid UTF-8 raises UnicodeDecodeError."""
    data = read_regular_bytes(path, max_bytes=max_bytes, what=what, head=head)
    return data.decode("utf-8", errors).removeprefix("\ufeff")


__all__ = [
    "BENCH_FILE_MAX_BYTES",
    "DEFAULT_READ_CAP",
    "PRIVATE_DIR_MODE",
    "PRIVATE_FILE_MODE",
    "LockError",
    "UnsafeFileError",
    "atomic_write_bytes",
    "atomic_write_text",
    "ensure_private_dir",
    "file_lock",
    "read_regular_bytes",
    "read_regular_text",
    "special_kind",
]
