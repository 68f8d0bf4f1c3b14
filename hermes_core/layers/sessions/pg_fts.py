"""Full-text search on PostgreSQL with the semantics of the SQLite FTS5 index.

The same text goes in (:func:`~.fts.index_fields`: NFKC, CJK split into one token per
character, capped) and the same query language comes out (:func:`~.fts.build_match` writes
an FTS5 expression; :func:`to_tsquery_text` translates it). Pure functions, no database:

* :func:`index_words` tokenises like FTS5's ``unicode61 remove_diacritics 2`` tokenizer (runs
  of letters and digits, lower-cased, diacritics removed) and returns the words joined by
  spaces, so PostgreSQL's parser sees one token per word and positions line up with FTS5's.
  The ``hermes_core`` text search configuration (see :mod:`.pg_schema`) stems English words
  with Snowball and drops no stopwords (FTS5's porter tokenizer drops none either). CJK
  characters are single-character words, so 1- and 2-character Chinese and Japanese
  queries match as phrases (``咖 <-> 啡``), exactly like the SQLite side — no trigram
  index, which could not match under 3 characters.
* :func:`to_tsquery_text` turns an FTS5 expression from :func:`~.fts.build_match` into
  ``to_tsquery`` syntax (phrases → ``<->``, prefix ``*`` → ``:*``, ``OR``/``AND``/``NOT``).
* :func:`bm25` scores a row from its ``tsvector`` text exactly the way FTS5's ``bm25()`` does
  (k1 1.2, b 0.75, per-column weights, IDF floored at 1e-6), so ranking is the same on both
  backends.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hermes_core.layers.sessions.fts import FTS_WEIGHTS

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
BODY_WEIGHT = "A"
META_WEIGHT = "B"
COLUMN_WEIGHTS = {BODY_WEIGHT: FTS_WEIGHTS[0], META_WEIGHT: FTS_WEIGHTS[1]}
K1 = 1.2
B = 0.75


def fold(text: str) -> str:
    """Lower-cased, diacritics removed (``Café`` → ``cafe``), like ``remove_diacritics``."""
    decomposed = unicodedata.normalize("NFD", text.lower())
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return unicodedata.normalize("NFC", stripped)


def index_words(text: str) -> list[str]:
    """The tokens FTS5 would index for ``text`` (already :func:`~.fts.index_fields` output)."""
    return _WORD.findall(fold(text))


@dataclass(frozen=True, slots=True)
class Phrase:
    """One quoted phrase of an FTS5 expression: its words and whether the last is a prefix."""

    words: tuple[str, ...]
    prefix: bool = False


_TOKEN = re.compile(r'"((?:[^"]|"")*)"(\*?)|(\()|(\))|(AND|OR|NOT)\b')


def _lexeme(word: str) -> str:
    return "'" + word.replace("\\", "\\\\").replace("'", "''") + "'"


def _phrase_query(phrase: Phrase) -> str:
    parts = [_lexeme(w) for w in phrase.words]
    if phrase.prefix and parts:
        parts[-1] += ":*"
    return parts[0] if len(parts) == 1 else "(" + " <-> ".join(parts) + ")"


def parse_match(match: str) -> list[str | Phrase]:
    """The tokens of an FTS5 expression written by :mod:`.fts`: :class:`Phrase` s,
    ``(``, ``)``, ``AND``, ``OR``, ``NOT``. Words are folded like indexed text."""
    out: list[str | Phrase] = []
    for m in _TOKEN.finditer(match):
        if m.group(1) is not None:
            words = tuple(w for w in index_words(m.group(1).replace('""', '"')))
            if words:
                out.append(Phrase(words, bool(m.group(2))))
        else:
            out.append(m.group(3) or m.group(4) or m.group(5))
    return out


def phrases(match: str) -> list[Phrase]:
    """Every phrase of the expression, in order (FTS5's ``bm25()`` scores each)."""
    return [t for t in parse_match(match) if isinstance(t, Phrase)]


def to_tsquery_text(match: str) -> str | None:
    """``to_tsquery`` syntax for an FTS5 expression (``None`` when nothing is searchable).

    Adjacent phrases without an operator are ANDed (as in FTS5); ``a NOT b`` becomes
    ``a & !b``."""
    out: list[str] = []
    need_op = False
    for tok in parse_match(match):
        if isinstance(tok, Phrase):
            if need_op:
                out.append("&")
            out.append(_phrase_query(tok))
            need_op = True
        elif tok == "(":
            if need_op:
                out.append("&")
            out.append("(")
            need_op = False
        elif tok == ")":
            out.append(")")
            need_op = True
        elif tok == "OR":
            out.append("|")
            need_op = False
        elif tok == "AND":
            out.append("&")
            need_op = False
        elif tok == "NOT":
            out.append("& !")
            need_op = False
    text = " ".join(out).strip()
    return text or None


_VECTOR_ITEM = re.compile(r"'((?:[^']|'')*)'(?::([0-9A-D,]+))?")
_POSITION = re.compile(r"(\d+)([A-D]?)")


def parse_tsvector(text: str) -> dict[str, list[tuple[int, str]]]:
    """``{lexeme: [(position, weight letter)]}`` of a ``tsvector`` in its text form."""
    out: dict[str, list[tuple[int, str]]] = {}
    for m in _VECTOR_ITEM.finditer(text):
        lexeme = m.group(1).replace("''", "'").replace("\\\\", "\\")
        positions = m.group(2) or ""
        out[lexeme] = [(int(p), w or "D") for p, w in _POSITION.findall(positions)]
    return out


def phrase_frequency(
    vector: Mapping[str, list[tuple[int, str]]], lexemes: Sequence[str], prefix: bool
) -> float:
    """Column-weighted number of places the phrase (stemmed ``lexemes``) occurs."""
    if not lexemes:
        return 0.0
    last = lexemes[-1]
    if prefix:
        ends = [pos for lex, ps in vector.items() if lex.startswith(last) for pos in ps]
    else:
        ends = list(vector.get(last, ()))
    if len(lexemes) == 1:
        return sum(COLUMN_WEIGHTS.get(w, 1.0) for _, w in ends)
    earlier = [{p for p, _ in vector.get(lex, ())} for lex in lexemes[:-1]]
    n = len(lexemes) - 1
    total = 0.0
    for pos, weight in ends:
        if all((pos - n + i) in earlier[i] for i in range(n)):
            total += COLUMN_WEIGHTS.get(weight, 1.0)
    return total


def idf(rows: int, hits: int) -> float:
    """FTS5's IDF: ``log((N - n + 0.5) / (n + 0.5))``, at least 1e-6."""
    value = math.log((rows - hits + 0.5) / (hits + 0.5)) if rows > 0 else 0.0
    return value if value > 0 else 1e-6


def bm25(
    vector: Mapping[str, list[tuple[int, str]]],
    length: int,
    avgdl: float,
    terms: Sequence[tuple[Sequence[str], bool, float]],
) -> float:
    """FTS5's ``bm25()`` of one row (negative: lower is better, like SQLite).
    ``terms`` are ``(lexemes, prefix, idf)`` per phrase; ``length`` the row's token count."""
    score = 0.0
    norm = K1 * (1 - B + B * length / (avgdl or 1.0))
    for lexemes, prefix, weight in terms:
        freq = phrase_frequency(vector, lexemes, prefix)
        score += weight * (freq * (K1 + 1.0)) / (freq + norm)
    return -score


__all__ = [
    "BODY_WEIGHT",
    "META_WEIGHT",
    "Phrase",
    "bm25",
    "fold",
    "idf",
    "index_words",
    "parse_match",
    "parse_tsvector",
    "phrase_frequency",
    "phrases",
    "to_tsquery_text",
]
