"""Bank ids and user tags: how a session maps onto Hindsight's memory banks.

A session's bank is ``bank_id_template`` rendered with ``{bank}``, ``{user}``, ``{profile}``,
``{platform}`` and ``{session}``. Every placeholder value is reduced to letters, digits,
``-`` and ``_`` (any other run of characters becomes one ``-``; letters of every script are
kept, so ``用户`` stays ``用户``), empty placeholders collapse (``{bank}-{user}`` with no user is
``{bank}``), and a template that renders empty or names an unknown placeholder falls back to
``bank_id``.

Whatever the bank, each memory carries the tag ``user:<id>`` (see :func:`user_tag`) and recall
filters on it strictly, so even a template without ``{user}`` never mixes two users.
"""

from __future__ import annotations

import hashlib
import logging
import re

log = logging.getLogger(__name__)

_UNSAFE = re.compile(r"[^\w-]+", re.UNICODE)
_MAX_SEGMENT = 80


def sanitize(value: str | None) -> str:
    """``value`` safe for a URL path segment and a tag; long values keep a hash suffix so two
    long ids never collapse into one."""
    if not value:
        return ""
    cleaned = _UNSAFE.sub("-", str(value)).strip("-_")
    cleaned = re.sub(r"-{2,}", "-", cleaned)
    if len(cleaned) > _MAX_SEGMENT:
        digest = hashlib.sha256(str(value).encode("utf-8")).hexdigest()[:12]
        cleaned = f"{cleaned[: _MAX_SEGMENT - 13]}-{digest}"
    return cleaned


def render_bank_id(
    template: str,
    bank: str,
    *,
    user: str = "",
    profile: str = "",
    platform: str = "",
    session: str = "",
) -> str:
    """The bank of a session (see the module docstring)."""
    fallback = sanitize(bank) or "hermes"
    if not template.strip():
        return fallback
    values = {
        "bank": fallback,
        "user": sanitize(user),
        "profile": sanitize(profile),
        "platform": sanitize(platform),
        "session": sanitize(session),
    }
    try:
        rendered = template.format(**values)
    except (KeyError, IndexError, ValueError) as exc:
        log.warning("invalid bank_id_template %r (%s); using bank %r", template, exc, fallback)
        return fallback
    rendered = re.sub(r"-{2,}", "-", rendered)
    rendered = re.sub(r"_{2,}", "_", rendered).strip("-_")
    return sanitize(rendered) or fallback


def user_tag(user: str) -> str:
    """The tag every memory of ``user`` carries; recall filters on it."""
    return f"user:{user}"


def session_tag(session_id: str) -> str:
    return f"session:{session_id}"


__all__ = ["render_bank_id", "sanitize", "session_tag", "user_tag"]
