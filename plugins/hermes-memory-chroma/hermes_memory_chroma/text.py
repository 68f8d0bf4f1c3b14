"""Text helpers shared by the store and the retriever: normalisation, CJK splitting, FTS5
queries. Pure functions, no I/O."""

from __future__ import annotations

import hashlib
import re
import unicodedata

_CJK = (
    "\u3040-\u30ff"  # hiragana, katakana
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified
    "\uac00-\ud7af"  # hangul syllables
    "\uf900-\ufaff"  # compatibility ideographs
)
CJK_RE = re.compile(f"[{_CJK}]")
_CJK_CHAR = re.compile(f"([{_CJK}])")
_WORD = re.compile(rf"[{_CJK}]|[^\W_]+", re.UNICODE)
_SPACES = re.compile(r"\s+")

STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just me more most my myself no nor not now of off on once only or
    other our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up
    very was we were what when where which while who whom why will with would you your yours
    yourself yourselves did does also ever get got go going would like s t don doesn didn
    isn wasn whats what's kind sort much many one thing things
    的 了 是 在 我 你 他 她 它 们 吗 呢 吧 啊 和 与 也 都 就 还 又 把 被 这 那 有 个 么 什
    """.split()  # noqa: SIM905
)
"""English function words plus single-character Chinese particles. Dropped from keyword
queries (never from the index), because OR-ing them matches almost everything."""


def normalize(text: str) -> str:
    """Case-folded, NFKC, punctuation-free, single-spaced text (the dedup key's input)."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(_WORD.findall(folded))


def content_hash(text: str) -> str:
    """Stable hash of :func:`normalize` (so "Likes tea." and "likes  tea" collide)."""
    return hashlib.sha256(normalize(text).encode("utf-8")).hexdigest()[:32]


def split_cjk(text: str) -> str:
    """Put spaces around every CJK character, so FTS5 unicode61 indexes each one as a token
    (a run of Chinese characters would otherwise be one unsearchable token)."""
    return _SPACES.sub(" ", _CJK_CHAR.sub(r" \1 ", text)).strip()


def tokens(text: str) -> list[str]:
    """Word tokens of ``text``: case-folded words and single CJK characters."""
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def word_runs(text: str) -> list[str]:
    """Case-folded (NFKC) runs of ``text``: each run of CJK characters, and each other word."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return re.findall(rf"[{_CJK}]+|[^\W_]+", folded, re.UNICODE)


def cjk_bigrams(run: str) -> list[str]:
    """Adjacent character pairs of a CJK run, skipping pairs with a stopword character
    (Chinese has no spaces, so pairs stand in for words)."""
    return [
        run[i : i + 2]
        for i in range(len(run) - 1)
        if run[i] not in STOPWORDS and run[i + 1] not in STOPWORDS
    ]


def fts_phrase(chars: str) -> str:
    """An FTS5 phrase matching CJK ``chars`` as the index holds them (one token each):
    ``"咖啡"`` → ``'"咖 啡"'``."""
    return '"' + " ".join(chars.replace('"', "")) + '"'


def fts_query(text: str) -> str | None:
    """An FTS5 MATCH expression for free text, or None when nothing searchable remains.

    Latin words become quoted terms OR-ed together (stopwords dropped unless nothing else is
    left); each run of CJK characters becomes a quoted phrase of its split characters (so
    ``咖啡`` matches ``"咖 啡"``), plus its single characters when the run is short. Quoting
    neutralises FTS5 syntax in user text.
    """
    terms: list[str] = []
    for run in word_runs(text):
        if CJK_RE.match(run):
            chars = [c for c in run if c not in STOPWORDS] or list(run)
            if len(run) > 1:
                terms.append(fts_phrase(run))
                # bigrams catch word pieces inside a longer sentence run
                terms.extend(fts_phrase(pair) for pair in cjk_bigrams(run))
            else:
                terms.extend(f'"{c}"' for c in chars)
        else:
            terms.append(run)
    content = [t for t in terms if t.strip('"') not in STOPWORDS]
    chosen = content or terms
    if not chosen:
        return None
    unique = list(dict.fromkeys(t if t.startswith('"') else f'"{t}"' for t in chosen))
    return " OR ".join(unique[:64])


def excerpt(text: str, limit: int = 400) -> str:
    """``text`` on one line, cut at ``limit`` characters with an ellipsis."""
    flat = _SPACES.sub(" ", text).strip()
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


__all__ = [
    "CJK_RE",
    "STOPWORDS",
    "cjk_bigrams",
    "content_hash",
    "excerpt",
    "fts_phrase",
    "fts_query",
    "normalize",
    "split_cjk",
    "tokens",
    "word_runs",
]
