"""The ``state.db`` file itself: refused with the fix when it cannot be used, kept private.

Checked before SQLite opens it (so a FIFO never hangs and a truncated copy is not mistaken for
an empty archive): :func:`check_file`. Files are created and kept ``0600``.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from hermes_core.layers.sessions.errors import SessionStoreUnusable

PRIVATE_MODE = 0o600
SQLITE_MAGIC = b"SQLite format 3\x00"


def unusable(path: Path, why: str) -> SessionStoreUnusable:
    return SessionStoreUnusable(
        f"{path} is not a readable SQLite database ({why}) — move it aside "
        f"(mv {path} {path}.bad) and rerun; a fresh archive is created, the old file kept"
    )


def check_file(path: Path) -> None:
    """Refuse, with the fix, a ``state.db`` that is not a regular file, cannot be read and
    written, is not SQLite or is truncated. A missing or empty file is fine (created)."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return
    except OSError as exc:
        raise SessionStoreUnusable(
            f"cannot inspect {path} ({exc.strerror}); check the directory's permissions "
            "or set HERMES_HOME to a directory you own"
        ) from exc
    if not stat.S_ISREG(info.st_mode):
        kind = (
            "directory"
            if stat.S_ISDIR(info.st_mode)
            else "FIFO"
            if stat.S_ISFIFO(info.st_mode)
            else "socket"
            if stat.S_ISSOCK(info.st_mode)
            else "device or special file"
        )
        raise SessionStoreUnusable(
            f"{path} is a {kind}, not a database file — move it aside "
            f"(mv {path} {path}.bad) and rerun; a fresh archive is created"
        )
    if not os.access(path, os.R_OK | os.W_OK):
        raise SessionStoreUnusable(
            f"cannot read and write {path} (permission denied) — fix its owner and mode "
            f"(chown $USER {path} && chmod 600 {path}) or set HERMES_HOME to a directory "
            "you own"
        )
    if info.st_size == 0:
        return
    try:
        with open(path, "rb") as fh:
            header = fh.read(100)
    except OSError as exc:
        raise SessionStoreUnusable(
            f"cannot read {path} ({exc.strerror}) — check the disk and the file's permissions"
        ) from exc
    if len(header) < 100 or not header.startswith(SQLITE_MAGIC):
        raise unusable(path, "the file does not start with a SQLite header")
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    if pages and header[24:28] == header[92:96]:
        expected = page_size * pages
        if info.st_size < expected:
            raise SessionStoreUnusable(
                f"{path} is not a readable SQLite database: it is truncated "
                f"({info.st_size} of {expected} bytes) — restore it from a backup, or move "
                f"it aside (mv {path} {path}.bad) and rerun; a fresh archive is created"
            )


def create_private(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, PRIVATE_MODE)
    os.close(fd)


def tighten_permissions(db_path: Path) -> list[Path]:
    """chmod 0600 the db and its sidecars; returns the files that were looser."""
    fixed: list[Path] = []
    for suffix in ("", "-wal", "-shm", "-journal"):
        path = Path(str(db_path) + suffix)
        with contextlib.suppress(FileNotFoundError):
            if path.stat().st_mode & 0o077:
                os.chmod(path, PRIVATE_MODE)
                fixed.append(path)
    return fixed


__all__ = ["PRIVATE_MODE", "check_file", "create_private", "tighten_permissions", "unusable"]
