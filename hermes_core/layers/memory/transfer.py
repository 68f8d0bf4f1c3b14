"""Moving MEMORY.md / USER.md between the file store and PostgreSQL.

* :func:`export_files` (``hermes-memory memory export``) writes every stored file (or one user's)
  out as files under a memories directory — ``<dir>/MEMORY.md``, ``<dir>/users/<key>/USER.md``
  (the file store's own layout) — with exactly the bytes the file store would have written.
  Default directory: ``$HERMES_HOME/memories``, so ``memory.store: files`` picks them up. A
  file already there with other bytes is first copied to ``<file>.bak.<unix-ts>``: nothing
  is lost. Re-running writes nothing new (``unchanged``).
* :func:`import_files` (``hermes-memory memory import``) loads files from such a directory into the
  PostgreSQL store, byte for byte. A file whose row already holds other bytes is skipped
  (``conflict``) unless ``replace``; re-running is safe. Each file first passes the rules of
  a memory write (:func:`~.edit.validate_edit`): a file that is not UTF-8, or has an entry the
  strict threat scan flags (prompt injection, exfiltration, invisible characters, credentials)
  is ``refused`` — not stored — with the reason and the fix in ``error``. An over-budget file
  (or an entry longer than the budget) is stored with a ``warning``, exactly as the file
  store keeps a file a user grew over budget by hand: the prompt shows it marked
  ``OVER BUDGET`` (capped) and ``hermes-memory doctor`` reports it until it is consolidated.
  Directories under ``users/`` that are not in the store's ``<slug>-<sha256>`` layout with a
  ``USER_ID`` file are reported ``skipped`` with the directory to move them to.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from hermes_core.errors import HermesError
from hermes_core.fsutil import atomic_write_bytes, ensure_private_dir, read_regular_text
from hermes_core.scope import (
    OWNER_FILE,
    OWNER_FILE_MAX_BYTES,
    USERS_DIR,
    known_user_ids,
    normalize_user_id,
    scope_dir,
    user_key,
)
from hermes_core.settings.models import MemorySettings
from hermes_core.types import MemoryTarget

from .backends import postgres_target
from .edit import validate_edit
from .engine import limit_for
from .pgstore import PostgresMemoryStore, list_files, owner_key
from .store import FILENAMES, EditConflict, memories_dir, read_regular_file

Status = Literal["written", "unchanged", "conflict", "refused", "skipped", "error"]
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
    """Why nothing was stored (``conflict``, ``refused``, ``skipped``) and the fix."""
    warning: str = ""
    """Stored, but the file needs attention (over budget)."""

    def to_dict(self) -> dict[str, object]:
        return {
            "user_id": self.owner,
            "target": self.target,
            "file": str(self.path),
            "bytes": self.size,
            "status": self.status,
            "backup": str(self.backup) if self.backup else None,
            "error": self.error,
            "warning": self.warning,
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
            "hermes-memory memory import loads files into the PostgreSQL store: set memory.store: "
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
            limit = limit_for(settings, target)
            refusal, warning = check_import(data, target, limit, owner)
            if refusal:
                moved.append(Moved(owner, target, path, len(data), "refused", error=refusal))
                continue
            store = PostgresMemoryStore(home, target, limit, owner, server=server)
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
            moved.append(Moved(owner, target, path, len(data), status, warning=warning))
    moved.extend(skipped_user_dirs(root))
    return moved


def _user_flag(owner: str | None) -> str:
    return "" if owner is None else f" --user {shlex.quote(owner)}"


def check_import(
    data: bytes, target: MemoryTarget, limit: int, owner: str | None
) -> tuple[str, str]:
    """(refusal, warning) for importing ``data`` as ``owner``'s ``target`` file: the rules of
    a memory write. A refusal (not UTF-8, threat or credential found) names the fix; a
    warning (over budget) does not stop the import. Both empty: import as is."""
    name = FILENAMES[target]
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return (
            f"{name} is not valid UTF-8 ({exc.reason} at byte {exc.start}); save it as UTF-8, "
            "then re-run the import",
            "",
        )
    _, problems = validate_edit(text, target, limit)
    threats = [p for p in problems if "blocked pattern" in p]
    if threats:
        return (
            f"{'; '.join(threats)} — memory is shown to the model in every session, so "
            f"injected instructions and credentials are never stored (store where a secret "
            f"lives, not the secret); remove or rewrite those entries in {name}, then re-run",
            "",
        )
    if problems:
        found = "; ".join(problem.replace(" would be ", " is ", 1) for problem in problems)
        return "", (
            f"{found}. Stored as is (the prompt shows it marked OVER BUDGET); "
            f"consolidate with `hermes-memory memory edit --target {target}{_user_flag(owner)}` or "
            f"raise memory.{'memory_char_limit' if target == 'memory' else 'user_char_limit'}"
        )
    return "", ""


def skipped_user_dirs(root: Path) -> list[Moved]:
    """A ``skipped`` row for every directory under ``root/users/`` that is not a user scope
    the store would read (``<slug>-<sha256>`` named after its ``USER_ID`` file), naming the
    directory it should be moved to."""
    users = root / USERS_DIR
    if not users.is_dir():
        return []
    rows: list[Moved] = []
    for directory in sorted(users.iterdir()):
        if not directory.is_dir():
            continue
        try:
            uid: str | None = read_regular_text(
                directory / OWNER_FILE, max_bytes=OWNER_FILE_MAX_BYTES
            )
        except (OSError, UnicodeDecodeError):
            uid = None
        if (
            uid is not None
            and normalize_user_id(uid) is not None
            and directory.name == user_key(uid)
        ):
            continue
        label = uid if uid is not None and normalize_user_id(uid) is not None else directory.name
        expected = users / user_key(label)
        why = (
            f"its {OWNER_FILE} says {label!r} but the directory is not named {expected.name}"
            if uid is not None
            else f"it has no readable {OWNER_FILE} file"
        )
        rows.append(
            Moved(
                uid,
                "user",
                directory,
                0,
                "skipped",
                error=f"not in the users/<slug>-<sha256>/ layout: {why}. If it holds user "
                f"{label!r}'s files, move them to {expected}/ and write {label!r} (no newline) "
                f"into {expected / OWNER_FILE}, then re-run (`--user {shlex.quote(label)}` "
                "imports only that user)",
            )
        )
    return rows


__all__ = ["Moved", "check_import", "export_files", "import_files", "skipped_user_dirs"]
