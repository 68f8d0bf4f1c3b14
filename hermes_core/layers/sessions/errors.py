"""Errors of the session archive; every message says how to fix the problem."""

from __future__ import annotations

from hermes_core.errors import HermesError


class SessionStoreError(HermesError, RuntimeError):
    """A session-archive operation failed; the message says how to fix it. A
    :class:`~hermes_core.errors.HermesError` (and, as before, a ``RuntimeError``)."""


class SessionStoreBusy(SessionStoreError):
    """Another writer held state.db for longer than the retry deadline (60 s)."""


class SessionStoreUnusable(SessionStoreError):
    """state.db cannot be opened: not a file, unreadable, not SQLite, truncated."""


class SessionStoreReadOnly(SessionStoreError):
    """state.db is newer than this code or belongs to another program; it is only read."""


__all__ = [
    "SessionStoreBusy",
    "SessionStoreError",
    "SessionStoreReadOnly",
    "SessionStoreUnusable",
]
