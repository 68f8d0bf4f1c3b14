"""Tokenising for FTS5 and HRR, CJK-aware, plus deterministic entity extraction.

SQLite's ``unicode61`` tokenizer turns a run of Chinese characters into one token, so the
store indexes text with a space between CJK characters and queries the same way (phrases of
adjacent characters). English words are case-folded; a short stopword list keeps queries
like "what is my ..." from matching everything.
"""

from __future__ import annotations

import hashlib
import itertools
import re
import unicodedata

from hermes_core.text import CJK_CHAR, CJK_RANGES, space_cjk

_TOKEN = re.compile(f"[{CJK_RANGES}]+|[^\\W_]+(?:['’][^\\W_]+)?", re.UNICODE)

STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "do",
        "does",
        "did",
        "for",
        "from",
        "has",
        "have",
        "he",
        "her",
        "his",
        "how",
        "i",
        "if",
        "in",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "she",
        "so",
        "that",
        "the",
        "their",
        "them",
        "they",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "you",
        "your",
        "am",
        "can",
        "could",
        "should",
        "would",
        "about",
        "into",
        "than",
        "then",
        "there",
        "these",
        "those",
        "up",
        "out",
        "just",
        "also",
        "been",
        "being",
        "any",
        "all",
        "some",
        "no",
        "not",
        "yes",
    ]
)
CJK_STOP = frozenset("的了是我你他她它们在吗呢吧啊和与及就都也很么什哪谁这那个有")
NEGATIONS = frozenset(
    [
        "not",
        "no",
        "never",
        "don't",
        "doesn't",
        "didn't",
        "isn't",
        "aren't",
        "wasn't",
        "weren't",
        "won't",
        "cannot",
        "can't",
        "dislike",
        "dislikes",
        "hate",
        "hates",
    ]
)
CJK_NEGATIONS = ("不", "没", "别", "未", "讨厌")


def normalise(text: str) -> str:
    """NFKC, case-folded, whitespace collapsed: the identity used for dedup."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def content_hash(text: str) -> str:
    return hashlib.sha256(normalise(text).encode("utf-8")).hexdigest()


def is_cjk(text: str) -> bool:
    return bool(CJK_CHAR.match(text))


def split_cjk(text: str) -> str:
    """Text with every CJK character surrounded by spaces (what the FTS index stores)."""
    return space_cjk(unicodedata.normalize("NFKC", text))


def terms(text: str) -> list[str]:
    """Content terms: case-folded words minus stopwords; CJK runs give their characters
    (minus function characters) and adjacent-character bigrams."""
    out: list[str] = []
    for tok in _TOKEN.findall(unicodedata.normalize("NFKC", text)):
        if is_cjk(tok):
            chars = list(tok)
            out.extend(c for c in chars if c not in CJK_STOP)
            out.extend(
                a + b for a, b in itertools.pairwise(chars) if not (a in CJK_STOP and b in CJK_STOP)
            )
        else:
            word = tok.casefold()
            if word not in STOPWORDS:
                out.append(word)
    return out


def _stem(word: str) -> str:
    """Strip one common English suffix when at least four letters remain (the FTS query
    then matches the stem as a prefix: "budgets" → budget*, "deploying" → deploy*)."""
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


def fts_phrases(text: str) -> list[str]:
    """The quoted FTS5 phrases of ``text``, in order, each once: Latin words of four or more
    letters as prefixes (``"postgres"*``), CJK bigrams as two-character phrases."""
    parts: list[str] = []
    seen: set[str] = set()
    for term in terms(text):
        phrase = " ".join(term) if is_cjk(term) else _stem(term)
        phrase = phrase.replace('"', '""')
        if phrase not in seen:
            seen.add(phrase)
            # Latin words of 4+ letters also match as prefixes ("postgres" → PostgreSQL).
            star = "*" if not is_cjk(term) and len(phrase) >= 4 else ""
            parts.append(f'"{phrase}"{star}')
    return parts


def fts_query(text: str, *, mode: str = "OR") -> str:
    """A safe FTS5 MATCH expression for ``text``: its :func:`fts_phrases` joined by ``mode``.
    Empty string when there is nothing to search for."""
    return f" {mode} ".join(fts_phrases(text))


def has_negation(text: str) -> bool:
    words = {w.casefold() for w in re.findall(r"[\w'’]+", text)}
    return bool(words & NEGATIONS) or any(n in text for n in CJK_NEGATIONS)


_CAPS = re.compile(r"\b[A-Z][\w+#.-]*[\w+#](?:\s+[A-Z][\w+#.-]*[\w+#])*|\b[A-Z]\b")
_QUOTED = re.compile(
    r"`([^`]{2,60})`|\"([^\"]{2,60})\"|“([^”]{1,60})”|《([^》]{1,60})》|「([^」]{1,60})」"
)
_IDENT = re.compile(
    r"\b[\w-]+\.(?:py|js|ts|md|yaml|yml|json|toml|txt|db|sh|rs|go)\b|\b[a-z]+_[a-z_]+\b"
)
_LEADING = frozenset(
    [
        "I",
        "The",
        "A",
        "An",
        "My",
        "We",
        "He",
        "She",
        "It",
        "They",
        "This",
        "That",
        "These",
        "Those",
        "User",
        "Our",
        "Your",
        "Their",
        "His",
        "Her",
        "Also",
        "And",
        "But",
        "Or",
        "If",
        "When",
        "Then",
        "So",
        "Yes",
        "No",
        "Please",
        "Remember",
        "Note",
    ]
)


def extract_entities(text: str) -> list[str]:
    """Names in ``text``: capitalised word runs (minus sentence-initial function words),
    quoted/backticked spans, 《书名》/「」 spans, file names and snake_case identifiers."""
    found: list[str] = []
    for match in _QUOTED.finditer(text):
        found.append(next(g for g in match.groups() if g))
    for match in _CAPS.finditer(text):
        words = match.group(0).split()
        while words and words[0] in _LEADING:
            words = words[1:]
        if words and not (len(words) == 1 and len(words[0]) == 1):
            found.append(" ".join(words).rstrip(".-"))
    found.extend(_IDENT.findall(text))
    out: list[str] = []
    seen: set[str] = set()
    for name in found:
        name = name.strip()
        key = normalise(name)
        if name and key not in seen:
            seen.add(key)
            out.append(name)
    return out


__all__ = [
    "content_hash",
    "extract_entities",
    "fts_phrases",
    "fts_query",
    "has_negation",
    "is_cjk",
    "normalise",
    "split_cjk",
    "terms",
]
