"""Honcho ids for Hermes users and sessions.

Honcho ids match ``^[a-zA-Z0-9_-]+$``. A user id that already does (and is short, and does
not start with ``h-``) is used as is, so an existing Honcho workspace keeps its peers; any
other id (an e-mail address, ``张三``) becomes ``h-<readable part>-<sha256 prefix>``. The
mapping is injective: raw ids never start with ``h-`` and mapped ids always do, and two
different inputs share a mapped id only on a 64-bit hash collision. Every Honcho session id
is a hash over the user's peer id and the scope, so two users never write into one session.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

_VALID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


def honcho_id(raw: str, *, reserved: frozenset[str] = frozenset()) -> str:
    """A Honcho-safe id for ``raw`` (see the module docstring)."""
    if _VALID.match(raw) and not raw.startswith("h-") and raw not in reserved:
        return raw
    return _hashed(raw, raw)


def _hashed(readable: str, material: str) -> str:
    part = _UNSAFE.sub("-", readable).strip("-")[:40] or "x"
    digest = hashlib.sha256(material.encode("utf-8")).hexdigest()[:16]
    return f"h-{part}-{digest}"


def repo_root(start: Path) -> Path:
    """The nearest directory at or above ``start`` holding ``.git``, else ``start``."""
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return start


def session_key(strategy: str, *, user_peer: str, session_id: str, cwd: Path) -> str:
    """The Honcho session id for one Hermes session under ``strategy``."""
    if strategy == "per-session":
        scope = session_id
    elif strategy == "global":
        scope = "global"
    elif strategy == "per-repo":
        scope = repo_root(cwd).name or "root"
    else:  # per-directory
        scope = cwd.name or "root"
    # Always hashed over (peer, scope) with a separator no id contains: injective.
    return _hashed(f"{user_peer}-{scope}", f"{user_peer}\x00{strategy}\x00{scope}")


__all__ = ["honcho_id", "repo_root", "session_key"]
