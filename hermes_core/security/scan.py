"""Threat scanner: prompt-injection and exfiltration patterns, invisible unicode, credentials.

One pattern library (:mod:`hermes_core.security.patterns`) shared by every place where text
reaches a system prompt or a model:
built-in memory (``strict`` scope), context files, skills and recalled text — provider recall,
``session_search`` results, a provider's system-prompt block (``context`` scope).

Contract:

* Every pattern has an id and a scope; scopes are cumulative (``all`` ⊂ ``context`` ⊂
  ``strict``): scanning with ``strict`` applies every pattern, plus the credential detector
  (:mod:`hermes_core.security.secrets`), reported as ``secret_<kind>``.
* Invisible code points (the Unicode Default_Ignorable set and a few more, see
  :mod:`hermes_core.security.unicode`) are removed before matching and reported as
  ``invisible_unicode_U+XXXX``, first; the ordinary uses inside emoji and shaping scripts are
  removed but not reported.
* Matching is case-insensitive on NFKC-normalised text with look-alike Cyrillic/Greek letters
  folded to Latin, so full-width (``ｉｇｎｏｒｅ``) and mixed-script (``іgnоre``) spellings
  match; whitespace between CJK characters is ignored; letter-spaced words
  (``i g n o r e``, ``i.g.n.o.r.e``) are matched joined as well.
* The WHOLE text is scanned, in linear time: filler between keywords is bounded (at most 8
  words in English, a few characters in Chinese), every repetition is bounded, and every
  custom search visits each position a bounded number of times. Text longer than
  :data:`MAX_TEXT_CHARS` is refused outright as ``too_large_to_scan`` — in every path, since
  every path calls :func:`scan`.
* Injection families have Chinese phrasings under the same ids (``忽略之前的所有指令`` is
  ``prompt_injection``).
* Regexes are compiled on first use, never at import.
"""

from __future__ import annotations

import base64
import binascii
import functools
import re
import unicodedata
from dataclasses import dataclass
from typing import Final

from hermes_core.security.patterns import (
    PATTERN_IDS,
    PATTERNS,
    SCOPE_RANK,
    Scope,
    ThreatPattern,
    patterns_for,
)
from hermes_core.security.secrets import find_secrets, secret_block_message
from hermes_core.security.unicode import (
    fold_confusables,
    invisible_code_points,
    reveal_tags,
    strip_invisible,
)
from hermes_core.text import CJK_RANGES

MAX_SCAN_CHARS: Final = 65_536
"""The longest memory entry the snapshot shows (longer ones are blocked as too large); kept
for callers that window long files. :func:`scan` itself reads the whole text."""

MAX_TEXT_CHARS: Final = 1_000_000
"""Texts longer than this are not scanned but refused (``too_large_to_scan``)."""

TOO_LARGE: Final = "too_large_to_scan"

INVISIBLE_CHARS: Final[tuple[str, ...]] = (
    "\u200b",
    "\u200c",
    "\u200d",
    "\u2060",
    "\u2062",
    "\u2063",
    "\u2064",
    "\ufeff",
    "\u202a",
    "\u202b",
    "\u202c",
    "\u202d",
    "\u202e",
    "\u2066",
    "\u2067",
    "\u2068",
    "\u2069",
)
"""The spec's zero-width and bidi-control characters; every invisible code point of
:data:`hermes_core.security.unicode.INVISIBLE_RANGES` is flagged the same way."""


@dataclass(frozen=True)
class ScanResult:
    """Outcome of :func:`scan`.

    ``pattern_ids`` lists every hit (invisible characters first, as
    ``invisible_unicode_U+XXXX``); ``message`` is the memory-write refusal text for the first
    hit, empty when ``blocked`` is False.
    """

    blocked: bool
    pattern_ids: tuple[str, ...]
    message: str


@functools.cache
def _space_between_cjk() -> re.Pattern[str]:
    return re.compile(f"(?<=[{CJK_RANGES}])\\s+(?=[{CJK_RANGES}])")


@functools.cache
def _letter_spaced() -> re.Pattern[str]:
    # A letter, then at least three more each after ONE separator: "i g n o r e", "i.g.n".
    # Possessive, so a run is consumed once and never re-tried from inside.
    # Each letter stands alone (not followed by another letter), so "i.g.n.o.r.e all" stops
    # before "all".
    return re.compile(r"(?<![^\W_])[^\W\d_](?![^\W\d_])(?:[ .\-_*·•|/][^\W\d_](?![^\W\d_])){3,}+")


_SQUASHED: Final[tuple[tuple[str, Scope, str], ...]] = (
    (
        "prompt_injection",
        "all",
        r"(?:ignore|forget|disregard)(?:all|any|every)?(?:of)?(?:the|your|my)?"
        r"(?:previous|prior|above|earlier|preceding)(?:instructions?|prompts?|rules|directives"
        r"|guidelines)|(?:ignore|disregard)everything(?:above|before)",
    ),
    ("sys_prompt_override", "all", r"systemoverride|newsystemprompt|overridesystemprompt"),
    (
        "leak_system_prompt",
        "context",
        r"(?:reveal|show|print|output|repeat|display|leak|dump)(?:me)?(?:your|the)"
        r"(?:system|initial|hidden|original)(?:prompt|instructions|message)",
    ),
)


@functools.cache
def _squashed(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def normalize(text: str) -> str:
    """The text patterns are matched against: tag characters read as the ASCII they mirror
    (hidden "ASCII smuggling" text is matched too), other invisible code points removed,
    NFKC-folded,
    lower-cased, look-alike letters folded to Latin, whitespace between two CJK characters
    removed (Chinese needs no spaces, so ``忽 略 之 前 的 指 令`` is ``忽略之前的指令``)."""
    folded = unicodedata.normalize("NFKC", strip_invisible(reveal_tags(text))).lower()
    if not folded.isascii():
        folded = _strip_latin_marks(folded)
    return _space_between_cjk().sub("", fold_confusables(folded))


@functools.cache
def _latin_mark() -> re.Pattern[str]:
    # combining diacritics (U+0300–U+036F, U+1AB0–U+1AFF, U+1DC0–U+1DFF, U+20D0–U+20FF,
    # U+FE20–U+FE2F) after a Latin letter: "ignóre", "instruc\u0308tions"
    marks = r"\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"
    return re.compile(rf"(?<=[a-z])[{marks}]+")


def _strip_latin_marks(folded: str) -> str:
    """Accents read as the bare Latin letter (``ignóre`` → ``ignore``): NFD, combining marks
    after an ASCII letter dropped, recomposed. Other scripts keep their marks."""
    if not any(ord(ch) >= 0xC0 for ch in folded):
        return folded
    decomposed = unicodedata.normalize("NFD", folded)
    stripped = _latin_mark().sub("", decomposed)
    return unicodedata.normalize("NFC", stripped) if stripped != decomposed else folded


def invisible_ids(text: str) -> list[str]:
    """``invisible_unicode_U+XXXX`` for each distinct hidden invisible code point, in order of
    first occurrence (at most 16)."""
    return [f"invisible_unicode_U+{code:04X}" for code in invisible_code_points(text)]


_LEET: Final = str.maketrans("013457@$", "oieastas")


@functools.cache
def _intra_word() -> re.Pattern[str]:
    # a separator inside a word: "ig-nore", "pre.vious", "in_struc*tions"
    return re.compile(r"(?<=[a-z])[-_.·*'’](?=[a-z])")


@functools.cache
def _leet_word() -> re.Pattern[str]:
    # a word mixing letters with leet digits/symbols: "1gn0r3", "pr3v10u5", "@ll"
    return re.compile(r"(?<![\w@$])(?=[\w@$]*[a-z])(?=[\w@$]*[013457@$])[\w@$]{2,32}+")


def variant_reading(folded: str) -> str:
    """A second reading of ``folded``: letter-spaced runs joined (``i g n o r e`` →
    ``ignore``), separators inside words dropped (``ig-nore``), leetspeak words read as
    letters (``1gn0r3``). Matched in addition to ``folded``; ``folded`` itself when none of
    those occur."""

    def join(match: re.Match[str]) -> str:
        return "".join(ch for ch in match.group() if ch.isalpha())

    variant = _intra_word().sub("", _letter_spaced().sub(join, folded))
    if _leet_word().search(variant):
        variant = _leet_word().sub(lambda m: m.group().translate(_LEET), variant)
    return variant


def find_threats(text: str, scope: Scope = "strict") -> list[str]:
    """Every threat id found in ``text`` at ``scope``: invisible characters, credentials
    (``strict`` only), then patterns. Text over :data:`MAX_TEXT_CHARS` gives
    ``[too_large_to_scan]``."""
    if scope not in SCOPE_RANK:
        raise ValueError(f"unknown scan scope {scope!r}; use one of: all, context, strict")
    if len(text) > MAX_TEXT_CHARS:
        return [TOO_LARGE]
    ids = invisible_ids(text)
    if scope == "strict":
        plain = unicodedata.normalize("NFKC", strip_invisible(text))
        ids.extend(dict.fromkeys(f"secret_{m.kind}" for m in find_secrets(plain)))
    folded = normalize(text)
    patterns = patterns_for(scope)
    hits = {p.id for p in patterns if p.search(folded)}
    variant = variant_reading(folded)
    if variant != folded:
        hits.update(p.id for p in patterns if p.id not in hits and p.search(variant))
        rank = SCOPE_RANK[scope]
        for pattern_id, pattern_scope, rx in _SQUASHED:
            if SCOPE_RANK[pattern_scope] <= rank and _squashed(rx).search(variant):
                hits.add(pattern_id)
    if not hits:  # instructions hidden in base64 or written backwards
        for reading in hidden_readings(text):
            hits.update(p.id for p in patterns if p.search(reading))
    ids.extend(p.id for p in patterns if p.id in hits)
    return ids


_B64_RUN = re.compile(r"[A-Za-z0-9+/_-]{16,8192}={0,2}")
MAX_DECODED_RUNS = 16
"""Base64 candidates decoded per text (the longest-first order is not needed: the first ones)."""
_B64_ALT = str.maketrans("-_", "+/")


def hidden_readings(text: str) -> list[str]:
    """Other readings of ``text`` an instruction may hide in, normalised for matching: each
    plausible base64 run (16+ characters, at most :data:`MAX_DECODED_RUNS` of them) that
    decodes to printable UTF-8 text with letters — images, hashes and binary decode to
    bytes that are not text and are skipped — and the whole text reversed."""
    readings: list[str] = []
    found = 0
    for match in _B64_RUN.finditer(text):
        if found >= MAX_DECODED_RUNS:
            break
        run = match.group(0).translate(_B64_ALT).rstrip("=")
        if len(run) % 4 == 1:
            continue
        found += 1
        try:
            decoded = base64.b64decode(run + "=" * (-len(run) % 4), validate=True).decode("utf-8")
        except (binascii.Error, ValueError):
            continue
        printable = sum(ch.isprintable() or ch in "\n\t" for ch in decoded)
        if printable >= 0.95 * len(decoded) and sum(ch.isalpha() for ch in decoded) >= 8:
            readings.append(normalize(decoded))
    readings.append(normalize(text[::-1]))
    return readings


def memory_block_message(pattern_id: str) -> str:
    """The memory-write refusal text for one hit."""
    if pattern_id.startswith("invisible_unicode_"):
        code = pattern_id.removeprefix("invisible_unicode_")
        return f"Blocked: content contains invisible unicode character {code} (possible injection)."
    if pattern_id.startswith("secret_"):
        return secret_block_message(pattern_id.removeprefix("secret_"))
    if pattern_id == TOO_LARGE:
        return (
            f"Blocked: content is too large to scan (over {MAX_TEXT_CHARS:,} characters). "
            "Store a shorter text."
        )
    return (
        f"Blocked: content matches threat pattern '{pattern_id}'. Content is injected into the "
        "system prompt and must not contain injection or exfiltration payloads."
    )


def scan(text: str, scope: Scope = "strict") -> ScanResult:
    """Scan ``text`` at ``scope``. Never raises for any string input."""
    ids = tuple(find_threats(text, scope))
    if not ids:
        return ScanResult(False, (), "")
    return ScanResult(True, ids, memory_block_message(ids[0]))


def context_block_message(filename: str, ids: list[str] | tuple[str, ...]) -> str:
    """The placeholder that replaces a whole blocked context file or skill."""
    return (
        f"[BLOCKED: {filename} contained potential prompt injection ({', '.join(ids)}). "
        "Content not loaded.]"
    )


__all__ = [
    "INVISIBLE_CHARS",
    "MAX_SCAN_CHARS",
    "MAX_TEXT_CHARS",
    "PATTERNS",
    "PATTERN_IDS",
    "TOO_LARGE",
    "ScanResult",
    "Scope",
    "ThreatPattern",
    "context_block_message",
    "find_threats",
    "hidden_readings",
    "invisible_ids",
    "memory_block_message",
    "normalize",
    "patterns_for",
    "scan",
]
