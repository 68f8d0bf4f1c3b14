"""MEMORY.md / USER.md on disk: parsing, limits, locking, atomic writes, drift guard.

Contract:

* A file is entries joined by :data:`DELIMITER` (newline, ``§``, newline), no header, no
  trailing delimiter. Reading strips a UTF-8 BOM, splits on the full delimiter, strips each
  piece, drops empty pieces and removes duplicates (first occurrence wins).
* The size of a store is ``len(DELIMITER.join(entries))``: delimiters count.
* A file that exists but cannot be read (OS error, invalid UTF-8) is never treated as empty:
  every mutation is refused with an error containing "could not be read" and the bytes on
  disk are left alone.
* Every mutation holds the per-file lock (:func:`hermes_core.fsutil.file_lock`), re-reads the
  file under it and writes atomically (temp + fsync + rename): concurrent writers from other
  sessions or processes are never lost, and a crash never leaves a torn file.
* The drift guard (replace/remove/batch, not add) refuses to rewrite a file whose content would
  not round-trip, after copying it to ``<file>.bak.<unix-ts>`` — once per distinct content,
  at most :data:`BACKUP_MAX_FILES` backups and :data:`BACKUP_MAX_BYTES` bytes per file.
* A FIFO, device or directory at a memory path is an "could not be read" error, never a
  hang; temp files of an interrupted write are removed under the lock of the next write.

:class:`EntryStore` is the seam between what a write does (:mod:`.engine`, :mod:`.edit`) and
where the text lives: :class:`MemoryStore` (these files, ``memory.store: files``) and
:class:`~.pgstore.PostgresMemoryStore` (``memory.store: postgresql``) both hold the exact text
of the file, so parsing, limits, duplicates and the drift guard are the same code.
"""

from __future__ import annotations

import hashlib
import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from hermes_core.fsutil import (
    PRIVATE_FILE_MODE,
    atomic_write_bytes,
    atomic_write_text,
    ensure_private_dir,
    file_lock,
    read_regular_bytes,
)
from hermes_core.scope import ensure_scope_dir, normalize_user_id, scope_dir, user_option
from hermes_core.types import MemoryTarget

log = logging.getLogger(__name__)

DELIMITER = "\n§\n"
FILENAMES: dict[MemoryTarget, str] = {"memory": "MEMORY.md", "user": "USER.md"}
DEFAULT_LIMITS: dict[MemoryTarget, int] = {"memory": 2200, "user": 1375}

T = TypeVar("T")

BACKUP_MAX_FILES = 10
"""Drift backups kept per memory file (oldest removed first)."""
BACKUP_MAX_BYTES = 4 * 1024 * 1024
"""Total size of the drift backups kept per memory file."""
STALE_TEMP_SECONDS = 600.0
"""Temp files of an interrupted atomic write older than this are removed on the next write."""


def memories_dir(home: Path) -> Path:
    """``$HERMES_HOME/memories`` (resolved at call time, so profile switches are honoured)."""
    return home / "memories"


def coerce_limit(value: Any, default: int) -> int:
    """A character limit from config: ints, numeric strings (``"2200"``), floats; else default."""
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return max(value, 0)
    if isinstance(value, float):
        return max(int(value), 0)
    if isinstance(value, str):
        text = value.strip().replace(",", "").replace("_", "")
        try:
            return max(int(float(text)), 0)
        except ValueError:
            return default
    return default


def normalize_newlines(text: str) -> str:
    """``text`` with CRLF and lone CR line ends turned into LF.

    A file saved by an editor that writes CRLF would otherwise not split on the delimiter
    and parse as ONE entry, so removing or replacing any fact in it would drop them all.
    """
    return text.replace("\r\n", "\n").replace("\r", "\n")


def has_separator_line(entry: str) -> bool:
    """True when ``entry`` has a line that is exactly ``§``: written to the file, such an
    entry would split into several (or merge with its neighbour) on the next read."""
    return any(line == "§" for line in normalize_newlines(entry).split("\n"))


def split_pieces(text: str) -> list[str]:
    """Stripped, non-empty pieces of ``text`` split on the delimiter (duplicates kept);
    CRLF/CR line ends count as LF."""
    return [piece.strip() for piece in normalize_newlines(text).split(DELIMITER) if piece.strip()]


def dedupe(entries: Iterable[str]) -> list[str]:
    """``entries`` without repeats, first occurrence kept, order preserved."""
    seen: set[str] = set()
    out: list[str] = []
    for entry in entries:
        if entry not in seen:
            seen.add(entry)
            out.append(entry)
    return out


def parse_entries(text: str) -> list[str]:
    """The entries of a memory file's text (BOM already stripped)."""
    return dedupe(split_pieces(text))


def serialize(entries: Iterable[str]) -> str:
    """File text for ``entries``; an empty list is an empty file."""
    return DELIMITER.join(entries)


def char_count(entries: Iterable[str]) -> int:
    """Size charged against the budget: entries plus delimiters."""
    return len(serialize(entries))


def percent(current: int, limit: int) -> int:
    """``int(current / limit * 100)`` capped at 100; 0 when ``limit <= 0``."""
    if limit <= 0:
        return 0
    return min(int(current / limit * 100), 100)


def usage_short(current: int, limit: int) -> str:
    """``"1,474/2,200"`` (error responses)."""
    return f"{current:,}/{limit:,}"


def usage_long(current: int, limit: int) -> str:
    """``"67% — 1,474/2,200 chars"`` (success responses and headers)."""
    return f"{percent(current, limit)}% — {current:,}/{limit:,} chars"


MEMORY_FILE_MAX_BYTES = 64 * 1024 * 1024
"""A memory file larger than this is refused unread (budgets keep real ones to kilobytes)."""


@dataclass(frozen=True)
class DiskState:
    """One read of a memory file.

    ``raw`` is the decoded text (BOM removed, line ends normalised to LF), ``None`` when the
    file does not exist; ``error`` is set when the file exists but could not be read
    (``entries`` is then empty and must not be written back).
    """

    entries: list[str] = field(default_factory=list)
    raw: str | None = None
    error: str | None = None

    @property
    def readable(self) -> bool:
        return self.error is None


def read_regular_file(path: Path) -> bytes:
    """The bytes of ``path``, which must be a regular file of at most
    :data:`MEMORY_FILE_MAX_BYTES`: a FIFO, device, socket or directory raises OSError at once
    instead of blocking (:func:`hermes_core.fsutil.read_regular_bytes`)."""
    return read_regular_bytes(path, max_bytes=MEMORY_FILE_MAX_BYTES, what="memory file")


def state_of_bytes(data: bytes | None) -> DiskState:
    """The :class:`DiskState` of a memory file's exact bytes (``None``: no file): BOM
    stripped, line ends normalised, invalid UTF-8 an error. Every store parses through it."""
    if data is None:
        return DiskState()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return DiskState(error=f"not valid UTF-8 ({exc.reason} at byte {exc.start})")
    text = normalize_newlines(text)
    return DiskState(entries=parse_entries(text), raw=text)


def read_state(path: Path) -> DiskState:
    """Read ``path`` without locking (readers see either the old or the new file). A FIFO or
    other non-regular file is an error (never a hang)."""
    try:
        data = read_regular_file(path)
    except FileNotFoundError:
        return DiskState()
    except OSError as exc:
        return DiskState(error=f"{type(exc).__name__}: {exc}")
    return state_of_bytes(data)


def has_drift(raw: str, limit: int) -> bool:
    """True when ``raw`` would not survive a parse/re-serialise round trip.

    Drift is: the stripped text differs from its stripped pieces re-joined (stray ``§``,
    blank pieces, padding around delimiters), or one piece is longer than the whole budget
    (free text appended without delimiters). Duplicates alone are not drift.
    """
    pieces = split_pieces(raw)
    if raw.strip() != serialize(pieces):
        return True
    return limit > 0 and any(len(piece) > limit for piece in pieces)


class StoreRefusal(Exception):
    """A mutation was refused before anything was written; ``payload`` is the tool error.

    ``maybe_written`` is True only when a database connection broke while committing, so the
    write may have landed (callers must then keep whatever they prepared for it)."""

    def __init__(self, payload: dict[str, Any], *, maybe_written: bool = False) -> None:
        super().__init__(str(payload.get("error", "")))
        self.payload = payload
        self.maybe_written = maybe_written


@dataclass(frozen=True)
class Change:
    """What a mutation callback wants: the new entry list (``None`` = write nothing)."""

    entries: list[str] | None
    result: Any = None


class EditConflict(Exception):
    """:meth:`EntryStore.replace_if_unchanged` found other bytes than the edit started from."""


class EntryStore(ABC):
    """One memory file (``MEMORY.md`` or ``USER.md``) of one owner, with its budget, wherever
    its text is kept. The interface every store implements:

    * :meth:`read` — the current text as a :class:`DiskState` (no lock; never raises: a store
      that cannot be read gives ``error``).
    * :meth:`transact` — re-read under the store's lock (per owner and file), run the
      mutation, write what it returns; refusals raise :class:`StoreRefusal`.
    * :meth:`read_original` / :meth:`replace_if_unchanged` — whole-file edits
      (:mod:`.edit`): the exact bytes, then a locked compare-and-write.

    ``owner`` is the user id whose file it is (``None``: the no-user file). ``kind`` names
    the store (``files`` / ``postgresql``); ``location`` says where it is for people (never
    a password). ``local_dir`` is this owner's directory under ``$HERMES_HOME/memories`` —
    where files live, and where edit recovery files go whatever the store.
    """

    kind: ClassVar[str] = ""

    def __init__(
        self, home: Path, target: MemoryTarget, limit: int, owner: str | None = None
    ) -> None:
        self.home = home
        self.target: MemoryTarget = target
        self.limit = limit
        self.owner = normalize_user_id(owner)
        self.filename = FILENAMES[target]

    @property
    def local_dir(self) -> Path:
        """``$HERMES_HOME/memories[/users/<key>]`` of this owner."""
        return scope_dir(memories_dir(self.home), self.owner)

    @property
    @abstractmethod
    def location(self) -> str:
        """Where the text is, for people (a path, or a redacted database URL and file)."""

    @abstractmethod
    def read(self) -> DiskState:
        """The text as it is now (no lock)."""

    def entries(self) -> list[str]:
        """Live entries (empty when missing or unreadable)."""
        return self.read().entries

    @abstractmethod
    def transact(self, mutate: Callable[[list[str]], Change], *, drift_guard: bool) -> Any:
        """Run ``mutate`` on the entries re-read under the lock; write what it returns.

        Raises :class:`StoreRefusal` for an unreadable store and (with ``drift_guard``)
        drift, before calling ``mutate``. ``mutate`` may raise :class:`StoreRefusal` (or any
        exception: nothing is written then). Returns ``Change.result``."""

    @abstractmethod
    def read_original(self) -> bytes:
        """The exact stored bytes (``b""`` when there is no file yet). Raises OSError (or a
        :class:`~hermes_core.errors.HermesError`) when the store cannot be read."""

    @abstractmethod
    def replace_bytes_if_unchanged(self, original: bytes, data: bytes) -> None:
        """Under the lock: store exactly ``data`` if the stored bytes are still ``original``
        (``b""`` = nothing stored), else raise :class:`EditConflict` (imports, tests)."""

    @abstractmethod
    def replace_if_unchanged(
        self, original: bytes, text: str, *, keep_original: bool = False
    ) -> Path | None:
        """Under the lock: write ``text`` if the stored bytes are still ``original``, else
        raise :class:`EditConflict`. ``keep_original`` first copies ``original`` to a
        ``.bak`` file next to the local file (returned)."""

    def unreadable_payload(self, state: DiskState) -> dict[str, Any]:
        """The refusal of a write to a store that could not be read."""
        return {
            "success": False,
            "error": (
                f"Cannot modify {self.filename}: it could not be read ({state.error}). "
                "Nothing was changed."
            ),
        }

    @abstractmethod
    def drift_payload(self) -> dict[str, Any]:
        """The refusal of a write to text edited out of the round-trip format."""

    def checked_change(
        self, state: DiskState, mutate: Callable[[list[str]], Change], *, drift_guard: bool
    ) -> Change:
        """What every store does inside its lock before writing: refuse an unreadable store
        and (with ``drift_guard``) drifted text with :class:`StoreRefusal`, else run
        ``mutate`` on the entries of ``state``."""
        if not state.readable:
            raise StoreRefusal(self.unreadable_payload(state))
        if drift_guard and state.raw is not None and has_drift(state.raw, self.limit):
            raise StoreRefusal(self.drift_payload())
        return mutate(list(state.entries))


class MemoryStore(EntryStore):
    """The file store (``memory.store: files``): ``memories/<FILE>`` for no user, else
    ``memories/users/<key>/<FILE>`` (see :mod:`hermes_core.scope`).
    Cheap to construct; holds no file handles. Thread- and process-safe through the file lock.
    """

    kind: ClassVar[str] = "files"

    @property
    def path(self) -> Path:
        return scope_dir(memories_dir(self.home), self.owner) / self.filename

    @property
    def location(self) -> str:
        return str(self.path)

    def read(self) -> DiskState:
        """The file as it is now (no lock)."""
        return read_state(self.path)

    def read_original(self) -> bytes:
        return read_regular_file(self.path) if self.path.exists() else b""

    def replace_bytes_if_unchanged(self, original: bytes, data: bytes) -> None:
        ensure_scope_dir(memories_dir(self.home), self.owner)
        with file_lock(self.path):
            current = read_regular_file(self.path) if self.path.exists() else b""
            if current != original:
                raise EditConflict(f"{self.filename} changed on disk while you were editing")
            atomic_write_bytes(self.path, data)

    def replace_if_unchanged(
        self, original: bytes, text: str, *, keep_original: bool = False
    ) -> Path | None:
        ensure_private_dir(self.path.parent)
        backup: Path | None = None
        with file_lock(self.path):
            current = read_regular_file(self.path) if self.path.exists() else b""
            if current != original:
                raise EditConflict(f"{self.filename} changed on disk while you were editing")
            if keep_original:
                backup = self.path.with_name(f"{self.filename}.bak.{int(time.time())}")
                atomic_write_bytes(backup, original)
            atomic_write_text(self.path, text)
        return backup

    def unreadable_payload(self, state: DiskState) -> dict[str, Any]:
        return {
            "success": False,
            "error": (
                f"Cannot modify {self.filename}: the file exists but could not be read "
                f"({state.error}). Nothing was changed. Fix the file's permissions or encoding "
                f"(it must be UTF-8) or move it aside, then retry."
            ),
        }

    def _backups(self) -> list[Path]:
        """This file's drift backups, oldest first."""
        pattern = f"{self.filename}.bak.*"
        found = [p for p in self.path.parent.glob(pattern) if p.is_file() and not p.is_symlink()]
        return sorted(found, key=lambda p: (p.stat().st_mtime, p.name))

    def _backup(self, raw_bytes: bytes) -> str:
        """Copy the drifted file to ``<file>.bak.<unix-ts>`` — unless a backup with the same
        content exists (one backup per distinct content) — then keep the backups within
        :data:`BACKUP_MAX_FILES` files and :data:`BACKUP_MAX_BYTES` bytes (oldest go first;
        the new one is always kept)."""
        digest = hashlib.sha256(raw_bytes).digest()
        existing = self._backups()
        for old in existing:
            try:
                if old.stat().st_size == len(raw_bytes) and (
                    hashlib.sha256(read_regular_file(old)).digest() == digest
                ):
                    return str(old)
            except OSError:
                continue
        stamp = int(time.time())
        base = self.path.with_name(f"{self.filename}.bak.{stamp}")
        candidate = base
        counter = 1
        while candidate.exists():
            counter += 1
            candidate = base.with_name(f"{base.name}-{counter}")
        try:
            atomic_write_bytes(candidate, raw_bytes, mode=PRIVATE_FILE_MODE)
        except OSError as exc:
            log.warning("memory drift backup %s failed: %s", candidate, exc)
            return f"{candidate} (BACKUP FAILED — file unchanged on disk)"
        self._prune_backups(keep=candidate)
        return str(candidate)

    def _prune_backups(self, keep: Path) -> None:
        backups = [p for p in self._backups() if p != keep]
        total = keep.stat().st_size + sum(p.stat().st_size for p in backups)
        while backups and (len(backups) + 1 > BACKUP_MAX_FILES or total > BACKUP_MAX_BYTES):
            oldest = backups.pop(0)
            try:
                total -= oldest.stat().st_size
                oldest.unlink()
            except OSError as exc:
                log.warning("could not remove old memory backup %s: %s", oldest, exc)
                break

    def clean_stale_temp_files(self, older_than: float = STALE_TEMP_SECONDS) -> int:
        """Remove ``.<file>.*.tmp`` files an interrupted atomic write left behind (older than
        ``older_than`` seconds, so a write in progress is never touched). Returns how many."""
        removed = 0
        cutoff = time.time() - older_than
        for tmp in self.path.parent.glob(f".{self.filename}.*.tmp"):
            try:
                if tmp.is_file() and not tmp.is_symlink() and tmp.stat().st_mtime < cutoff:
                    tmp.unlink()
                    removed += 1
            except OSError:
                continue
        return removed

    def drift_payload(self) -> dict[str, Any]:
        """Back up the drifted file and build the refusal (the file itself is untouched)."""
        try:
            raw_bytes = read_regular_file(self.path)
        except OSError:
            raw_bytes = b""
        backup = self._backup(raw_bytes)
        return {
            "success": False,
            "error": (
                f"Refusing to write {self.filename}: file on disk has content that wouldn't "
                "round-trip through the memory tool (it was probably edited outside it). "
                "Nothing was changed."
            ),
            "drift_backup": backup,
            "remediation": (
                f"A copy of the file is at {backup.split(' (')[0]}. Restore the format "
                f"(entries separated by a line containing only §, each entry shorter than "
                f"{self.limit:,} chars) with `hermes-memory memory edit --target {self.target}"
                f"{user_option(self.owner)}`, or "
                "use memory(action='add') to record new facts, then retry."
            ),
        }

    def transact(self, mutate: Callable[[list[str]], Change], *, drift_guard: bool) -> Any:
        """Run ``mutate`` on the entries re-read under the lock; write what it returns.

        Raises :class:`StoreRefusal` for unreadable files and (with ``drift_guard``) drift,
        before calling ``mutate``. ``mutate`` may raise :class:`StoreRefusal` too. Returns
        ``Change.result``. Write failures raise ``RuntimeError("Failed to write memory file
        <path>: <err>")`` with the file unchanged.
        """
        ensure_scope_dir(memories_dir(self.home), self.owner)
        with file_lock(self.path):
            self.clean_stale_temp_files()
            change = self.checked_change(self.read(), mutate, drift_guard=drift_guard)
            if change.entries is not None:
                self.write_unlocked(change.entries)
            return change.result

    def write_unlocked(self, entries: list[str]) -> None:
        """Atomically replace the file with ``entries`` (caller holds the lock)."""
        try:
            atomic_write_text(self.path, serialize(entries))
        except OSError as exc:
            raise RuntimeError(f"Failed to write memory file {self.path}: {exc}") from exc


__all__ = [
    "BACKUP_MAX_BYTES",
    "BACKUP_MAX_FILES",
    "DEFAULT_LIMITS",
    "DELIMITER",
    "FILENAMES",
    "Change",
    "DiskState",
    "EditConflict",
    "EntryStore",
    "MemoryStore",
    "StoreRefusal",
    "char_count",
    "coerce_limit",
    "dedupe",
    "has_drift",
    "has_separator_line",
    "memories_dir",
    "normalize_newlines",
    "parse_entries",
    "percent",
    "read_regular_file",
    "read_state",
    "serialize",
    "split_pieces",
    "state_of_bytes",
    "usage_long",
    "usage_short",
]
