"""Bearer tokens of the MCP server's HTTP transport: each token maps to one user id.

A token is ``hmcp_<id>_<secret>``: ``<id>`` (12 hex digits) names the record, ``<secret>``
(43 URL-safe characters, 256 random bits) is never stored. The store keeps, per token, a
random 16-byte salt and ``sha256(salt || secret)``; verification recomputes the digest and
compares it in constant time. The file is ``$HERMES_HOME/mcp_tokens.json``, written
atomically with mode 0600 under a sibling lock, and read again whenever it changed, so a
``hermes-memory mcp token revoke`` takes effect on the next request of a running server.

No third-party import: the token commands work without the ``mcp`` extra.
"""

from __future__ import annotations

import builtins
import hashlib
import hmac
import json
import logging
import re
import secrets
import threading
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from hermes_core.errors import ConfigError
from hermes_core.fsutil import UnsafeFileError, atomic_write_text, file_lock, read_regular_text

TOKENS_FILE = "mcp_tokens.json"
PREFIX = "hmcp_"
_TOKEN = re.compile(r"^hmcp_([0-9a-f]{12})_([A-Za-z0-9_-]{20,200})$")
MAX_TOKEN_CHARS = 300
MAX_TOKEN_FILE_BYTES = 4 * 1024 * 1024
"""A token file larger than this is refused unread (thousands of tokens are ~1 MB)."""

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class TokenRecord:
    """One stored token (never the secret): who it is for and how to check it."""

    id: str
    user: str
    salt: str
    digest: str
    created_at: float
    label: str = ""

    def public(self) -> dict[str, Any]:
        """What ``hermes-memory mcp token list`` shows: no salt, no digest."""
        return {
            "id": self.id,
            "user": self.user,
            "label": self.label,
            "created_at": self.created_at,
        }


@dataclass(frozen=True, slots=True)
class IssuedToken:
    """A new token: ``token`` is shown once and never again."""

    token: str
    record: TokenRecord


def _digest(salt: bytes, secret: str) -> str:
    return hashlib.sha256(salt + secret.encode("utf-8")).hexdigest()


class TokenStore:
    """The tokens of one Hermes home. Thread-safe; cheap to call per request (the file is
    parsed again only when its modification time or size changed)."""

    def __init__(self, home: Path) -> None:
        self.path = Path(home) / TOKENS_FILE
        self._lock = threading.Lock()
        self._stamp: tuple[int, int, int] | None = None
        self._records: dict[str, TokenRecord] = {}

    # -- reading

    def _load(self) -> dict[str, TokenRecord]:
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            self._stamp, self._records = None, {}
            return {}
        stamp = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        if stamp == self._stamp:
            return self._records
        try:
            text = read_regular_text(
                self.path, max_bytes=MAX_TOKEN_FILE_BYTES, what="MCP token file"
            )
        except UnsafeFileError as exc:
            if self._stamp is not None:  # a FIFO/huge file swapped in: keep the last good set
                log.warning("%s; still using the tokens read before", exc.strerror)
                return self._records
            raise ConfigError(
                f"{exc.strerror}; then issue tokens with `hermes-memory mcp token add --user <id>`"
            ) from exc
        try:
            data = json.loads(text)
            rows = data["tokens"] if isinstance(data, dict) else None
            if not isinstance(rows, list):
                raise ValueError("no 'tokens' list")
            records = {str(row["id"]): TokenRecord(**row) for row in rows}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ConfigError(
                f"{self.path} could not be read ({exc}); fix it or move it aside and issue new "
                "tokens with `hermes-memory mcp token add --user <id>`"
            ) from exc
        self._stamp, self._records = stamp, records
        return records

    def list(self) -> list[TokenRecord]:
        """Every token, oldest first."""
        with self._lock:
            return sorted(self._load().values(), key=lambda r: (r.created_at, r.id))

    def verify(self, token: str) -> TokenRecord | None:
        """The record of a valid ``token``; ``None`` for anything else (malformed, unknown,
        revoked, wrong secret). Never raises for bad input; an unreadable store refuses all."""
        if not isinstance(token, str) or len(token) > MAX_TOKEN_CHARS:
            return None
        match = _TOKEN.match(token.strip())
        if match is None:
            return None
        token_id, secret = match.groups()
        try:
            with self._lock:
                record = self._load().get(token_id)
        except ConfigError:
            return None
        if record is None:
            return None
        try:
            salt = bytes.fromhex(record.salt)
        except ValueError:
            return None
        if not hmac.compare_digest(_digest(salt, secret), record.digest):
            return None
        return record

    # -- writing

    def _write(self, records: Iterable[TokenRecord]) -> None:
        rows = [asdict(record) for record in records]
        text = json.dumps({"version": 1, "tokens": rows}, ensure_ascii=False, indent=2)
        atomic_write_text(self.path, text + "\n")

    def add(self, user: str, label: str = "") -> IssuedToken:
        """Issue a token for ``user`` (any non-empty id, Chinese included)."""
        if not isinstance(user, str) or not user.strip():
            raise ConfigError("a token needs a user id: `hermes-memory mcp token add --user <id>`")
        if len(user) > 256:
            raise ConfigError("user ids are at most 256 characters")
        secret = secrets.token_urlsafe(32)
        salt = secrets.token_bytes(16)
        with self._lock, file_lock(self.path):
            self._stamp = None
            records = self._load()
            token_id = secrets.token_hex(6)
            while token_id in records:
                token_id = secrets.token_hex(6)
            record = TokenRecord(
                id=token_id,
                user=user,
                salt=salt.hex(),
                digest=_digest(salt, secret),
                created_at=time.time(),
                label=label,
            )
            self._write([*records.values(), record])
            self._stamp = None
        return IssuedToken(f"{PREFIX}{token_id}_{secret}", record)

    def revoke(
        self, token_id: str | None = None, *, user: str | None = None
    ) -> builtins.list[TokenRecord]:
        """Remove the token ``token_id`` (an id, or a whole token), or every token of
        ``user``. Returns what was removed (empty when nothing matched)."""
        if token_id is not None:
            match = _TOKEN.match(token_id.strip())
            if match is not None:
                token_id = match.group(1)
        with self._lock, file_lock(self.path):
            self._stamp = None
            records = self._load()
            gone = [
                r
                for r in records.values()
                if r.id == token_id or (user is not None and r.user == user)
            ]
            if gone:
                keep = [r for r in records.values() if r not in gone]
                self._write(keep)
            self._stamp = None
        return gone


__all__ = ["PREFIX", "TOKENS_FILE", "IssuedToken", "TokenRecord", "TokenStore"]
