"""Forget a subject (a user and a phrase) or a whole user, everywhere, with a proof.

:func:`find_subject` searches every store the user's data can be in — MEMORY.md / USER.md
and the memory layer's archive, staged writes and copies; the session archive; the local
skills' notes; the active provider (when it can list its memories); the recall trace — and
changes nothing. :func:`forget_subject` deletes what it finds, purges the full-text index,
compacts every SQLite file of the home (WAL checkpointed, ``VACUUM``) and then proves it:
:class:`Proof` holds a fresh search of every store plus a raw byte search of every file
below the home; ``Proof.clean`` is True only when all of them found nothing.

A phrase must have at least :data:`MIN_PHRASE_CHARS` non-space characters (a one-letter
phrase would match almost everything) and at most :data:`MAX_PHRASE_CHARS`.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from hermes_core import recall_trace
from hermes_core.errors import HermesError
from hermes_core.layers.memory import forget as memory_forget
from hermes_core.layers.sessions import forget as archive_forget
from hermes_core.layers.skills import forget as skills_forget
from hermes_core.providers.inspect import ProviderMemory, inspectable
from hermes_core.scope import normalize_user_id

from .compact import compact, sqlite_files
from .provider_memories import provider_user
from .rawscan import RawScan, scan_home

if TYPE_CHECKING:
    from hermes_core.host import MemoryHost
    from hermes_core.layers.sessions.archive import SessionStore

log = logging.getLogger(__name__)
T = TypeVar("T")

MIN_PHRASE_CHARS = 2
MAX_PHRASE_CHARS = 200


def check_phrase(phrase: object) -> str:
    """``phrase`` stripped, or a :class:`HermesError` saying what a usable phrase is."""
    text = phrase.strip() if isinstance(phrase, str) else ""
    if len("".join(text.split())) < MIN_PHRASE_CHARS:
        raise HermesError(
            f"give a phrase of at least {MIN_PHRASE_CHARS} characters to forget (a shorter "
            "one would match almost everything); nothing was searched or deleted"
        )
    if len(text) > MAX_PHRASE_CHARS or any(ch < " " for ch in text):
        raise HermesError(
            f"the phrase must be one line of at most {MAX_PHRASE_CHARS} characters; "
            "nothing was searched or deleted"
        )
    return text


@dataclass
class Matches:
    """What one search found, per store. ``provider_note`` says why the provider was not
    searched (no provider, or one that cannot list its memories)."""

    memory: list[memory_forget.MemoryHit] = field(default_factory=list)
    archive: list[archive_forget.ArchiveHit] = field(default_factory=list)
    skills: list[skills_forget.SkillHit] = field(default_factory=list)
    provider: list[ProviderMemory] = field(default_factory=list)
    trace: list[recall_trace.TraceTurn] = field(default_factory=list)
    provider_note: str = ""

    @property
    def counts(self) -> dict[str, int]:
        return {
            "memory": len(self.memory),
            "archive": len(self.archive),
            "skills": len(self.skills),
            "provider": len(self.provider),
            "trace": len(self.trace),
        }

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "counts": self.counts,
            "memory": [h.to_dict() for h in self.memory],
            "archive": [h.to_dict() for h in self.archive],
            "skills": [h.to_dict() for h in self.skills],
            "provider": [m.to_dict() for m in self.provider],
            "trace": [t.to_dict() for t in self.trace],
            "provider_note": self.provider_note,
        }


@dataclass
class Proof:
    """The searches run after deleting: every store again, the raw byte scan of the home,
    and the SQLite files compacted (or why one could not be)."""

    searched: Matches
    raw: RawScan
    compacted: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return self.searched.total == 0 and self.raw.clean and not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {
            "clean": self.clean,
            "searched": self.searched.counts,
            "provider_note": self.searched.provider_note,
            "raw_files_with_phrase": self.raw.found,
            "raw_files_not_scanned": self.raw.skipped,
            "raw_files_scanned": self.raw.scanned,
            "compacted": self.compacted,
            "problems": self.problems,
        }


@dataclass
class ForgetReport:
    """What :func:`forget_subject` removed and its :class:`Proof`."""

    user_id: str | None
    phrase: str
    removed: Matches
    proof: Proof

    def to_dict(self) -> dict[str, Any]:
        return {
            "user_id": self.user_id,
            "phrase": self.phrase,
            "removed": self.removed.to_dict(),
            "proof": self.proof.to_dict(),
        }


def open_archive(host: MemoryHost) -> SessionStore | None:
    """The session archive of ``host`` (``None`` when ``sessions.enabled`` is off)."""
    if not host.settings.sessions.enabled:
        return None
    from hermes_core.layers.sessions.store import open_store

    return open_store(host.home, host.settings.sessions)


def _with_archive(host: MemoryHost, work: Callable[[SessionStore], T], default: T) -> T:
    """``work(archive)`` on ``host``'s session archive, closed afterwards; ``default`` when
    the archive is off."""
    archive = open_archive(host)
    if archive is None:
        return default
    try:
        return work(archive)
    finally:
        archive.close()


def _purged(archive: SessionStore, result: T) -> T:
    """``result``, after rebuilding ``archive``'s full-text index (:func:`purge_index`)."""
    archive_forget.purge_index(archive)
    return result


def _provider_matches(
    host: MemoryHost, user_id: str | None, phrase: str
) -> tuple[list[ProviderMemory], str]:
    provider = host.provider
    if provider is None:
        return [], "no memory provider is active"
    lister = inspectable(provider)
    if lister is None:
        return [], f"provider {provider.name} cannot list its memories; it was not searched"
    needle = phrase.casefold()
    uid = provider_user(host, user_id)
    return [m for m in lister.inspect_memories(uid) if needle in m.text.casefold()], ""


def find_subject(host: MemoryHost, user_id: str | None, phrase: str) -> Matches:
    """Every match of ``phrase`` in ``user_id``'s data, in every store (changes nothing)."""
    phrase = check_phrase(phrase)
    uid = normalize_user_id(user_id)
    found = Matches(
        memory=memory_forget.find_phrase(host.home, host.settings.memory, uid, phrase),
        skills=skills_forget.find_phrase(host.home, phrase),
        trace=recall_trace.find_phrase(host.home, uid, phrase),
    )
    found.archive = _with_archive(host, lambda a: archive_forget.find_phrase(a, uid, phrase), [])
    found.provider, found.provider_note = _provider_matches(host, uid, phrase)
    return found


def compact_home(home: Path) -> tuple[list[str], list[str]]:
    """Compact every SQLite file of ``home``; returns (compacted, problems)."""
    done: list[str] = []
    problems: list[str] = []
    for path in sqlite_files(home):
        try:
            compact(path)
            done.append(str(path.relative_to(home)))
        except sqlite3.Error as exc:
            problems.append(f"{path.relative_to(home)} could not be compacted: {exc}")
    return done, problems


def forget_subject(host: MemoryHost, user_id: str | None, phrase: str) -> ForgetReport:
    """Delete every match of ``phrase`` in ``user_id``'s data, compact, and prove it."""
    phrase = check_phrase(phrase)
    uid = normalize_user_id(user_id)
    removed = Matches(
        memory=memory_forget.forget_phrase(host.home, host.settings.memory, uid, phrase),
        skills=skills_forget.forget_phrase(host.home, phrase),
    )
    removed.archive = _with_archive(
        host, lambda a: _purged(a, archive_forget.forget_phrase(a, uid, phrase)), []
    )
    removed.provider, removed.provider_note = _provider_matches(host, uid, phrase)
    lister = inspectable(host.provider)
    if lister is not None and removed.provider:
        lister.inspect_forget(provider_user(host, uid), [m.id for m in removed.provider])
    removed.trace = recall_trace.find_phrase(host.home, uid, phrase)
    recall_trace.forget_phrase(host.home, uid, phrase)
    return ForgetReport(uid, phrase, removed, prove(host, uid, phrase))


def prove(host: MemoryHost, user_id: str | None, phrase: str) -> Proof:
    """Let the provider compact its files (its optional ``inspect_compact()``), compact
    the home's SQLite files, then search every store and every file again."""
    provider_compact = getattr(inspectable(host.provider), "inspect_compact", None)
    problems: list[str] = []
    if callable(provider_compact):
        try:
            provider_compact()
        except Exception as exc:  # reported in the proof, never hidden
            problems.append(f"the provider could not compact its files: {exc}")
    compacted, failed = compact_home(host.home)
    problems += failed
    searched = find_subject(host, user_id, phrase)
    return Proof(searched, scan_everywhere(host, phrase), compacted, problems)


def scan_everywhere(host: MemoryHost, phrase: str) -> RawScan:
    """The raw byte search of the home plus the directories outside it where the provider
    keeps data (its optional ``inspect_paths()``, e.g. mem0's ``MEM0_DIR``), those reported
    by absolute path."""
    raw = scan_home(host.home, phrase)
    paths = getattr(inspectable(host.provider), "inspect_paths", None)
    home = host.home.resolve()
    for extra in paths() if callable(paths) else []:
        root = Path(extra).resolve()
        if root == home or home in root.parents or not root.is_dir():
            continue
        more = scan_home(root, phrase)
        raw = RawScan(
            raw.found + [str(root / f) for f in more.found],
            raw.skipped + [str(root / f) for f in more.skipped],
            raw.scanned + more.scanned,
        )
    return raw


@dataclass
class UserForgetReport:
    """What :func:`forget_user` removed per store, and what still names the user."""

    user_id: str
    removed: dict[str, int]
    compacted: list[str]
    problems: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {
            "user_id": self.user_id,
            "removed": self.removed,
            "compacted": self.compacted,
            "problems": self.problems,
        }


def forget_user(host: MemoryHost, user_id: str) -> UserForgetReport:
    """Delete everything of ``user_id``: memory files, archive rows and staged writes, every
    session, the provider's memories, the recall trace; then compact the SQLite files."""
    uid = normalize_user_id(user_id)
    if uid is None:
        raise HermesError("give the user id to forget (the no-user scope is not a person)")
    removed: dict[str, int] = {
        "memory": memory_forget.forget_scope(host.home, host.settings.memory, uid)
    }
    removed["sessions"] = _with_archive(
        host, lambda a: _purged(a, archive_forget.forget_user(a, uid)), 0
    )
    lister = inspectable(host.provider)
    if lister is not None:
        removed["provider"] = lister.inspect_forget_user(uid)
    removed["trace"] = int(recall_trace.forget_user(host.home, uid))
    provider_compact = getattr(inspectable(host.provider), "inspect_compact", None)
    if callable(provider_compact):
        provider_compact()
    compacted, problems = compact_home(host.home)
    return UserForgetReport(uid, removed, compacted, problems)


__all__ = [
    "MAX_PHRASE_CHARS",
    "MIN_PHRASE_CHARS",
    "ForgetReport",
    "Matches",
    "Proof",
    "UserForgetReport",
    "check_phrase",
    "find_subject",
    "forget_subject",
    "forget_user",
    "open_archive",
    "prove",
    "scan_everywhere",
]
