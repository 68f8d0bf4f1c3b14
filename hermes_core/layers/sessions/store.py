"""Opening the session archive on the configured backend.

``sessions.backend: sqlite`` (default) opens ``$HERMES_HOME/state.db``
(:class:`~.db.SessionDB`); ``postgresql`` opens the database at ``sessions.url`` — a secret,
kept in ``$HERMES_HOME/.env`` as ``HERMES_SESSIONS__URL`` — (:class:`~.pg.PostgresSessionDB`).
Both implement :class:`~.archive.SessionStore`. :func:`open_url` opens an archive by URL
(``sqlite:///path/state.db`` or ``postgresql://…``), for ``hermes-memory sessions migrate``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_core.layers.sessions.archive import SessionStore
from hermes_core.layers.sessions.db import SessionDB
from hermes_core.layers.sessions.errors import SessionStoreUnusable

if TYPE_CHECKING:
    from hermes_core.settings.models import SessionsSettings

BACKENDS = ("sqlite", "postgresql")


def open_store(
    home: Path, sessions: SessionsSettings | None = None, **overrides: Any
) -> SessionStore:
    """The archive ``sessions`` settings name, for the Hermes home ``home``.
    ``overrides`` replace ``index_char_cap``/``redact_secrets``. Raises
    :class:`~.errors.SessionStoreUnusable` naming the fix when it cannot be opened."""
    cap = overrides.get("index_char_cap", sessions.index_char_cap if sessions else 8192)
    redact = overrides.get("redact_secrets", sessions.redact_secrets if sessions else True)
    backend = sessions.backend if sessions else "sqlite"
    if backend == "postgresql":
        from hermes_core.layers.sessions.pg import PostgresSessionDB

        assert sessions is not None
        url = sessions.url.get_secret_value() if sessions.url is not None else ""
        return PostgresSessionDB(
            url,
            index_char_cap=cap,
            redact_secrets=redact,
            statement_timeout_s=sessions.statement_timeout_s,
            pool_size=sessions.pool_size,
        )
    return SessionDB.open(Path(home), index_char_cap=cap, redact_secrets=redact)


def open_url(url: str, **kwargs: Any) -> SessionStore:
    """The archive at ``url``: ``sqlite:///abs/path/state.db`` (a file, created when
    missing) or ``postgresql://…`` / ``postgres://…``."""
    text = str(url).strip()
    if text.startswith(("postgresql://", "postgres://")):
        from hermes_core.layers.sessions.pg import PostgresSessionDB

        return PostgresSessionDB(text, **kwargs)
    if text.startswith("sqlite://"):
        path = text[len("sqlite://") :]
        if not path or path == "/":
            raise SessionStoreUnusable(
                f"{text!r} names no file; write sqlite:///absolute/path/state.db"
            )
        return SessionDB(Path(path).expanduser(), **kwargs)
    raise SessionStoreUnusable(
        f"unknown archive URL {text[:80]!r}: use sqlite:///path/to/state.db or "
        "postgresql://user:password@host:5432/dbname"
    )


def open_configured(home: Path, **overrides: Any) -> SessionStore:
    """The archive the settings of ``home`` (config.yaml, .env, ``HERMES_*``) name."""
    from hermes_core.settings.base import load_settings

    return open_store(Path(home), load_settings(Path(home)).sessions, **overrides)


__all__ = ["BACKENDS", "open_configured", "open_store", "open_url"]
