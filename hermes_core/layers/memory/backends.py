"""Which store holds MEMORY.md / USER.md: ``memory.store`` (``files`` | ``postgresql``).

:func:`open_store` is the one place that decides; the engine, the tool, approvals, edits,
the snapshot, the CLI and ``hermes-memory doctor`` all get their :class:`~.store.EntryStore` from
it,
so both stores behave the same everywhere. The PostgreSQL URL is ``memory.url`` (or, unset,
``sessions.url``: see :class:`~hermes_core.settings.models.HermesSettings`); a missing URL is a
:class:`~hermes_core.errors.ConfigError` naming the setting to fill in.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from hermes_core.errors import ConfigError
from hermes_core.pg import is_postgres_url, redact_url
from hermes_core.scope import known_user_ids, user_key
from hermes_core.settings.models import MemorySettings
from hermes_core.types import MemoryTarget

from .pgstore import PostgresMemoryStore, PostgresTarget
from .store import EntryStore, MemoryStore, memories_dir

if TYPE_CHECKING:
    from .approval import PendingStore

STORES = ("files", "postgresql")


def postgres_target(settings: MemorySettings) -> PostgresTarget:
    """The server of ``memory.store: postgresql``; ConfigError (naming the fix) when
    ``memory.url`` (and ``sessions.url``) is unset or not a ``postgresql://`` URL."""
    url = settings.url.get_secret_value().strip() if settings.url is not None else ""
    if not url:
        raise ConfigError(
            "memory.store is postgresql but no server is configured: put "
            "HERMES_MEMORY__URL=postgresql://user:password@host:5432/db in $HERMES_HOME/.env "
            "(or set sessions.url), or set memory.store: files."
        )
    if not is_postgres_url(url):
        raise ConfigError(
            f"memory.url must be a postgresql:// URL, not {redact_url(url)!r}: fix "
            "HERMES_MEMORY__URL in $HERMES_HOME/.env."
        )
    return PostgresTarget(url=url, timeout=float(settings.pg_timeout))


def open_store(
    home: Path, settings: MemorySettings, target: MemoryTarget, limit: int, owner: str | None
) -> EntryStore:
    """The store of ``owner``'s ``target`` file under ``settings.store``."""
    if settings.store == "postgresql":
        return PostgresMemoryStore(home, target, limit, owner, server=postgres_target(settings))
    return MemoryStore(home, target, limit, owner)


def describe(home: Path, settings: MemorySettings) -> str:
    """``files in /home/.hermes/memories`` or ``postgresql at postgresql://u:***@h/db``."""
    if settings.store == "postgresql":
        try:
            return f"postgresql at {postgres_target(settings).shown}"
        except ConfigError:
            return "postgresql (no memory.url configured)"
    return f"files in {memories_dir(home)}"


def store_user_ids(home: Path, settings: MemorySettings) -> list[str]:
    """User ids that have memory of their own in the configured store. Raises
    :class:`~hermes_core.pg.DatabaseUnavailable` when the server cannot be reached."""
    if settings.store == "postgresql":
        from .pgstore import list_files

        files = list_files(postgres_target(settings))
        return sorted({f.owner for f in files if f.owner and user_key(f.owner) == f.owner_key})
    return known_user_ids(memories_dir(home))


def open_pending(home: Path, settings: MemorySettings, user_id: str | None = None) -> PendingStore:
    """``user_id``'s staged writes where ``memory.store`` keeps memory: files in this home,
    or the shared database (so every host can list and approve them)."""
    from .approval import PendingStore

    if settings.store == "postgresql":
        from .pgpending import PostgresPendingStore

        return PostgresPendingStore(home, user_id, server=postgres_target(settings))
    return PendingStore(home, user_id)


def pending_users(home: Path, settings: MemorySettings) -> list[str]:
    """User ids with staged writes of their own in the configured store."""
    if settings.store == "postgresql":
        from .pgpending import pending_owner_ids

        return pending_owner_ids(postgres_target(settings))
    from .approval import pending_user_ids

    return pending_user_ids(home)


__all__ = [
    "STORES",
    "describe",
    "open_pending",
    "open_store",
    "pending_users",
    "postgres_target",
    "store_user_ids",
]
