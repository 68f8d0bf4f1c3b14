"""Where a scope's data lives: THE helper every built-in store uses to key data by user.

A scope is ``SessionInfo.user_id``: ``None`` (or ``""``) is the no-user scope — a personal
agent, and every install from before scopes existed — whose data stays exactly where it always
was. Any other id gets a directory of its own below the same root::

    <root>/                     the no-user scope (today's files)
    <root>/users/<key>/         the scope of one user id
    <root>/users/<key>/USER_ID  the id itself (UTF-8), so operators can see whose it is

``<key>`` is :func:`user_key`: a readable ASCII slug of the id plus 32 hex digits of its
SHA-256, so any id — Chinese, ``..``, slashes, NUL, a megabyte of text, ``Alice`` and
``alice`` on a case-insensitive file system — maps to one short, path-safe name that no other
id shares. Rows in a database carry the id itself in a ``user_id`` column (``""`` for no
user) and every read filters by it.
"""

from __future__ import annotations

import hashlib
import logging
import re
import shlex
from pathlib import Path

from hermes_core.errors import HermesError
from hermes_core.fsutil import atomic_write_text, ensure_private_dir, read_regular_text

log = logging.getLogger(__name__)

USERS_DIR = "users"
OWNER_FILE = "USER_ID"
OWNER_FILE_MAX_BYTES = 4 * 1024 * 1024
"""A ``USER_ID`` file larger than this is skipped unread (ids are at most a few MB)."""
SLUG_MAX = 32
_NOT_SLUG = re.compile(r"[^a-z0-9_]+")
_SHELL_SAFE = re.compile(r"[\w@%+=:,./-]+")


class AllUsers:
    """The type of :data:`ALL_USERS`: every user's data at once (operator paths only:
    maintenance, statistics, export). A user's own path never passes it."""

    _instance: AllUsers | None = None

    def __new__(cls) -> AllUsers:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "ALL_USERS"


ALL_USERS = AllUsers()
UserScope = str | None | AllUsers
"""Whose data a read or write sees: a ``user_id`` (that user's only), ``None`` (only data
stored without a user) or :data:`ALL_USERS` (every user: operator paths). Store methods take
it as a REQUIRED keyword ``user_id`` so no call widens to every user by omission."""


def normalize_user_id(user_id: object) -> str | None:
    """``None`` for the no-user scope (``None`` or ``""``), else the id as a string.

    Ids are compared exactly: ``" u1"`` and ``"u1"`` are different users. A non-string id
    (an int from a framework) is used as ``str(id)``."""
    if user_id is None:
        return None
    text = user_id if isinstance(user_id, str) else str(user_id)
    return text or None


MAX_USER_ID_CHARS = 1_000_000
"""The longest user id accepted (``user_key`` hashes it, so its length never reaches a path)."""


class InvalidUserId(HermesError, ValueError):
    """A user id no store can keep exactly; the message names the fix."""


def check_user_id(user_id: object) -> str | None:
    """:func:`normalize_user_id`, refusing an id that a store could not keep byte for byte:
    one holding NUL (PostgreSQL text cannot hold it; it used to become U+FFFD there and clash
    with the id itself on the next turn), or longer than :data:`MAX_USER_ID_CHARS`. The same
    rule on SQLite, PostgreSQL and the memory files, so an id is refused everywhere or kept
    everywhere (a lone surrogate from a ``surrogateescape`` decode is kept as one consistent
    scope by every backend: its U+FFFD form plus a digest of the exact id)."""
    uid = normalize_user_id(user_id)
    if uid is None:
        return None
    problem = ""
    if "\x00" in uid:
        problem = "contains a NUL character"
    elif len(uid) > MAX_USER_ID_CHARS:
        problem = f"is longer than {MAX_USER_ID_CHARS:,} characters"
    if problem:
        raise InvalidUserId(
            f"user id {uid[:40].encode('unicode_escape').decode()!r}… {problem}: no store can "
            "keep it exactly. Use printable text (e.g. the account's id or e-mail)."
        )
    return uid


def user_key(user_id: str) -> str:
    """The directory name of ``user_id``'s scope: ``<slug>-<32 hex>`` (``u-<32 hex>`` when the
    id has no ASCII letters or digits). Path-safe, at most 65 characters, lower case, unique
    per id (the hex is the id's SHA-256)."""
    digest = hashlib.sha256(user_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    slug = _NOT_SLUG.sub("-", user_id.lower()).strip("-")[:SLUG_MAX].strip("-")
    return f"{slug or 'u'}-{digest}"


def scope_dir(root: Path, user_id: str | None) -> Path:
    """The directory of ``user_id``'s data below ``root`` (``root`` itself for no user)."""
    uid = normalize_user_id(user_id)
    return root if uid is None else root / USERS_DIR / user_key(uid)


def ensure_scope_dir(root: Path, user_id: str | None) -> Path:
    """:func:`scope_dir`, created private (``root``, ``users/`` and the user's directory are
    0700 when created here), with its ``USER_ID`` file written once."""
    uid = normalize_user_id(user_id)
    ensure_private_dir(root)
    if uid is not None:
        ensure_private_dir(root / USERS_DIR)
    directory = ensure_private_dir(scope_dir(root, uid))
    if uid is not None:
        owner = directory / OWNER_FILE
        if not owner.exists():
            try:
                label = uid.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
                atomic_write_text(owner, label)
            except OSError as exc:  # only a label for operators; the data is keyed by the hash
                log.warning("could not write %s: %s", owner, exc)
    return directory


def user_option(user_id: str | None) -> str:
    """`` --user <id>`` (shell-quoted) for a command a message tells the user to run, or ``""``
    for the no-user scope. Ids longer than 120 characters are not echoed."""
    uid = normalize_user_id(user_id)
    if uid is None:
        return ""
    if len(uid) > 120:
        return " --user <your user id>"
    return f" --user {uid if _SHELL_SAFE.fullmatch(uid) else shlex.quote(uid)}"


def known_user_ids(root: Path) -> list[str]:
    """The user ids that have a scope directory below ``root``, sorted (from their
    ``USER_ID`` files; directories without one are skipped)."""
    users = root / USERS_DIR
    if not users.is_dir():
        return []
    found: list[str] = []
    for directory in users.iterdir():
        try:
            uid = read_regular_text(directory / OWNER_FILE, max_bytes=OWNER_FILE_MAX_BYTES)
        except (OSError, UnicodeDecodeError):
            continue
        if directory.name == user_key(uid):
            found.append(uid)
    return sorted(found)


__all__ = [
    "ALL_USERS",
    "OWNER_FILE",
    "USERS_DIR",
    "AllUsers",
    "UserScope",
    "ensure_scope_dir",
    "known_user_ids",
    "normalize_user_id",
    "scope_dir",
    "user_key",
    "user_option",
]
