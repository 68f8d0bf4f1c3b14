"""Compression events persisted in ``$HERMES_HOME/state.db``.

This module owns exactly one table, ``compression_events``, created idempotently; other
layers own other tables in the same file, so nothing here ever drops or migrates anything
else. Every call opens its own short-lived connection (WAL, ``busy_timeout``).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

from hermes_core.fsutil import PRIVATE_FILE_MODE, ensure_private_dir
from hermes_core.homefiles import own_db_path
from hermes_core.security.redaction import redact
from hermes_core.statedb import write_refusal
from hermes_core.types import CompressionResult

DB_NAME = "state.db"
BUSY_TIMEOUT_MS = 5_000

SCHEMA = """
CREATE TABLE IF NOT EXISTS compression_events (
    id INTEGER PRIMARY KEY,
    session_id TEXT,
    created_at REAL,
    tokens_before INT,
    tokens_after INT,
    summary_tokens INT,
    fallback_used INT,
    aborted INT,
    error TEXT
);
CREATE INDEX IF NOT EXISTS idx_compression_events_session
    ON compression_events(session_id, created_at);
"""


@dataclass(frozen=True, slots=True)
class CompressionStats:
    """Aggregates over ``compression_events`` (one session, or all when no id is given).

    ``count`` counts completed compactions (not aborted ones); token sums are over those.
    """

    count: int = 0
    aborted: int = 0
    fallbacks: int = 0
    tokens_before: int = 0
    tokens_after: int = 0
    summary_tokens: int = 0
    last_error: str | None = None

    @property
    def tokens_saved(self) -> int:
        return max(0, self.tokens_before - self.tokens_after)

    @property
    def ratio(self) -> float:
        """tokens_before / tokens_after over completed compactions (0 when none)."""
        return self.tokens_before / self.tokens_after if self.tokens_after else 0.0


def db_path(home: Path) -> Path:
    """hermes-core's own database in ``home`` (``state.db``, or ``hermes_core.db`` beside a
    Hermes Agent ``state.db``; :func:`hermes_core.homefiles.own_db_path`)."""
    return own_db_path(Path(home))


@contextmanager
def connect(home: Path) -> Iterator[sqlite3.Connection]:
    """A connection to state.db with WAL, busy timeout and the table ensured; commits on
    success, rolls back on error, always closes."""
    ensure_private_dir(Path(home))
    path = db_path(home)
    refusal = write_refusal(path)  # never another program's (or a newer) state.db
    if refusal is not None:
        raise sqlite3.OperationalError(f"compression metrics are not recorded: {refusal}")
    fresh = not path.exists()
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000)
    if fresh:
        path.chmod(PRIVATE_FILE_MODE)
    with closing(conn):
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.executescript(SCHEMA)
        with conn:
            yield conn


def record_event(home: Path, session_id: str, result: CompressionResult) -> None:
    """Append one row for ``result`` (completed or aborted); the error text is stored with
    secrets redacted."""
    with connect(home) as conn:
        conn.execute(
            "INSERT INTO compression_events (session_id, created_at, tokens_before, "
            "tokens_after, summary_tokens, fallback_used, aborted, error) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                session_id,
                time.time(),
                result.tokens_before,
                result.tokens_after,
                result.summary_tokens,
                int(result.fallback_used),
                int(result.aborted),
                redact(result.error) if result.error else result.error,
            ),
        )


def load_stats(home: Path, session_id: str | None = None) -> CompressionStats:
    """Aggregated counters for ``session_id`` (or every session). An absent database gives
    zeros and is not created."""
    if not db_path(home).exists():
        return CompressionStats()
    where, args = ("WHERE session_id = ?", (session_id,)) if session_id else ("", ())
    with connect(home) as conn:
        row = conn.execute(
            "SELECT "
            "COALESCE(SUM(aborted = 0), 0), COALESCE(SUM(aborted), 0), "
            "COALESCE(SUM(CASE WHEN aborted = 0 THEN fallback_used ELSE 0 END), 0), "
            "COALESCE(SUM(CASE WHEN aborted = 0 THEN tokens_before ELSE 0 END), 0), "
            "COALESCE(SUM(CASE WHEN aborted = 0 THEN tokens_after ELSE 0 END), 0), "
            "COALESCE(SUM(CASE WHEN aborted = 0 THEN summary_tokens ELSE 0 END), 0) "
            f"FROM compression_events {where}",
            args,
        ).fetchone()
        last = conn.execute(
            f"SELECT error FROM compression_events {where} ORDER BY id DESC LIMIT 1", args
        ).fetchone()
    return CompressionStats(
        count=int(row[0]),
        aborted=int(row[1]),
        fallbacks=int(row[2]),
        tokens_before=int(row[3]),
        tokens_after=int(row[4]),
        summary_tokens=int(row[5]),
        last_error=last[0] if last else None,
    )


__all__ = [
    "DB_NAME",
    "SCHEMA",
    "CompressionStats",
    "connect",
    "db_path",
    "load_stats",
    "record_event",
]
