"""Rewrite SQLite files so that deleted rows leave no bytes behind.

SQLite frees the pages of deleted rows but does not wipe them, and in WAL mode old page
images stay in the ``-wal`` file until a checkpoint. :func:`compact` checkpoints the WAL
(TRUNCATE: the file is emptied), runs ``VACUUM`` (the database is rebuilt from its live rows
only) and checkpoints again, with ``secure_delete`` on for any page freed meanwhile.
"""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing
from pathlib import Path

SQLITE_MAGIC = b"SQLite format 3\x00"


def is_sqlite(path: Path) -> bool:
    """Whether ``path`` is a regular file with the SQLite header."""
    try:
        if path.is_symlink() or not path.is_file():
            return False
        with path.open("rb") as handle:
            return handle.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except OSError:
        return False


def compact(path: Path) -> None:
    """Checkpoint, ``VACUUM`` and checkpoint ``path``. Raises ``sqlite3.Error`` (busy for
    longer than 30 s, not a database…)."""
    with closing(sqlite3.connect(path, timeout=30.0, isolation_level=None)) as conn:
        conn.execute("PRAGMA busy_timeout = 30000")
        conn.execute("PRAGMA secure_delete = ON")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("VACUUM")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def sqlite_files(home: Path) -> list[Path]:
    """Every SQLite database file below ``home`` (not following symlinks)."""
    found: list[Path] = []
    for dirpath, _dirnames, filenames in os.walk(home, followlinks=False):
        found += [Path(dirpath) / name for name in filenames if is_sqlite(Path(dirpath) / name)]
    return sorted(found)


__all__ = ["compact", "is_sqlite", "sqlite_files"]
