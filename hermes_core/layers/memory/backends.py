"""Which store holds MEMORY.md / USER.md: ``memory.store`` (``files`` | ``postgresql``).

:func:`backend` is the one place that decides: it returns the :class:`StorageBackend` of
the store kind (:class:`FilesBackend`, :class:`PostgresBackend`), whose methods make every
storage decision. The engine, the tool, approvals, edits, the snapshot, the CLI and
``hermes-memory doctor`` all get their :class:`~.store.EntryStore` from it (:func:`open_store`), so
both stores behave the same everywhere. The PostgreSQL URL is ``memory.url`` (or, unset,
``sessions.url``: see :class:`~hermes_core.settings.models.HermesSettings`); a missing URL is a
:class:`~hermes_core.errors.ConfigError` naming the setting to fill in.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from hermes_core.errors import ConfigError
from hermes_core.pg import is_postgres_url, redact_url
from hermes_core.scope import known_user_ids, scope_dir, user_key
from hermes_core.settings.models import MemorySettings
from hermes_core.types import MemoryTarget

from .pgstore import PostgresMemoryStore, PostgresTarget
from .store import EntryStore, MemoryStore, memories_dir

if TYPE_CHECKING:
    from .pending import PendingStore

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


class StorageBackend(Protocol):
    """Where one ``memory.store`` keeps entries and staged writes: every storage decision of
    the memory layer is a method here, and :func:`backend` is the one place that picks."""

    def open_store(self, target: MemoryTarget, limit: int, owner: str | None) -> EntryStore:
        """The store of ``owner``'s ``target`` file."""
        ...

    def describe(self) -> str:
        """Where memory lives, for humans (never raises; a URL's password is masked)."""
        ...

    def unreadable_fix(self) -> str:
        """What to do when a stored file cannot be read ("" when the error says it)."""
        ...

    def export_note(self, dest: Path | None) -> str:
        """A note after exporting the stored files to ``dest`` (None: the home) ("" none)."""
        ...

    def where(self, owner: str, store: EntryStore) -> str:
        """Where ``owner``'s memory lives (``store`` is one of their stores), for humans."""
        ...

    def user_ids(self) -> list[str]:
        """User ids that have memory of their own here."""
        ...

    def open_pending(self, user_id: str | None) -> PendingStore:
        """``user_id``'s staged writes."""
        ...

    def pending_users(self) -> list[str]:
        """User ids with staged writes of their own here."""
        ...


@dataclass(frozen=True, slots=True)
class FilesBackend:
    """``memory.store: files``: MEMORY.md / USER.md and staged writes in ``home``."""

    home: Path

    def open_store(self, target: MemoryTarget, limit: int, owner: str | None) -> EntryStore:
        return MemoryStore(self.home, target, limit, owner)

    def describe(self) -> str:
        return f"files in {memories_dir(self.home)}"

    def unreadable_fix(self) -> str:
        return "fix the file (it must be UTF-8) or move it aside"

    def export_note(self, dest: Path | None) -> str:
        return ""

    def where(self, owner: str, store: EntryStore) -> str:
        return str(scope_dir(memories_dir(self.home), owner))

    def user_ids(self) -> list[str]:
        return known_user_ids(memories_dir(self.home))

    def open_pending(self, user_id: str | None) -> PendingStore:
        from .pending import PendingStore

        return PendingStore(self.home, user_id)

    def pending_users(self) -> list[str]:
        from .pending import pending_user_ids

        return pending_user_ids(self.home)


@dataclass(frozen=True, slots=True)
class PostgresBackend:
    """``memory.store: postgresql``: entries and staged writes in the shared database (so
    every host sees them). The server is checked on use (:func:`postgres_target`)."""

    home: Path
    settings: MemorySettings

    def open_store(self, target: MemoryTarget, limit: int, owner: str | None) -> EntryStore:
        server = postgres_target(self.settings)
        return PostgresMemoryStore(self.home, target, limit, owner, server=server)

    def describe(self) -> str:
        try:
            return f"postgresql at {postgres_target(self.settings).shown}"
        except ConfigError:
            return "postgresql (no memory.url configured)"

    def unreadable_fix(self) -> str:
        return ""

    def export_note(self, dest: Path | None) -> str:
        if dest is not None:
            return ""
        return (
            "The files in $HERMES_HOME/memories now match the database; `memory.store: files` "
            "would use them."
        )

    def where(self, owner: str, store: EntryStore) -> str:
        return store.location

    def user_ids(self) -> list[str]:
        from .pgstore import list_files

        files = list_files(postgres_target(self.settings))
        return sorted({f.owner for f in files if f.owner and user_key(f.owner) == f.owner_key})

    def open_pending(self, user_id: str | None) -> PendingStore:
        from .pgpending import PostgresPendingStore

        return PostgresPendingStore(self.home, user_id, server=postgres_target(self.settings))

    def pending_users(self) -> list[str]:
        from .pgpending import pending_owner_ids

        return pending_owner_ids(postgres_target(self.settings))


def backend(home: Path, settings: MemorySettings) -> StorageBackend:
    """The backend ``settings.store`` names (the only branch on the storage kind)."""
    if settings.store == "postgresql":
        return PostgresBackend(home, settings)
    return FilesBackend(home)


def open_store(
    home: Path, settings: MemorySettings, target: MemoryTarget, limit: int, owner: str | None
) -> EntryStore:
    """The store of ``owner``'s ``target`` file under ``settings.store``."""
    return backend(home, settings).open_store(target, limit, owner)


def describe(home: Path, settings: MemorySettings) -> str:
    """``files in /home/.hermes/memories`` or ``postgresql at postgresql://u:***@h/db``."""
    return backend(home, settings).describe()


def unreadable_fix(home: Path, settings: MemorySettings) -> str:
    """What to do when a stored MEMORY.md / USER.md cannot be read under ``settings.store``
    (files: fix the encoding or move the file aside; the database's error says its fix)."""
    return backend(home, settings).unreadable_fix()


def export_note(home: Path, settings: MemorySettings, dest: Path | None) -> str:
    """The note ``hermes-memory memory export`` prints after exporting to ``dest`` ("" none)."""
    return backend(home, settings).export_note(dest)


def store_user_ids(home: Path, settings: MemorySettings) -> list[str]:
    """User ids that have memory of their own in the configured store. Raises
    :class:`~hermes_core.pg.DatabaseUnavailable` when the server cannot be reached."""
    return backend(home, settings).user_ids()


def open_pending(home: Path, settings: MemorySettings, user_id: str | None = None) -> PendingStore:
    """``user_id``'s staged writes where ``memory.store`` keeps memory: files in this home,
    or the shared database (so every host can list and approve them)."""
    return backend(home, settings).open_pending(user_id)


def pending_users(home: Path, settings: MemorySettings) -> list[str]:
    """User ids with staged writes of their own in the configured store."""
    return backend(home, settings).pending_users()


__all__ = [
    "STORES",
    "FilesBackend",
    "PostgresBackend",
    "StorageBackend",
    "backend",
    "describe",
    "export_note",
    "open_pending",
    "open_store",
    "pending_users",
    "postgres_target",
    "store_user_ids",
    "unreadable_fix",
]
