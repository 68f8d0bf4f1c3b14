"""The security rules of ``hermes-memory ui``, in one place.

* **Host check**: bound to a loopback address, only requests whose ``Host`` header names
  that loopback address (or ``localhost``) are served, so a web page cannot reach the app
  through DNS rebinding.
* **Access token**: bound to any other address (``--host``), every request needs a token:
  the one printed at start (every user) or an MCP token of ``hermes-memory mcp token add``
  (its user only). It comes as ``Authorization: Bearer …``, a ``hermes_ui`` cookie, or once
  as ``?token=…`` (then set as an HttpOnly, SameSite=Strict cookie).
* **CSRF**: every POST carries the per-process CSRF token (a hidden form field or the
  ``X-CSRF-Token`` header), compared in constant time; a cross-site form cannot read it.
* **Read-only** (``--read-only``): every POST is refused with 403.
* **One user per view**: a token bound to a user can only name that user.
* Every response carries a Content-Security-Policy without inline scripts.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from hermes_core.net import is_loopback

COOKIE = "hermes_ui"
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'; connect-src 'self'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}


@dataclass(frozen=True)
class Access:
    """Who a request is: allowed at all, and the one user it is bound to (``None``: any)."""

    allowed: bool
    bound_user: str | None = None
    reason: str = ""


@dataclass
class Guard:
    """The rules of one running app (see the module docstring)."""

    home: Path
    bind_host: str = "127.0.0.1"
    read_only: bool = False
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    token: str | None = None

    def __post_init__(self) -> None:
        if not is_loopback(self.bind_host) and self.token is None:
            self.token = secrets.token_urlsafe(32)

    @property
    def needs_token(self) -> bool:
        return self.token is not None

    def host_allowed(self, host_header: str) -> bool:
        """Whether the ``Host`` header is acceptable (loopback binds only serve loopback
        names; a ``--host`` bind is protected by the token instead)."""
        if not is_loopback(self.bind_host):
            return True
        name = host_header.rsplit(":", 1)[0] if not host_header.endswith("]") else host_header
        return is_loopback(name.strip("[]")) if name else False

    def access(self, presented: str | None) -> Access:
        """The access ``presented`` (a token, or ``None``) grants."""
        if not self.needs_token:
            return Access(True)
        if not presented:
            return Access(False, reason="this hermes-memory ui needs its access token")
        assert self.token is not None
        if hmac.compare_digest(presented.encode(), self.token.encode()):
            return Access(True)
        from hermes_core.mcp.tokens import TokenStore

        try:
            record = TokenStore(self.home).verify(presented)
        except Exception:  # an unreadable token file grants nothing
            record = None
        if record is None:
            return Access(False, reason="unknown or revoked token")
        return Access(True, bound_user=record.user)

    def csrf_ok(self, presented: str | None) -> bool:
        return bool(presented) and hmac.compare_digest(str(presented).encode(), self.csrf.encode())


__all__ = ["COOKIE", "SECURITY_HEADERS", "Access", "Guard", "is_loopback"]
