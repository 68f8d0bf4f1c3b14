"""One redaction for everything hermes-core shows: CLI text, ``--json``, logs, errors.

Contract:

* :func:`redact_text` masks, wherever they occur in a text: the password of any URL
  (``scheme://user:PASSWORD@host``, also ``scheme://:PASSWORD@host``), ``password=…``
  conninfo values, every credential :func:`hermes_core.security.secrets.find_secrets` knows
  (provider keys, tokens, ``Authorization`` headers, ``api_key=…`` assignments in English and
  Chinese) and every value registered with :func:`remember_secrets` (the secret-bearing
  settings of the home: ``llm.api_key``, ``sessions.url``'s password, provider keys in
  ``.env``), even when it has no telltale shape. A masked value reads :data:`MASK`.
* :func:`redact_data` applies the same to every string (keys and values) of a JSON-like
  value; the input is never mutated.
* :func:`secret_values` lists the secrets inside a settings mapping (config.yaml, ``.env``,
  the environment): values of secret-named keys and passwords inside URLs.
* The registry is process-wide and only grows; values shorter than 4 characters are never
  registered (masking them would shred ordinary text).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import unquote

from hermes_core.security.secrets import find_secrets, is_placeholder

MASK = "***"
MIN_SECRET_LEN = 4

_URL_PASSWORD = re.compile(
    r"(?P<head>[A-Za-z][A-Za-z0-9+.\-]{0,30}://[^\s/@:\"'<>]{0,256}:)(?P<pw>[^\s/@\"'<>]{1,512})@"
)
_KV_PASSWORD = re.compile(r"(?i)(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&]+)")
_SECRET_KEY = re.compile(
    r"(?i)(?:^|[_\-.])(?:api[_-]?key|apikey|token|secret|password|passwd|passphrase|"
    r"credentials?|private[_-]?key|access[_-]?key|secret[_-]?key)$"
)
"""A secret-named key ends in the secret word (``HONCHO_API_KEY``, ``auth_token``): names
that merely start with one (``token_budget``) or mention one (``SSH_AUTH_SOCK``, ``PWD``)
are not secrets."""

_lock = threading.Lock()
_registered: set[str] = set()
_ordered: tuple[str, ...] = ()


def is_secret_key(name: str) -> bool:
    """True when a settings key or environment variable name holds a secret
    (``api_key``, ``HONCHO_API_KEY``, ``password``, ``auth_token``, …)."""
    if not name:
        return False
    return _SECRET_KEY.search(name) is not None


def _url_passwords(text: str) -> list[str]:
    found = []
    for match in _URL_PASSWORD.finditer(text):
        password = match.group("pw")
        found.append(password)
        decoded = unquote(password)
        if decoded != password:
            found.append(decoded)
    found.extend(m.group(2).strip("'") for m in _KV_PASSWORD.finditer(text))
    return found


def secret_values(settings: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> list[str]:
    """The secrets inside a (nested) settings mapping: every string value of a secret-named
    key and every password inside a URL or conninfo value (see the module contract)."""
    items = settings.items() if isinstance(settings, Mapping) else settings
    found: list[str] = []
    stack: list[tuple[str, Any]] = [(str(k), v) for k, v in items]
    while stack:
        key, value = stack.pop()
        if isinstance(value, Mapping):
            stack.extend((str(k), v) for k, v in value.items())
        elif isinstance(value, list | tuple):
            stack.extend((key, v) for v in value)
        elif isinstance(value, str):
            if is_secret_key(key) and not is_placeholder(value.strip()):
                found.append(value.strip())
            found.extend(_url_passwords(value))
    return [v for v in found if len(v) >= MIN_SECRET_LEN]


def remember_secrets(values: Iterable[str]) -> None:
    """Register secret values every later :func:`redact_text` masks (process-wide)."""
    global _ordered
    fresh = {v for v in values if isinstance(v, str) and len(v) >= MIN_SECRET_LEN}
    with _lock:
        if fresh <= _registered:
            return
        _registered.update(fresh)
        _ordered = tuple(sorted(_registered, key=len, reverse=True))


def redact_text(text: str) -> str:
    """``text`` with every secret masked as :data:`MASK` (see the module contract)."""
    if not text:
        return text
    secrets = set(_url_passwords(text))
    secrets.update(m.value for m in find_secrets(text, strict_shape=False))
    out = _URL_PASSWORD.sub(lambda m: m.group("head") + MASK + "@", text)
    out = _KV_PASSWORD.sub(lambda m: m.group(1) + MASK, out)
    for secret in sorted(secrets, key=len, reverse=True):
        if len(secret) >= MIN_SECRET_LEN and secret != MASK:
            out = out.replace(secret, MASK)
    for secret in _ordered:
        if secret in out:
            out = out.replace(secret, MASK)
    return out


def redact_data(value: Any) -> Any:
    """:func:`redact_text` applied to every string of a JSON-like value (a new value)."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, Mapping):
        return {redact_data(k): redact_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_data(v) for v in value]
    return value


__all__ = [
    "MASK",
    "is_secret_key",
    "redact_data",
    "redact_text",
    "remember_secrets",
    "secret_values",
]
