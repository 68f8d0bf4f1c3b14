"""Pseudo-relevance feedback: the words a second keyword search should add.

The best hits of a first search are usually about the right topic even when they are not the
memories asked for; their *rare* words ("running", "headspace"; "河边", "跑步") find the
other memories on that topic that share none of the question's words. A word's weight is

``idf(word) × Σ 1 / rank``  over the hits (rank 1 = best) that contain it,

with ``idf = log(1 + N / df)`` from the keyword index. English words are compared by their
index term (the porter stem FTS5 gives them), so "camped" in the question rules out
"camping" in a hit; the word returned is the form seen in the hits, because FTS5 stems
queries again ("agreed" → ``agre``, and ``agre`` → ``agr``). Chinese and Japanese have no
spaces, so character pairs stand in for words. Stopwords, numbers, words of fewer than three
letters and words in fewer than ``min_df`` indexed texts (they cannot find anything new) are
never suggested. Only the given texts supply words: nothing another user wrote can be
suggested, though document frequencies are index-wide, like FTS5's own bm25 statistics.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence

from hermes_memory_chroma.fts import FtsIndex
from hermes_memory_chroma.text import CJK_RE, STOPWORDS, cjk_bigrams, word_runs

MIN_WORD = 3


def _units(text: str) -> tuple[list[str], list[str]]:
    """``(words, cjk_pairs)`` of ``text`` worth suggesting (see the module docstring)."""
    words: list[str] = []
    pairs: list[str] = []
    for run in word_runs(text):
        if CJK_RE.match(run):
            pairs.extend(cjk_bigrams(run))
        elif len(run) >= MIN_WORD and not run.isdigit() and run not in STOPWORDS:
            words.append(run)
    return words, pairs


def expansion_terms(
    fts: FtsIndex, texts: Sequence[str], query: str, limit: int, *, min_df: int = 2
) -> list[str]:
    """Up to ``limit`` words of ``texts`` (best hit first) for a second search of ``query``,
    best first; empty when nothing qualifies."""
    if limit <= 0 or not texts:
        return []
    units = [_units(t) for t in texts]
    query_words, query_pairs = _units(query)
    stem = fts.stems([w for words, _ in units for w in words] + query_words)
    asked = {stem.get(w, w) for w in query_words} | set(query_pairs)

    weight: dict[str, float] = defaultdict(float)
    forms: dict[str, Counter[str]] = defaultdict(Counter)
    for rank, (words, pairs) in enumerate(units, start=1):
        keys = {stem[w] for w in words if w in stem} | set(pairs)
        for key in keys - asked:
            weight[key] += 1.0 / rank
        for w in words:
            if w in stem:
                forms[stem[w]][w] += 1
    if not weight:
        return []
    by_weight = sorted(weight, key=lambda key: (-weight[key], key))
    latin = [key for key in by_weight if key in forms]
    # a phrase costs one FTS5 query: only the likeliest few are counted
    cjk = [key for key in by_weight if key not in forms][: 3 * limit]
    df = {**fts.term_doc_freq(latin), **fts.phrase_doc_freq(cjk)}
    total = max(1, fts.total())

    scored = [
        (weight[key] * math.log(1 + total / df[key]), key)
        for key in (*latin, *cjk)
        if df.get(key, 0) >= min_df
    ]
    scored.sort(key=lambda x: (-x[0], x[1]))
    out = []
    for _, key in scored[:limit]:
        if key in forms:  # the commonest form seen, shortest first on ties
            key = min(forms[key].items(), key=lambda kv: (-kv[1], len(kv[0]), kv[0]))[0]
        out.append(key)
    return out


__all__ = ["expansion_terms"]
