"""Text bound for a terminal, with every control character made visible.

Contract:

* :func:`visible` maps each C0 control (U+0000–U+001F) to its Control Pictures symbol
  (ESC → ``␛``, NUL → ``␀``), DEL to ``␡``, each C1 control (U+0080–U+009F, e.g. the
  one-byte CSI U+009B) and each bidirectional override/isolate (U+202A–U+202E,
  U+2066–U+2069) to ``�``. The mapping is one character for one, so the length (and any
  style spans laid over the text) stay the same. ``keep_newlines`` keeps LF and TAB
  (messages written by hermes-core itself); user values (names, titles, ids) are shown with
  ``keep_newlines=False`` so they cannot start a fake line either.
* No escape sequence (ANSI CSI/OSC, hyperlinks, title changes, clipboard writes) survives
  :func:`visible`: every one starts with ESC or a C1 control.
"""

from __future__ import annotations

import re

_BIDI = "\u202a-\u202e\u2066-\u2069"
_ALL = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI}]")
_NO_NEWLINES = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}]")


def _picture(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    if code < 0x20:
        return chr(0x2400 + code)
    if code == 0x7F:
        return "\u2421"
    return "\ufffd"


def visible(text: str, *, keep_newlines: bool = True) -> str:
    """``text`` with control characters made visible (see the module contract)."""
    pattern = _NO_NEWLINES if keep_newlines else _ALL
    return pattern.sub(_picture, text) if pattern.search(text) else text


def has_controls(text: str) -> bool:
    """True when :func:`visible` would change ``text`` (newlines included)."""
    return _ALL.search(text) is not None


__all__ = ["has_controls", "visible"]
