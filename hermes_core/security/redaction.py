"""THE redaction: credentials masked in everything that leaves the process — what hermes-core
shows (CLI text, ``--json``, logs, errors) and what it hands to a model or a provider.

One set of patterns, found by :func:`_secrets_in`:

* every credential :func:`hermes_core.security.secrets.find_secrets` knows (provider keys and
  tokens, private-key blocks, ``Authorization`` headers, JWTs, ``api_key=…`` assignments in
  English and Chinese), also when split by invisible characters or written in full-width
  forms (``ｓｋ－ａｂｃ…``: found in ASCII, the original masked);
* the password of any URL (``scheme://user:PASSWORD@host``, also ``scheme://:PASSWORD@host``,
  percent-decoded too) and ``password=…`` conninfo values, masked in place whatever their
  length;
* every value registered with :func:`remember_secrets` (the secret-bearing settings of the
  home: ``llm.api_key``, ``sessions.url``'s password, provider keys in ``.env``), even when it
  has no telltale shape.

``data:`` URLs pass through (base64 is not a key). A secret found anywhere in one hand-off is
masked everywhere in it, including places where it appears without its telltale prefix.
Inputs are never mutated.

Two masks, one per audience: :func:`redact_text` / :func:`redact_data` (what a person sees)
write :data:`MASK` (``***``); :func:`redact` / :func:`redact_payload` (what a model or a
provider receives; :mod:`hermes_core.context` re-exports them) write :data:`REDACTED`
(``[redacted]``). :func:`secret_values` lists the secrets inside a settings mapping. The
registry is process-wide and only grows; values shorter than 4 characters are never
registered (masking them would shred ordinary text).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import unquote

from hermes_core.security.secrets import find_secrets, is_placeholder
from hermes_core.security.unicode import fold_width, invisible_regex, strip_invisible

MASK = "***"
"""What a person sees in place of a secret."""

REDACTED = "[redacted]"
"""What a model or a provider receives in place of a secret."""

MIN_SECRET_LEN = 4

_DATA_URL = re.compile(r"data:[\w/+.-]+;base64,[A-Za-z0-9+/=]+")

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


def _registered_in(text: str) -> set[str]:
    return {secret for secret in _ordered if secret in text}


def _secrets_in(text: str) -> set[str]:
    """Every secret value in ``text`` (see the module contract), as it appears there."""
    if invisible_regex().search(text) is not None:
        text = strip_invisible(text)  # a secret split by zero-width characters is one secret
    protected = [m.span() for m in _DATA_URL.finditer(text)] if "data:" in text else []

    def inside_data_url(start: int) -> bool:
        return any(a <= start < b for a, b in protected)

    found = {
        match.value
        for match in find_secrets(text, strict_shape=False)
        if not inside_data_url(match.start)
    }
    folded = fold_width(text)
    if folded != text:  # "ｓｋ－ａｂｃ…": find it in ASCII, mask the full-width original
        found |= {
            text[match.start : match.start + len(match.value)]
            for match in find_secrets(folded, strict_shape=False)
            if not inside_data_url(match.start)
        }
    found.update(v for v in _url_passwords(text) if len(v) >= MIN_SECRET_LEN)
    return found | _registered_in(text)


def _has_password_field(text: str) -> bool:
    return _URL_PASSWORD.search(text) is not None or _KV_PASSWORD.search(text) is not None


def _collect_strings(value: Any, into: list[str]) -> None:
    if isinstance(value, str):
        into.append(value)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            _collect_strings(key, into)
            _collect_strings(item, into)
    elif isinstance(value, list | tuple):
        for item in value:
            _collect_strings(item, into)


def _apply(value: Any, secrets: list[str], mask: str) -> Any:
    if isinstance(value, str):
        if invisible_regex().search(value) is not None:
            plain = strip_invisible(value)  # "ghp\u200b_…": the secret was found in `plain`
            if any(secret in plain and secret not in value for secret in secrets):
                value = plain
        value = _URL_PASSWORD.sub(lambda m: m.group("head") + mask + "@", value)
        value = _KV_PASSWORD.sub(lambda m: m.group(1) + mask, value)
        for secret in secrets:
            if secret != mask:
                value = value.replace(secret, mask)
        return value
    if isinstance(value, Mapping):
        return {
            _apply(key, secrets, mask): _apply(item, secrets, mask) for key, item in value.items()
        }
    if isinstance(value, list):
        return [_apply(item, secrets, mask) for item in value]
    if isinstance(value, tuple):
        return tuple(_apply(item, secrets, mask) for item in value)
    return value


def redact_payload(*values: Any, mask: str = REDACTED) -> tuple[Any, ...]:
    """Redact secrets across one hand-off (several values: strings, mappings, lists, tuples,
    nested), returning new values: a secret found anywhere in it is masked as ``mask``
    everywhere in it (see the module contract). Values without a secret come back as they
    are."""
    strings: list[str] = []
    for value in values:
        _collect_strings(value, strings)
    secrets: set[str] = set()
    fields = False
    for text in strings:
        secrets |= _secrets_in(text)
        fields = fields or _has_password_field(text)
    if not secrets and not fields:
        return values
    ordered = sorted(secrets, key=len, reverse=True)
    return tuple(_apply(value, ordered, mask) for value in values)


def redact(text: str) -> str:
    """One string handed to a model or a provider, secrets masked as :data:`REDACTED`."""
    (clean,) = redact_payload(text)
    return str(clean)


def redact_text(text: str) -> str:
    """One string a person sees, secrets masked as :data:`MASK`."""
    if not text:
        return text
    (clean,) = redact_payload(text, mask=MASK)
    return str(clean)


def redact_data(value: Any) -> Any:
    """A JSON-like value a person sees (every string, keys too), secrets masked as
    :data:`MASK` everywhere in it (a new value)."""
    (clean,) = redact_payload(value, mask=MASK)
    return clean


__all__ = [
    "MASK",
    "REDACTED",
    "is_secret_key",
    "redact",
    "redact_data",
    "redact_payload",
    "redact_text",
    "remember_secrets",
    "secret_values",
]
