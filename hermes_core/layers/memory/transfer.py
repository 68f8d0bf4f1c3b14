"""Moving MEMORY.md / USER.md between the file store and PostgreSQL.

* :func:`export_files` (``hermes memory export``) writes every stored file (or one user's)
  out as files under a memories directory — ``<dir>/MEMORY.md``, ``<dir>/users/<key>/USER.md``
  (the file store's own layout) — with exactly the bytes the file store would have written.
  Default directory: ``$HERMES_HOME/memories``, so ``memory.store: files`` picks them up. A
  file already there with other bytes is first copied to ``<file>.bak.<unix-ts>``: nothing
  is lost. Re-running writes nothing new (``unchanged``).
* :func:`import_files` (``hermes memory import``) loads files from such a directory into the
  PostgreSQL store, byte for byte. A file whose row already holds other bytes is skipped
  (``conflict``) unless ``replace``; re-running is safe.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from hermes_core.errors import HermesError
from hermes_core.fsutil import atomic_write_bytes, ensure_private_dir
from hermes_core.scope import OWNER_FILE, USERS_DIR, known_user_ids, normalize_user_id, scope_dir
from hermes_core.settings.models import MemorySettings
from hermes_core.types import MemoryTarget

from .backends import postgres_target
from .pgstore import PostgresMemoryStore, list_files, owner_key
from .store import FILENAMES, EditConflict, memories_dir, read_regular_file

Status = Literal["written", "unchanged", "conflict", "error"]
TARGETS: tuple[MemoryTarget, ...] = ("memory", "user")


@dataclass(frozen=True)
class Moved:
    """One file exported or imported: whose, which, where, what happened."""

    owner: str | None
    target: MemoryTarget
    path: Path
    size: int
    status: Status
    backup: Path | None = None
    error: str = ""

    def to_dict(self) -> dict[str, object]:
        return {
            "user_id": self.owner,
            "target": self.target,
            "file": str(self.path),
            "bytes": self.size,
            "status": self.status,
            "backup": str(self.backup) if self.backup else None,
            "error": self.error,
        }


def _directory(root: Path, key: str, label: str | None) -> Path:
    """``root`` (no user) or ``root/users/<key>`` (created private, ``USER_ID`` written)."""
    if not key:
        return ensure_private_dir(root)
    ensure_private_dir(root)
    ensure_private_dir(root / USERS_DIR)
    directory = ensure_private_dir(root / USERS_DIR / key)
    owner = directory / OWNER_FILE
    if label is not None and not owner.exists():
        atomic_write_bytes(owner, label.encode("utf-8", "replace"))
    return directory


def _write(path: Path, data: bytes) -> tuple[Status, Path | None]:
    """Write ``data`` to ``path`` unless it already holds it; other bytes are backed up."""
    backup: Path | None = None
    if path.exists():
        current = read_regular_file(path)
        if current == data:
            return "unchanged", None
        backup = path.with_name(f"{path.name}.bak.{int(time.time())}")
        counter = 1
        while backup.exists():
            counter += 1
            backup = path.with_name(f"{path.name}.bak.{int(time.time())}-{counter}")
        atomic_write_bytes(backup, current)
    atomic_write_bytes(path, data)
    return "written", backup


def export_files(
    home: Path,
    settings: MemorySettings,
    dest: Path | None = None,
    owners: Sequence[str | None] | None = None,
) -> list[Moved]:
    """Write the stored files of ``owners`` (all when ``None``) under ``dest`` (default
    ``$HERMES_HOME/memories``). From the file store, ``dest`` must be another directory.
    Raises :class:`~hermes_core.errors.HermesError` when the store cannot be read."""
    root = memories_dir(home) if dest is None else dest
    wanted = None if owners is None else [normalize_user_id(o) for o in owners]
    rows: list[tuple[str | None, str, MemoryTarget, bytes]] = []
    if settings.store == "postgresql":
        for stored in list_files(postgres_target(settings), wanted):
            rows.append((stored.owner, stored.owner_key, stored.target, stored.content))
    else:
        source = memories_dir(home)
        if root.resolve() == source.resolve():
            raise HermesError(
                f"memory.store is files: the files already are in {source}; give --to DIR "
                "to copy them somewhere else."
            )
        users: list[str | None] = [None, *known_user_ids(source)]
        for owner in users if wanted is None else wanted:
            for target in TARGETS:
                path = scope_dir(source, owner) / FILENAMES[target]
                if path.is_file():
                    rows.append((owner, owner_key(owner), target, read_regular_file(path)))
    moved: list[Moved] = []
    for owner, key, target, data in rows:
        path = _directory(root, key, owner) / FILENAMES[target]
        status, backup = _write(path, data)
        moved.append(Moved(owner, target, path, len(data), status, backup))
    return moved


def import_files(
    home: Path,
    settings: MemorySettings,
    source: Path | None = None,
    owners: Sequence[str | None] | None = None,
    *,
    replace: bool = False,
) -> list[Moved]:
    """Load the files under ``source`` (default ``$HERMES_HOME/memories``) of ``owners`` (all
    when ``None``) into the PostgreSQL store, byte for byte. A row holding other bytes is a
    ``conflict`` (left alone) unless ``replace``. Needs ``memory.store: postgresql``."""
    if settings.store != "postgresql":
        raise HermesError(
            "hermes memory import loads files into the PostgreSQL store: set memory.store: "
            "postgresql and memory.url first."
        )
    server = postgres_target(settings)
    root = memories_dir(home) if source is None else source
    users: list[str | None] = [None, *known_user_ids(root)]
    moved: list[Moved] = []
    for owner in users if owners is None else [normalize_user_id(o) for o in owners]:
        for target in TARGETS:
            path = scope_dir(root, owner) / FILENAMES[target]
            if not path.is_file():
                continue
            data = read_regular_file(path)
            store = PostgresMemoryStore(home, target, 0, owner, server=server)
            stored = store.stored_bytes()
            status: Status = "written"
            if stored == data:
                status = "unchanged"
            elif stored and not replace:
                status = "conflict"
            else:
                try:
                    store.replace_bytes_if_unchanged(stored or b"", data)
                except EditConflict as exc:
                    moved.append(Moved(owner, target, path, len(data), "conflict", error=str(exc)))
                    continue
            moved.append(Moved(owner, target, path, len(data), status))
    return moved


__all__ = ["Moved", "export_files", "import_files"]
