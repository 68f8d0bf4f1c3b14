"""Who a request speaks for, and which ``viking://`` URIs a user may name.

OpenViking keeps memories per account and user (``viking://user/<user>/...``, written
``viking://~/...`` for "the caller"). A Hermes session's ``user_id`` becomes the OpenViking
user: ids OpenViking accepts as they are (letters, digits, ``_ . - @``) are kept, anything
else (Chinese names, spaces, slashes) becomes ``hx-`` + a hash, so two different Hermes users
never map to one OpenViking user. Ids that already start with ``hx-`` are hashed too, so a
raw id can never collide with a hashed one.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from hermes_core.providers.service.provider import ToolRefused

_ID = re.compile(r"^[A-Za-z0-9_.-]+(@[A-Za-z0-9_.-]+)?$")
_HASHED = "hx-"
MAX_ID = 128


def openviking_user(user_id: str) -> str:
    """The OpenViking user id for Hermes ``user_id`` (deterministic, injective)."""
    raw = user_id.strip()
    if (
        _ID.match(raw)
        and raw not in {".", ".."}
        and not raw.startswith(_HASHED)
        and len(raw) <= MAX_ID
    ):
        return raw
    digest = hashlib.sha256(user_id.encode("utf-8")).hexdigest()[:32]
    return _HASHED + digest


@dataclass(frozen=True, slots=True)
class Identity:
    """Account, user and actor peer of one request.

    ``assert_tenant`` sends ``X-OpenViking-Account``/``X-OpenViking-User`` (trusted mode and
    dev servers); with a user-scoped key the key alone says who the caller is.
    """

    account: str
    user: str
    peer: str
    assert_tenant: bool = True

    def headers(self) -> dict[str, str]:
        out = {"X-OpenViking-Actor-Peer": self.peer}
        if self.assert_tenant:
            out["X-OpenViking-Account"] = self.account
            out["X-OpenViking-User"] = self.user
        return out


class UriRefused(ToolRefused):
    """A URI the model passed is outside what this user may name."""


def check_uri(uri: object, identity: Identity, *, allow_shared: bool = True) -> str:
    """``uri`` stripped, if it is a ``viking://`` URI this user may read; else UriRefused.

    Allowed: the caller's own space (``viking://~/...`` or ``viking://user/<own user>/...``)
    and, when ``allow_shared``, the account-wide areas (``viking://``, ``viking://resources``,
    ``viking://agent``...). Another user's space, ``..`` segments, queries and fragments are
    refused; the server enforces the same per user, this check keeps the tool's error clear.
    """
    if not isinstance(uri, str) or not uri.strip():
        raise UriRefused("a viking:// URI is required (from viking_search or viking_browse)")
    text = uri.strip()
    if not text.startswith("viking://"):
        raise UriRefused(f"{text!r} is not a viking:// URI")
    parts = urlsplit(text)
    if parts.query or parts.fragment:
        raise UriRefused(f"{text!r}: query strings and fragments are not allowed")
    path = text[len("viking://") :]
    segments = [s for s in path.split("/") if s]
    if any(s in {".", ".."} for s in segments):
        raise UriRefused(f"{text!r}: '.' and '..' segments are not allowed")
    if not segments or segments[0] == "~":
        return text
    if segments[0] == "user":
        if len(segments) == 1:
            raise UriRefused("viking://user lists every user; use viking://~/ for your own space")
        if segments[1] != identity.user:
            raise UriRefused(f"{text!r} belongs to another user; use viking://~/...")
        return text
    if segments[0] == "session":
        raise UriRefused(f"{text!r}: sessions are not browsable here")
    if not allow_shared:
        raise UriRefused(f"{text!r} is outside your own space (viking://~/...)")
    return text


def memory_uri(peer: str, category: str, content: str) -> str:
    """The memory file for ``content``: named by its hash, so mirroring the same text twice
    writes one file."""
    digest = hashlib.sha256(content.strip().encode("utf-8")).hexdigest()[:16]
    return f"viking://~/peers/{peer}/memories/{category}/mem_{digest}.md"


__all__ = ["Identity", "UriRefused", "check_uri", "memory_uri", "openviking_user"]
