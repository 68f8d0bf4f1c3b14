"""Egress redaction: credentials masked in anything that leaves the process.

:func:`redact_payload` masks every secret :func:`hermes_core.security.secrets.find_secrets`
finds across one hand-off (several values: strings, mappings, lists, tuples, nested) as
:data:`REDACTED`, everywhere in the hand-off; :func:`redact` does one string. Inputs are never
mutated; ``data:`` URLs pass through. (:mod:`hermes_core.context` re-exports both.)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from hermes_core.security.secrets import find_secrets
from hermes_core.security.unicode import fold_width, invisible_regex, strip_invisible

REDACTED = "[redacted]"
_DATA_URL = re.compile(r"data:[\w/+.-]+;base64,[A-Za-z0-9+/=]+")


def _find_secrets(text: str) -> set[str]:
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
    return found


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


def _apply(value: Any, secrets: list[str]) -> Any:
    if isinstance(value, str):
        if invisible_regex().search(value) is not None:
            plain = strip_invisible(value)  # "ghp\u200b_…": the secret was found in `plain`
            if any(secret in plain and secret not in value for secret in secrets):
                value = plain
        for secret in secrets:
            value = value.replace(secret, REDACTED)
        return value
    if isinstance(value, Mapping):
        return {_apply(key, secrets): _apply(item, secrets) for key, item in value.items()}
    if isinstance(value, list):
        return [_apply(item, secrets) for item in value]
    if isinstance(value, tuple):
        return tuple(_apply(item, secrets) for item in value)
    return value


def redact_payload(*values: Any) -> tuple[Any, ...]:
    """Redact secrets across one hand-off (several values), returning new values.

    A secret found anywhere in the hand-off (every format of
    :func:`hermes_core.security.secrets.find_secrets`: provider keys and tokens, private-key
    blocks, passwords in URLs, ``Authorization:`` headers, JWTs, ``key=value`` assignments in
    English and Chinese) is masked as ``[redacted]`` everywhere in it, including places where
    it appears without its telltale prefix. ``data:`` URLs pass through. Inputs are never
    mutated.
    """
    strings: list[str] = []
    for value in values:
        _collect_strings(value, strings)
    secrets: set[str] = set()
    for text in strings:
        secrets |= _find_secrets(text)
    if not secrets:
        return values
    ordered = sorted(secrets, key=len, reverse=True)
    return tuple(_apply(value, ordered) for value in values)


def redact(text: str) -> str:
    """Redact secrets in one string (see :func:`redact_payload`)."""
    (clean,) = redact_payload(text)
    return str(clean)


__all__ = ["REDACTED", "redact", "redact_payload"]
