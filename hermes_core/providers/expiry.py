"""Expiry dates of provider memories: one ledger per provider, one filter for recall.

A provider that offers expiry (:class:`~hermes_core.providers.inspect.ExpiringProvider`)
keeps the dates here rather than in its own store, so every provider gets the same rules
without a schema change: ``$HERMES_HOME/provider-expiry/<provider>.db`` (SQLite, 0600),
rows ``(user_id, memory_id, expires_at)``, every read and write filtered by ``user_id``.
The ledger holds ids and dates only — never memory text — so forgetting a subject leaves
nothing here for the raw byte search to find.

Recall drops expired memories at one place, :func:`drop_expired`: a provider's ``prefetch``
passes its hits and how to read a hit's id; the expired ones never reach the model. An
expired memory stays in the store (shown as expired by ``hermes-memory ui`` and
``hermes-memory memory provider-list``) until someone forgets it or clears the date.
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import closing
from pathlib import Path
from typing import TypeVar

from hermes_core.errors import HermesError
from hermes_core.fsutil import ensure_private_dir

T = TypeVar("T")

EXPIRY_DIR = "provider-expiry"
_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS provider_expiry (
    user_id TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    expires_at REAL NOT NULL,
    PRIMARY KEY (user_id, memory_id)
)
"""


class ExpiryLedger:
    """The expiry dates of one provider's memories (see the module docstring). Opens a
    short connection per call, so it is safe across threads and processes."""

    def __init__(self, home: Path, provider: str) -> None:
        if not _NAME.match(provider):
            raise HermesError(f"provider name {provider!r} cannot name an expiry ledger")
        self.path = Path(home) / EXPIRY_DIR / f"{provider}.db"

    def _connect(self, *, create: bool) -> sqlite3.Connection | None:
        if not self.path.exists():
            if not create:
                return None
            ensure_private_dir(self.path.parent)
            self.path.touch(mode=0o600)
        if self.path.is_symlink() or not self.path.is_file():
            raise HermesError(f"{self.path} is not a regular file: remove it and try again")
        conn = sqlite3.connect(self.path, timeout=30.0)
        conn.execute(_SCHEMA)
        return conn

    def set_date(self, user_id: str, memory_id: str, expires_at: float | None) -> None:
        """Give ``memory_id`` of ``user_id`` an expiry (epoch seconds), or none (``None``)."""
        conn = self._connect(create=expires_at is not None)
        if conn is None:
            return
        with closing(conn), conn:
            conn.execute(
                "DELETE FROM provider_expiry WHERE user_id = ? AND memory_id = ?",
                (user_id, memory_id),
            )
            if expires_at is not None:
                conn.execute(
                    "INSERT INTO provider_expiry (user_id, memory_id, expires_at) VALUES (?,?,?)",
                    (user_id, memory_id, float(expires_at)),
                )

    def expiries(self, user_id: str) -> dict[str, float]:
        """``{memory_id: expires_at}`` of ``user_id``'s memories that carry an expiry."""
        conn = self._connect(create=False)
        if conn is None:
            return {}
        with closing(conn):
            rows = conn.execute(
                "SELECT memory_id, expires_at FROM provider_expiry WHERE user_id = ?", (user_id,)
            ).fetchall()
        return {str(m): float(at) for m, at in rows}

    def expired(self, user_id: str, now: float | None = None) -> set[str]:
        """Ids of ``user_id``'s memories whose expiry has passed."""
        moment = time.time() if now is None else now
        return {m for m, at in self.expiries(user_id).items() if at <= moment}

    def forget(self, user_id: str, memory_ids: Iterable[str]) -> None:
        """Drop the dates of deleted memories."""
        conn = self._connect(create=False)
        if conn is None:
            return
        with closing(conn), conn:
            conn.executemany(
                "DELETE FROM provider_expiry WHERE user_id = ? AND memory_id = ?",
                [(user_id, str(m)) for m in memory_ids],
            )

    def forget_user(self, user_id: str) -> None:
        """Drop every date of ``user_id``."""
        conn = self._connect(create=False)
        if conn is None:
            return
        with closing(conn), conn:
            conn.execute("DELETE FROM provider_expiry WHERE user_id = ?", (user_id,))


def drop_expired(hits: Sequence[T], expired: set[str], memory_id: Callable[[T], object]) -> list[T]:
    """``hits`` without the expired ones (their id, as text, is in ``expired``), order kept.
    The one place recall leaves expired provider memories out."""
    if not expired:
        return list(hits)
    return [hit for hit in hits if str(memory_id(hit)) not in expired]


def parse_date(raw: str) -> float | None:
    """``YYYY-MM-DD`` as the start of that day (local time), ``""`` as ``None`` (no
    expiry); anything else raises a :class:`HermesError` naming the format."""
    text = raw.strip()
    if not text:
        return None
    try:
        return time.mktime(time.strptime(text, "%Y-%m-%d"))
    except ValueError:
        raise HermesError(
            f"give the expiry date as YYYY-MM-DD (e.g. 2027-01-31), not {text!r}"
        ) from None


__all__ = ["EXPIRY_DIR", "ExpiryLedger", "drop_expired", "parse_date"]
