"""The ``state.db`` file itself: refused with the fix when it cannot be used, kept private.

Checked before SQLite opens it (so a FIFO never hangs and a truncated copy is not mistaken for
an empty archive): :func:`check_file`. Files are created and kept ``0600``.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from pathlib import Path

from hermes_core.layers.sessions.errors import SessionStoreUnusable
from hermes_core.statedb import SIDECARS, file_kind

PRIVATE_MODE = 0o600
SQLITE_MAGIC = b"SQLite format 3\x00"


def unusable(path: Path, why: str) -> SessionStoreUnusable:
    return SessionStoreUnusable(
        f"{path} is not a readable SQLite database ({why}) — move it aside "
        f"(mv {path} {path}.bad) and rerun; a fresh archive is created, the old file kept"
    )


def check_sidecars(path: Path) -> None:
    """Refuse, with the fix, a ``state.db-wal``/``-shm``/``-journal`` that is not a regular
    file: SQLite would read it (a FIFO hangs the open) or fail with a bare I/O error."""
    for suffix in SIDECARS:
        sidecar = Path(str(path) + suffix)
        try:
            mode = sidecar.lstat().st_mode
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise SessionStoreUnusable(
                f"cannot inspect {sidecar} ({exc.strerror}); check the directory's permissions"
            ) from exc
        if not stat.S_ISREG(mode):
            raise SessionStoreUnusable(
                f"{sidecar} is a {file_kind(mode)}, not SQLite's {suffix[1:]} file — move it aside "
                f"(mv {sidecar} {sidecar}.bad) and rerun; {path} itself is kept"
            )


def check_file(path: Path) -> None:
    """Refuse, with the fix, a ``state.db`` that is not a regular file, cannot be read and
    written, is not SQLite or is truncated, or whose ``-wal``/``-shm``/``-journal`` file is
    not a regular file (:func:`check_sidecars`). A missing or empty file is fine (created)."""
    check_sidecars(path)
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
        kind = file_kind(info.st_mode)
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
    deadline = time.monotonic() + CHECKPOINT_GRACE_S
    while True:
        size, expected = _sizes(path)
        if size >= expected:
            return
        # Another process checkpointing its WAL writes page 1 (the new size) before the pages
        # that extend the file: a short-lived "truncated" look. Only a lasting one is real.
        if not Path(str(path) + "-wal").exists() or time.monotonic() > deadline:
            raise SessionStoreUnusable(
                f"{path} is not a readable SQLite database: it is truncated "
                f"({size} of {expected} bytes) — restore it from a backup, or move "
                f"it aside (mv {path} {path}.bad) and rerun; a fresh archive is created"
            )
        time.sleep(0.02)


CHECKPOINT_GRACE_S = 2.0
"""How long a ``state.db`` that looks truncated while its WAL exists is re-checked."""


def _sizes(path: Path) -> tuple[int, int]:
    """``(bytes on disk, bytes the header promises)`` (header read before the size is taken;
    the promise is 0 when the header does not record a valid page count)."""
    try:
        with open(path, "rb") as fh:
            header = fh.read(100)
            size = os.fstat(fh.fileno()).st_size
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
        return size, page_size * pages
    return size, 0


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


__all__ = [
    "PRIVATE_MODE",
    "SIDECARS",
    "check_file",
    "check_sidecars",
    "create_private",
    "tighten_permissions",
    "unusable",
]
