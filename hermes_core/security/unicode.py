"""Invisible code points and look-alike letters: what the scanner removes, flags and folds.

Contract:

* :data:`INVISIBLE_RANGES` is the Unicode ``Default_Ignorable_Code_Point`` set (soft hyphen,
  combining grapheme joiner, Arabic letter mark, Hangul fillers, Khmer inherent vowels,
  Mongolian selectors and vowel separator, zero-width characters, bidi marks, embeddings,
  overrides and isolates, invisible operators, variation selectors incl. the supplementary
  ones, tag characters, noncharacter-like reserved default ignorables) plus the interlinear
  annotation controls U+FFF9–U+FFFB, which hide text as well.
* :func:`strip_invisible` removes every one of them (before any matching); linear time.
* :func:`invisible_code_points` lists the ones that are *hidden* — every occurrence except
  the few legitimate uses inside ordinary text: one emoji variation selector after a visible
  non-letter (``❤️``, keycaps ``1️⃣``), a zero-width joiner between two emoji (``👩‍💻``),
  an emoji flag tag sequence (``🏴󠁧󠁢󠁳󠁣󠁴󠁿``), one ideographic variation selector after a CJK
  ideograph, a Mongolian selector after a Mongolian letter, and ZWJ/ZWNJ between two letters
  of a script that uses them for shaping (Arabic/Persian, Indic, Myanmar, Khmer). Runs of
  selectors, joiners next to ASCII letters and any other invisible character are hidden.
* :func:`fold_confusables` maps common Cyrillic, Greek and Armenian look-alikes of Latin
  lower-case letters to Latin (for matching only; text is never changed in place).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import Final

INVISIBLE_RANGES: Final[tuple[tuple[int, int], ...]] = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFFB),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
"""Inclusive code-point ranges treated as invisible (see the module docstring)."""

_EMOJI_VS = (0xFE0E, 0xFE0F)
_ZW_JOINERS = (0x200C, 0x200D)
_SHAPING_SCRIPTS = (
    (0x0600, 0x06FF),  # Arabic, Persian, Urdu
    (0x0750, 0x077F),
    (0x08A0, 0x08FF),
    (0xFB50, 0xFDFF),
    (0xFE70, 0xFEFC),
    (0x0900, 0x0DFF),  # Devanagari … Sinhala
    (0x1000, 0x109F),  # Myanmar
    (0x1780, 0x17FF),  # Khmer
)
_FLAG_TAG_MAX = 6


def _class() -> str:
    parts = []
    for lo, hi in INVISIBLE_RANGES:
        parts.append(
            re.escape(chr(lo)) if lo == hi else f"{re.escape(chr(lo))}-{re.escape(chr(hi))}"
        )
    return "[" + "".join(parts) + "]"


@functools.cache
def invisible_regex() -> re.Pattern[str]:
    """One character class of every invisible code point (compiled on first use)."""
    return re.compile(_class())


def is_invisible(char: str) -> bool:
    """True when ``char`` is in :data:`INVISIBLE_RANGES`."""
    code = ord(char)
    return any(lo <= code <= hi for lo, hi in INVISIBLE_RANGES)


def strip_invisible(text: str) -> str:
    """``text`` without any invisible code point."""
    return invisible_regex().sub("", text)


def _in(code: int, ranges: tuple[tuple[int, int], ...]) -> bool:
    return any(lo <= code <= hi for lo, hi in ranges)


def _emojiish(char: str) -> bool:
    """A visible symbol an emoji presentation selector or joiner may follow or join."""
    code = ord(char)
    if 0x1F3FB <= code <= 0x1F3FF:  # skin-tone modifiers
        return True
    return unicodedata.category(char) in ("So", "Sk", "Sm") or code in (0x20E3,)


def _is_cjk_ideograph(code: int) -> bool:
    return 0x3400 <= code <= 0x9FFF or 0x20000 <= code <= 0x3FFFF or 0xF900 <= code <= 0xFAFF


def _legitimate(text: str, index: int) -> bool:
    """Is the invisible character at ``index`` one of the ordinary uses (module docstring)?"""
    code = ord(text[index])
    prev = text[index - 1] if index > 0 else ""
    nxt = text[index + 1] if index + 1 < len(text) else ""
    prev_code = ord(prev) if prev else -1
    if 0xE0020 <= code <= 0xE007E:
        return _flag_tag(text, index)
    if code == 0xE007F:
        return 0xE0020 <= prev_code <= 0xE007E and _flag_tag(text, index - 1)
    if prev and is_invisible(prev) and not (code == 0x200D and prev_code == 0xFE0F):
        return False
    if _EMOJI_VS[0] <= code <= _EMOJI_VS[1]:
        # text/emoji presentation: after a symbol or punctuation (❤️ ‼️ 〰️), a keycap base
        # (1️⃣ #️⃣) or ℹ️; never after a letter or ideograph
        if not prev or prev.isspace():
            return False
        if prev.isascii():
            return prev in "0123456789#*"
        return unicodedata.category(prev)[0] in "SP" or prev == "\u2139"
    if 0xFE00 <= code <= 0xFE0D:
        return bool(prev) and not prev.isascii() and not prev.isspace()
    if 0xE0100 <= code <= 0xE01EF:
        return _is_cjk_ideograph(prev_code)
    if code in (0x180B, 0x180C, 0x180D, 0x180F):
        return 0x1820 <= prev_code <= 0x18AA
    if code in _ZW_JOINERS:
        if not prev or not nxt:
            return False
        if code == 0x200D and (_emojiish(prev) or prev_code == 0xFE0F) and _emojiish(nxt):
            return True
        return _in(prev_code, _SHAPING_SCRIPTS) and _in(ord(nxt), _SHAPING_SCRIPTS)
    return False


def _flag_tag(text: str, index: int) -> bool:
    """Is ``text[index]`` inside ``🏴`` + 1–6 tag letters/digits + CANCEL TAG?"""
    start = index
    while start > 0 and 0xE0020 <= ord(text[start - 1]) <= 0xE007E:
        start -= 1
        if index - start > _FLAG_TAG_MAX:
            return False
    if start == 0 or ord(text[start - 1]) != 0x1F3F4:
        return False
    end = index
    while end < len(text) and 0xE0020 <= ord(text[end]) <= 0xE007E:
        end += 1
        if end - start > _FLAG_TAG_MAX:
            return False
    if end >= len(text) or ord(text[end]) != 0xE007F or end == start:
        return False
    return all(
        0xE0030 <= ord(c) <= 0xE0039 or 0xE0061 <= ord(c) <= 0xE007A for c in text[start:end]
    )


def invisible_code_points(text: str, limit: int = 16) -> list[int]:
    """Distinct hidden invisible code points of ``text`` in order of first occurrence (at most
    ``limit``). Linear: each candidate looks at a bounded neighbourhood."""
    found: dict[int, None] = {}
    for match in invisible_regex().finditer(text):
        code = ord(match.group())
        if code in found or _legitimate(text, match.start()):
            continue
        found[code] = None
        if len(found) >= limit:
            break
    return list(found)


@functools.cache
def _tag_regex() -> re.Pattern[str]:
    return re.compile("[\U000e0020-\U000e007e]")


@functools.cache
def _tag_table() -> dict[int, int]:
    return {code: code - 0xE0000 for code in range(0xE0020, 0xE007F)}


def reveal_tags(text: str) -> str:
    """``text`` with tag characters U+E0020–U+E007E replaced by the ASCII they mirror (a
    hidden instruction spelled in tags becomes visible to the matcher)."""
    if _tag_regex().search(text) is None:
        return text
    return text.translate(_tag_table())


_CONFUSABLES: Final = {
    # Cyrillic
    "а": "a",
    "в": "b",
    "с": "c",
    "ԁ": "d",
    "е": "e",
    "ё": "e",
    "һ": "h",
    "і": "i",
    "ї": "i",
    "ј": "j",
    "к": "k",
    "ӏ": "l",
    "м": "m",
    "н": "h",
    "о": "o",
    "р": "p",
    "ԛ": "q",
    "г": "r",
    "ѕ": "s",
    "т": "t",
    "и": "u",
    "ѵ": "v",
    "ԝ": "w",
    "х": "x",
    "у": "y",
    # Greek
    "α": "a",
    "β": "b",
    "ε": "e",
    "η": "n",
    "ι": "i",
    "κ": "k",
    "ν": "v",
    "ο": "o",
    "ρ": "p",
    "τ": "t",
    "υ": "u",
    "χ": "x",
    "γ": "y",
    # Armenian and Latin extensions
    "օ": "o",
    "ս": "u",
    "ց": "g",
    "ո": "n",
    "ı": "i",
    "ɡ": "g",
    "ɑ": "a",
    "ɩ": "i",
    "ʏ": "y",
    # Latin small capitals and phonetic letters (ɪɢɴᴏʀᴇ reads as "ignore")
    "ᴀ": "a",
    "ʙ": "b",
    "ᴄ": "c",
    "ᴅ": "d",
    "ᴇ": "e",
    "ꜰ": "f",
    "ɢ": "g",
    "ʜ": "h",
    "ɪ": "i",
    "ᴊ": "j",
    "ᴋ": "k",
    "ʟ": "l",
    "ᴍ": "m",
    "ɴ": "n",
    "ᴏ": "o",
    "ᴘ": "p",
    "ʀ": "r",
    "ꜱ": "s",
    "ᴛ": "t",
    "ᴜ": "u",
    "ᴠ": "v",
    "ᴡ": "w",
    "ᴢ": "z",
}


@functools.cache
def _confusable_table() -> dict[int, str]:
    return str.maketrans(_CONFUSABLES)


def confusables_of(letter: str) -> str:
    """The look-alike characters :func:`fold_confusables` maps to Latin ``letter``."""
    return "".join(char for char, latin in _CONFUSABLES.items() if latin == letter)


def fold_confusables(text: str) -> str:
    """``text`` (already lower-cased) with look-alike letters mapped to Latin."""
    return text.translate(_confusable_table())


@functools.cache
def _width_table() -> dict[int, int]:
    table = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)}
    table[0x3000] = 0x20  # ideographic space
    return table


def fold_width(text: str) -> str:
    """``text`` with full-width ASCII forms (``ｓｋ－ａｂｃ１２３``, U+FF01–U+FF5E) and the
    ideographic space mapped to ASCII, one character for one, so every index of the result is
    the same position in ``text`` (unlike NFKC, which may change the length)."""
    return text.translate(_width_table())


__all__ = [
    "INVISIBLE_RANGES",
    "confusables_of",
    "fold_confusables",
    "fold_width",
    "invisible_code_points",
    "invisible_regex",
    "is_invisible",
    "reveal_tags",
    "strip_invisible",
]
