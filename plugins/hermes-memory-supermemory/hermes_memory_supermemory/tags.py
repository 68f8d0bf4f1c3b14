"""Container tags: one per user under the configured tag, so two users never share.

``container_tag`` may hold ``{identity}`` (the Hermes profile: the home directory's name
when it lives under ``profiles/``, else ``default``). A session without ``user_id`` uses the
tag itself; a user id of ``[A-Za-z0-9_-]{1,40}`` gets ``<tag>.u.<id>``; any other id (an
e-mail address, ``张三``) gets ``<tag>.h.<readable>-<sha256 prefix>``. Raw ids contain no
dot, so the two forms never collide; the API's limit (100 characters of ``[A-Za-z0-9._-]``)
holds because the configured tag is at most 50.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

_RAW = re.compile(r"^[A-Za-z0-9_-]{1,40}$")
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
_TAG_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def identity_of(home: Path) -> str:
    return home.name if home.parent.name == "profiles" and home.name else "default"


def base_tag(template: str, home: Path) -> str:
    tag = template.replace("{identity}", identity_of(home))
    return _TAG_UNSAFE.sub("-", tag).strip("-.")[:50] or "hermes"


def user_tag(base: str, user_id: str | None) -> str:
    if not user_id:
        return base
    if _RAW.match(user_id):
        return f"{base}.u.{user_id}"
    readable = _UNSAFE.sub("-", user_id).strip("-")[:20] or "x"
    digest = hashlib.sha256(user_id.encode("utf-8")).hexdigest()[:16]
    return f"{base}.h.{readable}-{digest}"


__all__ = ["base_tag", "identity_of", "user_tag"]
