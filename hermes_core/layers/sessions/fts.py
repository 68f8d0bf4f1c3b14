"""Full-text search that works for every language: index text, query sanitiser, availability.

Design (measured in docs/sessions.md):

* One FTS5 table ``messages_fts(body, meta)`` with ``tokenize='porter unicode61
  remove_diacritics 2'``, contentless (``content=''``: the text is stored once, in
  ``messages``; see :mod:`.schema`): English is stemmed ("deploying" finds "deployed").
  ``body`` is the message text (capped at ``index_char_cap`` characters so huge tool
  outputs do not bloat the index); ``meta`` holds the speaker name, the tool name and the
  tool-call arguments.
* CJK (Chinese, Japanese kana, Korean hangul) has no spaces, and ``unicode61`` turns a whole run
  of CJK characters into one token, so ``咖啡`` would never match ``我喜欢喝咖啡``. Every CJK
  character is therefore indexed as its own token (:func:`split_cjk`) and a CJK query becomes a
  phrase of single characters (``"咖 啡"``), so 1-, 2- and 3+-character queries all match and
  ``bm25()`` ranks them. A trigram side table was not needed (it cannot match 1-2 characters
  and is ~1.5x larger).
* :func:`parse_query` turns ANY user string into a list of safe terms and
  :func:`build_match` into a valid MATCH expression (or ``None`` when nothing is searchable).
  Every term is emitted as a double-quoted phrase, so quotes, hyphens, colons, parentheses
  and stray operators in user input can never produce an FTS5 syntax error.
"""

from __future__ import annotations

import re
import sqlite3
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from hermes_core.text import CJK_CHAR, CJK_RANGES

FTS_TOKENIZER = "porter unicode61 remove_diacritics 2"
FTS_COLUMNS = ("body", "meta")
FTS_WEIGHTS = (1.0, 0.6)
"""bm25() column weights: the message text counts more than speaker/tool metadata."""

_WORD = re.compile(r"[^\W_]+", re.UNICODE)

STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "aren't",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "let",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "also",
        "ever",
        "get",
        "got",
        "like",
        "really",
        "s",
        "t",
        "d",
        "ll",
        "m",
        "re",
        "ve",
        "y",
    ]
)
"""English function words dropped from ranked (implicit-OR) queries; kept when a query has
nothing else, and always kept inside quoted phrases."""

_OPERATORS = frozenset({"AND", "OR", "NOT"})


def contains_cjk(text: str) -> bool:
    """True when ``text`` has at least one CJK/kana/hangul character."""
    return CJK_CHAR.search(text) is not None


def split_cjk(text: str) -> str:
    """Surround every CJK character with spaces so ``unicode61`` makes each one a token."""
    if not contains_cjk(text):
        return text
    return CJK_CHAR.sub(lambda m: f" {m.group(0)} ", text)


def cap_text(text: str, cap: int) -> str:
    """The first ``cap`` characters of ``text`` (huge tool outputs are indexed partially)."""
    return text if len(text) <= cap else text[:cap]


def normalize(text: str) -> str:
    """NFKC form: full-width Latin letters and digits typed with a CJK input method
    (``ｎｇｉｎｘ``, ``２０２４``) become ASCII, compatibility ideographs their unified form.
    Applied to indexed text and to queries alike, so either spelling finds the other."""
    return unicodedata.normalize("NFKC", text)


def index_fields(
    content: str,
    *,
    name: str | None = None,
    tool_name: str | None = None,
    tool_args: Iterable[str] = (),
    cap: int = 8192,
) -> tuple[str, str]:
    """The ``(body, meta)`` strings stored in ``messages_fts`` for one message (NFKC
    normalised, CJK split, capped at ``cap`` characters)."""
    body = split_cjk(normalize(cap_text(content, cap)))
    meta_parts = [part for part in (name, tool_name, *tool_args) if part]
    meta = split_cjk(normalize(cap_text(" ".join(meta_parts), cap)))
    return body, meta


@dataclass(frozen=True, slots=True)
class Term:
    """One searchable unit of a query.

    ``words`` are the tokens of a phrase (a single word is a one-word phrase); ``prefix``
    adds ``*``; ``op`` is the explicit boolean operator written *before* this term by the
    user (``None`` = implicit). ``stop`` marks an English stopword.
    """

    words: tuple[str, ...]
    prefix: bool = False
    op: str | None = None
    stop: bool = False
    quoted: bool = False

    def to_match(self) -> str:
        """The term as an FTS5 phrase: always double-quoted, so always valid."""
        text = " ".join(self.words).replace('"', '""')
        return f'"{text}"' + ("*" if self.prefix else "")

    @property
    def text(self) -> str:
        """Human-readable form (CJK without the indexing spaces)."""
        joined = " ".join(self.words)
        return re.sub(f"(?<=[{CJK_RANGES}]) (?=[{CJK_RANGES}])", "", joined)


_POSSESSIVE = re.compile(r"(\w)['’][sS]\b")
_TOKEN = re.compile(r'"[^"]*"?|\S+')


def _words_of(chunk: str) -> list[str]:
    """Tokens of ``chunk`` the way the index sees them (CJK split to characters)."""
    return _WORD.findall(split_cjk(chunk).lower())


def _cjk_terms(words: list[str], prefix: bool) -> list[tuple[tuple[str, ...], bool]]:
    """Group a word list into phrases: runs of CJK characters become one phrase each (long
    runs are cut into overlapping 2-character phrases so natural sentences still match)."""
    out: list[tuple[tuple[str, ...], bool]] = []
    run: list[str] = []

    def flush() -> None:
        if not run:
            return
        if len(run) <= 4:
            out.append((tuple(run), False))
        else:
            for i in range(len(run) - 1):
                out.append(((run[i], run[i + 1]), False))
        run.clear()

    for word in words:
        if len(word) == 1 and CJK_CHAR.match(word):
            run.append(word)
        else:
            flush()
            out.append(((word,), False))
    flush()
    if prefix and out and not CJK_CHAR.match(out[-1][0][-1]):
        words_last, _ = out[-1]
        out[-1] = (words_last, True)
    return out


def parse_query(query: object) -> list[Term]:
    """Split any user input into :class:`Term` s. Never raises.

    Supported syntax: ``"exact phrase"``, ``OR`` / ``AND`` / ``NOT`` between terms, trailing
    ``*`` for prefix search. Everything else (parentheses, colons, carets, unbalanced quotes,
    dangling operators) is treated as plain text. Hyphenated words (``chat-send``) become
    phrases. CJK text is split into single characters; full-width forms are NFKC-folded.
    """
    if not isinstance(query, str):
        query = "" if query is None else str(query)
    query = _POSSESSIVE.sub(r"\1", normalize(query))  # "John's" -> "John" (not the phrase "john s")
    terms: list[Term] = []
    pending_op: str | None = None
    for raw in _TOKEN.findall(query):
        if raw in _OPERATORS:
            if terms:
                pending_op = raw
            continue
        if raw.startswith('"'):
            words = _words_of(raw.strip('"'))
            if words:
                terms.append(Term(tuple(words), op=pending_op, quoted=True))
                pending_op = None
            continue
        prefix = raw.endswith("*") and len(raw.rstrip("*")) > 0
        words = _words_of(raw)
        if not words:
            continue
        if any(CJK_CHAR.match(w) for w in words):
            groups = _cjk_terms(words, prefix)
        elif len(words) > 1:  # chat-send, foo.bar, a:b -> one phrase
            groups = [(tuple(words), prefix)]
        else:
            groups = [((words[0],), prefix)]
        for i, (group, pfx) in enumerate(groups):
            stop = len(group) == 1 and group[0] in STOPWORDS
            terms.append(Term(group, prefix=pfx, op=pending_op if i == 0 else None, stop=stop))
        pending_op = None
    return terms


def ranked_terms(terms: list[Term]) -> list[Term]:
    """Terms used for ranked search: explicit NOT-terms removed, stopwords dropped when
    anything else remains, duplicates removed (order kept)."""
    kept = [t for t in terms if t.op != "NOT"]
    content = [t for t in kept if not t.stop]
    chosen = content or kept
    seen: set[tuple[tuple[str, ...], bool]] = set()
    out: list[Term] = []
    for term in chosen:
        key = (term.words, term.prefix)
        if key not in seen:
            seen.add(key)
            out.append(term)
    return out


def build_match(query: object, *, mode: str = "any") -> str | None:
    """A valid FTS5 MATCH expression for ``query`` or ``None`` when nothing is searchable.

    ``mode="any"`` (default, best for ranking): content terms joined with ``OR``; results are
    then ranked by how many terms they cover. ``mode="all"``: implicit AND. Explicit ``OR`` /
    ``AND`` written by the user are kept; ``NOT x`` excludes rows containing ``x`` (only
    when something positive precedes it). Never raises.
    """
    terms = parse_query(query)
    if not terms:
        return None
    explicit = any(t.op is not None for t in terms)
    if not explicit:
        chosen = ranked_terms(terms)
        joiner = " OR " if mode == "any" else " AND "
        return joiner.join(t.to_match() for t in chosen) or None
    parts: list[str] = []
    nots: list[str] = []
    for term in terms:
        if term.op == "NOT":
            nots.append(term.to_match())
            continue
        if parts:
            op = term.op or ("OR" if mode == "any" else "AND")
            parts.append(op)
        parts.append(term.to_match())
    if not parts:
        return None
    expr = " ".join(parts)
    if nots:
        expr = f"({expr}) NOT ({' OR '.join(nots)})"
    return expr


def probe_fts5(conn: sqlite3.Connection) -> str | None:
    """``None`` when FTS5 with our tokenizer works on ``conn``; otherwise the reason."""
    try:
        conn.execute(
            f"CREATE VIRTUAL TABLE temp.hermes_fts5_probe USING fts5(x, tokenize='{FTS_TOKENIZER}')"
        )
        conn.execute("DROP TABLE temp.hermes_fts5_probe")
    except sqlite3.Error as exc:
        return (
            f"SQLite {sqlite3.sqlite_version} has no usable FTS5 ({exc}); session_search is "
            "disabled while messages are still stored. Fix: use a Python whose SQLite is "
            "compiled with FTS5 (most are), e.g. install pysqlite3-binary."
        )
    return None


__all__ = [
    "FTS_COLUMNS",
    "FTS_TOKENIZER",
    "FTS_WEIGHTS",
    "STOPWORDS",
    "Term",
    "build_match",
    "cap_text",
    "contains_cjk",
    "index_fields",
    "normalize",
    "parse_query",
    "probe_fts5",
    "ranked_terms",
    "split_cjk",
]
