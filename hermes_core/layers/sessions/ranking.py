"""Ranking of archived messages and sessions for a free-text query (no LLM, no embeddings).

Pipeline (every step measured on LoCoMo in docs/benchmarks.md):

1. Query terms: content words joined with ``OR`` (English stopwords, question scaffolding
   such as "what kind of" / "what did X say" / "how many different … in total" and its
   Chinese character pairs (一共, 几次, …), and names of conversation participants
   dropped), porter-stemmed by FTS5.
2. Candidates: FTS5 ``bm25()`` (text column weighted above speaker/tool metadata) ranks on
   its own, then the best rows are joined and filtered (hidden sources, excluded sessions,
   roles, time range, tool) down to :data:`CANDIDATES`.
3. Term coverage: a candidate's BM25 is scaled by the IDF-weighted share of the query terms
   it contains. Very short messages are damped.
   Pseudo-relevance feedback: the specific words (in at most 100 messages) of the user's
   own best-matching statements are searched too; their score, ×0.3, re-ranks the matches.
4. Dates named in the query ("on 3 June, 2023", "in August 2023", "in June") boost messages
   from that time (with ``now``, also times relative to it: "two weeks ago", "上周六");
   sessions active then without any keyword hit get a small prior.
5. Messages spoken by a participant the query names get a small boost.
6. Neighbour context: a message gains a share of its best adjacent message's score.
7. Session aggregation: best message plus decaying shares of the next best; ``cron``-like
   sources are demoted.
8. Query relaxation: when few sessions matched, the dropped names/question words are
   searched too and ranked after every primary result.
   Then a participant's question among the best turns ("You play any instruments?") brings
   the next participant's reply into the turns at half its score, even without a query
   word (never an assistant's reply; the session ranking is already fixed).
9. Own words first: for a first-person question ("what did I buy", "我的狗") the returned
   *turns* put the user's own messages ahead (×3 in their order only; not when it asks
   about the assistant's replies: "you recommended", "你推荐"), for a question naming a
   participant that participant's messages; for a question that counts or lists ("how
   many", "what instruments", 多少, 哪些) the n-th turn of one session ×0.9^n in that order,
   so the evidence spread over sessions is not crowded out by one; the session ranking is
   left as it is.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hermes_core.layers.sessions.fts import (
    STOPWORDS,
    Term,
    build_match,
    normalize,
    parse_query,
    ranked_terms,
)
from hermes_core.layers.sessions.ingest import indexed_text
from hermes_core.layers.sessions.records import ALL_USERS, UserScope, scope_sql
from hermes_core.layers.sessions.schema import INDEX_SELECT
from hermes_core.layers.sessions.timeparse import TimeWindow, query_time_window
from hermes_core.recall_pack import answer_cue
from hermes_core.text import CJK_CHAR, about_the_asker

if TYPE_CHECKING:
    from hermes_core.layers.sessions.archive import SessionStore

CANDIDATES = 300
EXACT_MAX = 5000
"""Queries estimated to match more messages than this are ranked in a recent window
(:func:`_window_span`) instead of by ``bm25()`` over every match."""
WINDOW_MIN = 8192
"""The smallest window (message ids) a broad query is ranked in."""
WINDOW_TARGET = 700
"""Matches a window should hold: enough for :data:`CANDIDATES` after filtering."""
RARE_MAX = 1000
"""A term of a broad query found in at most this many messages is *rare*: its matches are
read over the whole archive, not only the recent window (:func:`_rare_rows`), so an old
session that is the only real match of a query mixing common and rare words is still
ranked."""
RARE_ROWS_MAX = 3000
"""At most this many messages are read through rare terms per ranking (rarest terms
first), so discovery stays bounded however many rare words a query holds."""
EXACT_POSTINGS_MAX = 5000
"""Terms in more messages than this get approximate (regex) coverage instead of postings."""
COVERAGE_POWER = 1.0
NEIGHBOUR_SHARE = 0.5
SESSION_DECAY = (1.0, 0.3, 0.1)
PRF_WEIGHT = 0.3
"""Weight of pseudo-relevance feedback: expansion words from the user's best-matching
statements (:func:`_feedback`)."""
PRF_DOCS = 3
PRF_DF_MAX = 100
"""Expansion words found in more messages than this are not used: the feedback query then
reads at most ``PRF_TERMS * PRF_DF_MAX`` index rows whatever the archive's size, and the
words left are the specific ones (names, models, places) that carry over to other sessions."""
PRF_POOL = 60
"""The best hits searched for the user's own statements that seed the feedback."""
PRF_TERMS = 5
RELAX_MIN_SESSIONS = 10
"""Below this many matching sessions the dropped names/question words are searched too."""
TIME_BOOST = 5.0
"""Multiplier bonus for messages inside a date the query mentions ("on 3 June, 2023")."""
RELATIVE_BOOST = 2.0
"""Multiplier bonus for messages inside a time named relative to the question ("two weeks
ago", "last Saturday"; resolved only when :func:`rank` is given ``now``). Lower than
:data:`TIME_BOOST`: "a month ago" is a rounded, wide window."""
WINDOW_PRIOR = 0.2
"""Score (share of the best hit) of sessions inside a named date that no keyword matched."""
SHORT_TOKENS = 15
"""Messages shorter than this many tokens ("Take care!") get a damped score."""
DEMOTION = 0.5
"""Score multiplier of sessions from ``SearchFilters.demoted_sources``."""
SPEAKER_BOOST = 0.2
"""Multiplier bonus for messages spoken by a participant the query names."""
OWN_WORDS_BOOST = 2.0
"""Multiplier bonus, in the order of the returned *turns* only, for the words of the person
the question is about: the user's own messages when the query is in the first person ("what
did I buy", "我买了什么"), a named participant's messages ("what did Caroline research"):
what a person said about themselves is the evidence for a question about them, while an
assistant's long answers (or the other speaker's replies) repeat the question's words.
Session scores are computed before it (boosting the user's messages in the session scores
too moved the two halves of the dev questions apart: docs/benchmarks.md)."""
OWN_WORDS_POOL = 120
"""The best turns re-ordered by :data:`OWN_WORDS_BOOST` and :data:`SPREAD` (the rest keep
their order)."""
REPLY_SHARE = 0.5
"""Share of a participant's question's score given to the reply after it (:func:`_add_replies`)."""
REPLY_POOL = 20
"""The best turns read for questions between participants (:func:`_add_replies`)."""
SPREAD = 0.9
"""For a question that counts or lists ("how many …", "how much … in total", "what
instruments …", "多少", "哪些"), the n-th turn of one session in the order of the returned
*turns* is scored ×SPREAD^n (same step as :data:`OWN_WORDS_BOOST`): the answer is spread
over sessions, so one session should not fill the top turns. Session scores are left as they
are. A stronger spread (0.6-0.8) or one for every question lowered turn recall on half of
the dev questions (docs/benchmarks.md)."""
LIST_QUESTION = re.compile(
    r"(?i)\b(?:what|which)\s+(?:(?:kinds?|types?|sorts?)\s+of\s+)?(?:[a-z-]+\+?\s+)?"
    r"(?!(?:was|is|has|does|this|its|his|hers|us|yours|ours|theirs|always|as)\b)[a-z-]{3,}s\b|哪些"
)
"""A question asking for a list: "what/which (kinds of) (adjective) <plural noun>" ("what
LGBTQ+ events", "which cities") or Chinese 哪些; with :func:`~hermes_core.recall_pack.answer_cue`
asking for an amount, the questions :data:`SPREAD` applies to."""
QUESTION_FILLERS = frozenset(
    [
        "say",
        "said",
        "says",
        "mention",
        "mentioned",
        "describe",
        "described",
        "talk",
        "talked",
        "tell",
        "told",
        "kind",
        "kinds",
        "type",
        "types",
        "sort",
        "sorts",
        "way",
        "ways",
        "thing",
        "things",
        "something",
        "anything",
        "much",
        "many",
        "often",
        # counting and listing: "the total number of", "how many different", "currently"
        "total",
        "number",
        "different",
        "various",
        "currently",
        "recently",
    ]
)
"""Question scaffolding ("what kind of", "in what ways", "what did X say about", "how many
different … in total") dropped like stopwords (searched again only by query relaxation)."""
QUESTION_FILLERS_ZH = frozenset(
    [
        *("说过", "提到", "提过", "描述", "告诉", "聊过"),  # say, mention, describe, tell, talk
        *("种类", "类型", "哪些", "什么", "东西", "事情"),  # kinds, types, which, what, things
        *("多少", "几个", "几次", "几种", "经常"),  # how much / many, often
        *("一共", "总共", "总数", "总计", "数量", "不同", "各种", "目前", "最近"),
    ]
)
"""The Chinese side of :data:`QUESTION_FILLERS`: character pairs (how the index splits
Chinese) of the same scaffolding ("我一共去过几次婚礼" searches 婚礼, not 一共 or 几次)."""


@dataclass(frozen=True, slots=True)
class SearchFilters:
    """Restrictions applied inside the SQL query.

    ``exclude_sessions`` are skipped except for their compacted rows (content no longer in
    the live context). ``roles``: only these roles. ``after``/``before``: message timestamp
    bounds (epoch seconds). ``tool``: only messages that called or came from that tool.
    ``only_sessions``: restrict to these sessions (used by the benchmark and ``scope``).
    """

    exclude_sessions: tuple[str, ...] = ()
    hidden_sources: tuple[str, ...] = ()
    roles: tuple[str, ...] = ()
    after: float | None = None
    before: float | None = None
    tool: str | None = None
    only_sessions: tuple[str, ...] = ()
    demoted_sources: tuple[str, ...] = ()
    """Sessions from these sources (``cron``) rank below interactive ones of similar score:
    their score is multiplied by :data:`DEMOTION`."""
    user_id: UserScope = ALL_USERS
    """Only sessions of this user scope (``None``: sessions stored without a user)."""


@dataclass(slots=True)
class TurnHit:
    """One matching message with its final score (higher is better)."""

    message_id: int
    session_id: str
    bm25: float
    timestamp: float = 0.0
    score: float = 0.0
    matched: frozenset[str] = frozenset()


@dataclass(slots=True)
class SessionHit:
    """One matching session: its score, best message and every matching message."""

    session_id: str
    score: float
    anchor_message_id: int
    hits: list[TurnHit] = field(default_factory=list)


@dataclass(slots=True)
class Ranking:
    """Result of :func:`rank`: turns and sessions best first, the terms used, the MATCH."""

    turns: list[TurnHit]
    sessions: list[SessionHit]
    terms: list[Term]
    match: str | None
    cost: Cost = field(default_factory=lambda: Cost())


def _filter_sql(filters: SearchFilters) -> tuple[str, list[Any]]:
    scope, scope_params = scope_sql(filters.user_id, "s.user_id")
    where = ["(m.active = 1 OR m.compacted = 1)", scope]
    params: list[Any] = [*scope_params]
    if filters.exclude_sessions:
        marks = ",".join("?" * len(filters.exclude_sessions))
        where.append(f"(m.session_id NOT IN ({marks}) OR m.compacted = 1)")
        params.extend(filters.exclude_sessions)
    if filters.only_sessions:
        marks = ",".join("?" * len(filters.only_sessions))
        where.append(f"m.session_id IN ({marks})")
        params.extend(filters.only_sessions)
    if filters.hidden_sources:
        marks = ",".join("?" * len(filters.hidden_sources))
        where.append(f"s.source NOT IN ({marks})")
        params.extend(filters.hidden_sources)
    if filters.roles:
        marks = ",".join("?" * len(filters.roles))
        where.append(f"m.role IN ({marks})")
        params.extend(filters.roles)
    if filters.after is not None:
        where.append("m.timestamp >= ?")
        params.append(filters.after)
    if filters.before is not None:
        where.append("m.timestamp < ?")
        params.append(filters.before)
    if filters.tool:
        where.append("(m.tool_name = ? OR instr(m.tool_calls, ?) > 0)")
        params.extend([filters.tool, f'"{filters.tool}"'])
    return " AND ".join(where), params


@dataclass(slots=True)
class Window:
    """The recent slice of the archive a broad query was ranked in: message ids above
    ``floor`` (``span`` ids), with every query term's postings and IDF inside it."""

    floor: int
    span: int
    matches: int
    idf: dict[str, float] = field(default_factory=dict)
    postings: dict[str, set[int]] = field(default_factory=dict)
    rare: list[Term] = field(default_factory=list)
    """Terms whose matches were also read below ``floor`` (:func:`_rare_rows`)."""


@dataclass(slots=True)
class Cost:
    """What a ranking read: ``rows_ranked`` index rows scored (by FTS5 ``bm25()`` or, in a
    window, by :func:`_window_scores`), ``postings_read`` term postings fetched to score or
    cover candidates, ``windows`` how many windows were tried (0: the whole archive)."""

    rows_ranked: int = 0
    postings_read: int = 0
    windows: int = 0


def _count(db: SessionStore, match: str, floor: int = 0) -> int:
    return db.fts_count(match, floor)


def _window_span(db: SessionStore, match: str, newest: int) -> tuple[int, int] | None:
    """``(span, matches)`` of the smallest recent window (at least :data:`WINDOW_MIN` ids,
    grown geometrically) holding :data:`WINDOW_TARGET` matches, or ``None`` when the whole
    archive holds at most :data:`EXACT_MAX` matches (then ``bm25()`` over all of them is
    cheap) or the window would cover it anyway. Each probe counts only the matches inside its
    window, so deciding costs about twice the matches finally ranked."""
    span = WINDOW_MIN
    while span < newest:
        matches = _count(db, match, newest - span)
        if matches >= WINDOW_TARGET:
            if matches * newest / span <= EXACT_MAX:
                return None
            return span, matches
        grow = math.ceil(WINDOW_TARGET * 1.25 / max(matches, 1))
        span *= max(2, min(grow, 16))
    return None


def _window_postings(
    db: SessionStore, terms: Sequence[Term], window: Window, cost: Cost
) -> dict[str, list[int]]:
    """Every term's postings inside ``window`` (read once per term); fills ``window.idf``."""
    out: dict[str, list[int]] = {}
    for term in terms:
        expr = term.to_match()
        if expr in out:
            continue
        found = db.fts_rowids(expr, window.floor)
        cost.postings_read += len(found)
        out[expr] = found
        window.idf[expr] = _idf(window.span, len(found))
    return out


def _idf(rows: int, hits: float) -> float:
    """BM25's IDF of a term in ``hits`` of ``rows`` messages (at least 1e-6)."""
    return max(math.log((rows - hits + 0.5) / (hits + 0.5)), 1e-6)


def _rare_rows(
    db: SessionStore,
    match: str,
    terms: Sequence[Term],
    window: Window,
    postings: dict[str, list[int]],
    newest: int,
    where: str,
    params: list[Any],
    cost: Cost,
) -> list[tuple[Any, ...]]:
    """Rows below the window matching a *rare* term of a broad query (and ``match``, so an
    explicit ``AND``/``NOT`` still holds), with the filters.

    A term is rare when it is in at most :data:`RARE_MAX` messages of the whole archive:
    the window's density screens out common terms for free, the others are counted with
    the count stopping at the cap (bounded cost). Rare terms are taken rarest first until
    :data:`RARE_ROWS_MAX` rows; their matches are read over the whole archive, so an old
    session that is the only real match of ``coffee grinder conical burr`` is a candidate
    however recent the window is. Rare terms get their archive-wide IDF (scaled to the
    window, so scores stay comparable); ``postings`` gain the matches of every term among
    the new rows (a common term is read only where it meets a rare one)."""
    counts: dict[str, int] = {}
    for term in terms:
        expr = term.to_match()
        if expr in counts or len(postings[expr]) * newest > RARE_MAX * 2 * window.span:
            continue  # common by the window's density: no count needed
        counts[expr] = db.fts_count(expr, 0, cap=RARE_MAX + 1)
    rare = sorted((n, expr) for expr, n in counts.items() if 0 < n <= RARE_MAX)
    chosen: list[str] = []
    budget = RARE_ROWS_MAX
    for n, expr in rare:
        if n <= budget:
            chosen.append(expr)
            budget -= n
    if not chosen:
        return []
    rare_match = " OR ".join(chosen)
    wanted = rare_match
    if match != " OR ".join(dict.fromkeys(t.to_match() for t in terms)):
        wanted = f"({match}) AND ({rare_match})"  # the user's AND / NOT still apply
    rows = [r for r in db.fts_window_rows(wanted, 0, where, params) if r[0] <= window.floor]
    cost.rows_ranked += len(rows)
    window.rare = [t for t in terms if t.to_match() in chosen]
    if not rows:
        return []
    below = {int(r[0]) for r in rows}
    for expr in dict.fromkeys(t.to_match() for t in terms):
        if expr in chosen:
            found = db.fts_rowids(expr)
            window.idf[expr] = _idf(window.span, counts[expr] * window.span / max(newest, 1))
        else:
            found = db.fts_rowids(f"({expr}) AND ({rare_match})")
        cost.postings_read += len(found)
        postings[expr] = postings[expr] + [i for i in found if i in below]
    return rows


def _window_scores(
    window: Window,
    postings: dict[str, list[int]],
    rows: Sequence[tuple[Any, ...]],
) -> dict[int, float]:
    """BM25 (k1 1.2, b 0.75, every occurrence counted once) of ``rows`` computed from the
    terms' ``postings`` (inside ``window``, plus the rare terms' older rows): bounded by the
    window, whatever the archive's size. Fills ``window.postings`` for the coverage stage."""
    k1, b = 1.2, 0.75
    ids = {int(r[0]) for r in rows}
    for expr, found in postings.items():
        window.postings[expr] = set(found) & ids
    terms = list(postings)
    lengths = {int(r[0]): max(int(r[4]) if isinstance(r[4], int) else 1, 1) for r in rows}
    avg = sum(lengths.values()) / max(len(lengths), 1)
    damp = {rowid: (k1 + 1) / (1.0 + k1 * (1 - b + b * n / avg)) for rowid, n in lengths.items()}
    scores = dict.fromkeys(lengths, 0.0)
    for expr in terms:
        idf = window.idf[expr]
        for rowid in window.postings[expr]:
            scores[rowid] += idf * damp[rowid]
    return scores


def _candidates(
    db: SessionStore,
    match: str,
    where: str,
    params: list[Any],
    limit: int,
    terms: Sequence[Term] = (),
    cost: Cost | None = None,
) -> tuple[list[TurnHit], Window | None]:
    """The best ``limit`` rows for ``match`` passing the filters, and the window they were
    ranked in (``None``: the whole archive).

    Broad queries on a large archive (more than :data:`EXACT_MAX` estimated matches) are
    ranked in a recent window of message ids holding about :data:`WINDOW_TARGET` matches
    (:func:`_window_span`); when the filters leave fewer than ``limit`` rows there, the
    window widens (×4) up to the whole archive. Otherwise FTS5 ranks on its own (cheap: no
    join per match), then the top ``limit * OVERFETCH`` rows are joined and filtered; only
    when the filters removed so many that fewer than ``limit`` remain while more matches
    exist does the slower join-everything query run."""
    cost = cost if cost is not None else Cost()
    newest = int(db.read("SELECT MAX(id) FROM messages")[0][0] or 0)
    found = _window_span(db, match, newest) if terms else None
    while found is not None:
        span, matches = found
        cost.windows += 1
        cost.rows_ranked += matches
        window = Window(newest - span, span, matches)
        rows = db.fts_window_rows(match, window.floor, where, params)
        if len(rows) >= limit or span * 4 >= newest:
            if len(rows) >= limit:
                postings = _window_postings(db, terms, window, cost)
                if RARE_MAX:
                    rows = [
                        *rows,
                        *_rare_rows(
                            db, match, terms, window, postings, newest, where, params, cost
                        ),
                    ]
                scores = _window_scores(window, postings, rows)
                rows = sorted(rows, key=lambda r: (-scores[int(r[0])], -int(r[0])))[:limit]
                return _hits(rows, {i: -v for i, v in scores.items()}), window
            break  # too few even in a quarter of the archive: rank it all
        span *= 4
        found = (span, _count(db, match, newest - span))
    rows, total = db.fts_ranked(match, where, params, int(limit))
    cost.rows_ranked += total if total is not None else _count(db, match)
    return _hits(rows), None


def _hits(rows: Sequence[tuple[Any, ...]], scores: dict[int, float] | None = None) -> list[TurnHit]:
    """Turn hits from ``(id, session_id, bm25, timestamp, token_count)`` rows (FTS5's
    negative ``bm25``, or ``scores`` by id), short messages damped."""
    out = [
        TurnHit(
            int(r[0]),
            str(r[1]),
            -float(scores[int(r[0])] if scores is not None else r[2]),
            float(r[3]),
        )
        for r in rows
    ]
    if SHORT_TOKENS:
        for hit, row in zip(out, rows, strict=True):
            tokens = row[4] if isinstance(row[4], int) else SHORT_TOKENS
            hit.bm25 *= min(1.0, max(tokens, 1) / SHORT_TOKENS) ** 0.5
    return out


def _term_regex(term: Term) -> re.Pattern[str]:
    """Approximate matcher of a term in indexed text (used only for very common terms)."""
    parts: list[str] = []
    for word in term.words:
        if CJK_CHAR.match(word):
            parts.append(re.escape(word))
        else:
            stem = word[: max(3, len(word) - 3)] if len(word) > 4 else word
            parts.append(rf"\b{re.escape(stem)}\w*")
    return re.compile(r"\W+".join(parts), re.IGNORECASE)


def _term_postings(
    db: SessionStore,
    terms: Sequence[Term],
    rowids: Sequence[int],
    total: int,
    cost: Cost | None = None,
) -> tuple[dict[str, float], dict[int, set[str]]]:
    """IDF of every term in the archive and which candidate rows contain it.

    Rare terms: their exact FTS postings (one plain MATCH; ``rowid IN (...)`` would re-run
    the MATCH once per value). Terms in more than :data:`EXACT_POSTINGS_MAX` messages: a
    stem-prefix regex over the candidates' indexed text, which avoids pulling tens of
    thousands of rowids into Python."""
    wanted = set(rowids)
    idf: dict[str, float] = {}
    found: dict[int, set[str]] = defaultdict(set)
    texts: dict[int, str] | None = None
    for term in terms:
        expr = term.to_match()
        n = db.fts_count(expr)
        idf[expr] = math.log(1 + (total - n + 0.5) / (n + 0.5))
        if n <= EXACT_POSTINGS_MAX:
            rowids = db.fts_rowids(expr)
            if cost is not None:
                cost.postings_read += len(rowids)
            for rowid in rowids:
                if rowid in wanted:
                    found[int(rowid)].add(expr)
            continue
        if texts is None:
            texts = _index_texts(db, list(wanted))
        pattern = _term_regex(term)
        for rowid, text in texts.items():
            if pattern.search(text):
                found[rowid].add(expr)
    return idf, found


def _index_texts(db: SessionStore, rowids: Sequence[int]) -> dict[int, str]:
    """The indexed text (body and meta) of these messages, recomputed from ``messages``
    (the index is contentless: it keeps no copy of the text)."""
    out: dict[int, str] = {}
    for start in range(0, len(rowids), 500):
        chunk = rowids[start : start + 500]
        rows = db.read(
            f"{INDEX_SELECT} WHERE id IN ({','.join('?' * len(chunk))})",
            chunk,
        )
        for row in rows:
            rowid, body, meta = indexed_text(row, db.index_char_cap)
            out[rowid] = f"{body} {meta}"
    return out


_FEEDBACK_WORD = re.compile(r"[a-z][a-z'-]{3,}")


def _feedback_seeds(db: SessionStore, hits: Sequence[TurnHit]) -> list[TurnHit]:
    """The :data:`PRF_DOCS` best hits the *user* wrote (among the best :data:`PRF_POOL`),
    or the best hits of any role when the user wrote none of them: what a person said about
    themselves names the things a later question is about ("my Yamaha FG800"), while an
    assistant's long answers spread generic advice words."""
    ordered = sorted(hits, key=lambda h: (-h.score, h.message_id))
    users = _user_messages(db, [h.message_id for h in ordered[:PRF_POOL]])
    mine = [h for h in ordered[:PRF_POOL] if h.message_id in users]
    return (mine or ordered)[:PRF_DOCS]


def _user_messages(db: SessionStore, ids: Sequence[int]) -> set[int]:
    """Which of these message ids the user wrote (role ``user``)."""
    if not ids:
        return set()
    marks = ",".join("?" * len(ids))
    rows = db.read(f"SELECT id FROM messages WHERE id IN ({marks}) AND role = 'user'", list(ids))
    return {int(r[0]) for r in rows}


def _feedback(
    db: SessionStore,
    hits: list[TurnHit],
    terms: Sequence[Term],
    named: set[str],
    where: str,
    params: list[Any],
    limit: int,
    total: int,
    cost: Cost | None = None,
    floor: int = 0,
) -> list[TurnHit]:
    """Pseudo-relevance feedback: the most distinctive words of the user's best-matching
    statements (:func:`_feedback_seeds`) form a second query whose (normalised) scores are
    added with weight :data:`PRF_WEIGHT` to the hits that also matched the query: it
    re-ranks the matches (a session about the same things the user said rises), it never
    adds a message holding no query term, so every result still matches the query. Words in
    more than :data:`PRF_DF_MAX` messages above ``floor`` (the primary query's window) are
    not used, so the second query stays cheap on a large archive; it is ranked like any
    other (:func:`_candidates`).
    Latin-script words only: CJK queries get no expansion."""
    texts = _index_texts(db, [h.message_id for h in _feedback_seeds(db, hits)])
    query_words = {w for t in terms for w in t.words}
    counts: dict[str, int] = defaultdict(int)
    for text in texts.values():
        for word in set(_FEEDBACK_WORD.findall(text.lower())):
            if word in STOPWORDS or word in named or word in query_words:
                continue
            if any(word.startswith(q[:5]) or q.startswith(word[:5]) for q in query_words):
                continue
            counts[word] += 1
    if not counts:
        return hits
    pool = sorted(counts, key=lambda w: (-counts[w], w))[: PRF_TERMS * 3]
    weighted: list[tuple[float, str]] = []
    for word in pool:
        expr = f'"{word}"'
        n = db.fts_count(expr, floor, cap=PRF_DF_MAX + 1)
        if n == 0 or n > PRF_DF_MAX:
            continue
        weighted.append((counts[word] * math.log(1 + (total - n + 0.5) / (n + 0.5)), expr))
    weighted.sort(reverse=True)
    chosen = [expr for _, expr in weighted[:PRF_TERMS]]
    if not chosen:
        return hits
    extra_terms = [Term((expr.strip('"'),)) for expr in chosen]
    extra, _ = _candidates(db, " OR ".join(chosen), where, params, limit, extra_terms, cost)
    if not extra:
        return hits
    scale = max(h.score for h in hits) / (max(h.bm25 for h in extra) or 1.0)
    by_id = {h.message_id: h for h in hits}
    for hit in extra:
        if hit.message_id in by_id:  # re-rank matches; never add a message without a term
            by_id[hit.message_id].score += PRF_WEIGHT * hit.bm25 * scale
    return hits


def _window_hits(
    db: SessionStore,
    window: TimeWindow,
    hits: list[TurnHit],
    where: str,
    params: list[Any],
) -> list[TurnHit]:
    """Sessions active inside a date the query names but without a keyword hit get one
    pseudo-hit (their first message in the window) scored :data:`WINDOW_PRIOR` of the best
    hit: the date alone is evidence that the conversation is relevant."""
    have = {h.session_id for h in hits}
    best = max(h.score for h in hits)
    if window.month is not None:
        when = f"{db.month_sql('m.timestamp')} = ?"
        bounds: list[Any] = [window.month]
    else:
        when = "m.timestamp >= ? AND m.timestamp < ?"
        bounds = [window.start, window.end]
    rows = db.read(
        "SELECT MIN(m.id), m.session_id, MIN(m.timestamp) FROM messages m "
        "JOIN sessions s ON s.id = m.session_id "
        f"WHERE {when} AND {where} GROUP BY m.session_id LIMIT 50",
        [*bounds, *params],
    )
    out: list[TurnHit] = []
    for mid, sid, ts in rows:
        if sid in have:
            continue
        out.append(TurnHit(int(mid), str(sid), 0.0, float(ts), score=WINDOW_PRIOR * best))
    return out


def _speakers_of(db: SessionStore, ids: Sequence[int]) -> dict[int, str]:
    out: dict[int, str] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        rows = db.read(
            f"SELECT id, lower(name) FROM messages WHERE id IN ({','.join('?' * len(chunk))})",
            chunk,
        )
        out.update({int(r[0]): r[1] or "" for r in rows})
    return out


def _neighbours(
    db: SessionStore, hits: Iterable[TurnHit]
) -> dict[int, tuple[int | None, int | None]]:
    """For each hit, the ids of the previous and next live message of its session."""
    out: dict[int, tuple[int | None, int | None]] = {}
    for hit in hits:
        prev = db.read(
            "SELECT MAX(id) FROM messages WHERE session_id=? AND id<? AND active=1",
            (hit.session_id, hit.message_id),
        )
        nxt = db.read(
            "SELECT MIN(id) FROM messages WHERE session_id=? AND id>? AND active=1",
            (hit.session_id, hit.message_id),
        )
        out[hit.message_id] = (prev[0][0], nxt[0][0])
    return out


@dataclass(slots=True)
class _Query:
    """Stage 1 output: what to search for."""

    terms: list[Term]
    dropped: list[Term]
    named: set[str]
    explicit: bool
    match: str | None
    window: TimeWindow | None


def _is_filler(term: Term) -> bool:
    """Question scaffolding: one English word of :data:`QUESTION_FILLERS` or a Chinese
    character pair of :data:`QUESTION_FILLERS_ZH`."""
    if len(term.words) == 1:
        return term.words[0] in QUESTION_FILLERS
    return term.text in QUESTION_FILLERS_ZH


def _prepare_query(
    db: SessionStore, query: str, user_id: UserScope, now: float | None = None
) -> _Query:
    """Stage 1 — query terms: normalise, split off a named date (or, with ``now``, a time
    relative to it), drop stopwords, question scaffolding and participant names (kept aside
    for relaxation), build the MATCH."""
    query = normalize(query) if isinstance(query, str) else query
    window = query_time_window(query, now if RELATIVE_BOOST else None) if TIME_BOOST else None
    if window is not None and parse_query(window.rest):
        query = window.rest
    parsed = parse_query(query)
    terms = ranked_terms(parsed)
    if not db.fts_enabled or not terms:
        return _Query(terms, [], set(), False, None, window)
    speakers = db.speaker_names(user_id=user_id)
    named = {t.words[0] for t in terms if len(t.words) == 1 and t.words[0] in speakers}
    content = [t for t in terms if t.quoted or not (_is_filler(t) or t.words[0] in named)]
    if content:
        terms = content
    explicit = any(t.op is not None for t in parsed)
    match = build_match(query) if explicit else " OR ".join(t.to_match() for t in terms)
    dropped = [t for t in ranked_terms(parsed) if t not in terms]
    return _Query(terms, dropped, named, explicit, match or None, window)


def _relaxed_hits(
    db: SessionStore,
    q: _Query,
    hits: list[TurnHit],
    where: str,
    params: list[Any],
    candidates: int,
    cost: Cost | None = None,
) -> list[TurnHit]:
    """Stage 2b — query relaxation: when the content terms found fewer than
    :data:`RELAX_MIN_SESSIONS` sessions, the dropped names and question words are searched
    too (their hits are ranked after every primary result in :func:`_merge_relaxed`)."""
    if not q.dropped or len({h.session_id for h in hits}) >= RELAX_MIN_SESSIONS:
        return []
    relax_match = " OR ".join(t.to_match() for t in q.dropped)
    seen = {h.message_id for h in hits}
    found, _ = _candidates(db, relax_match, where, params, candidates, q.dropped, cost)
    return [h for h in found if h.message_id not in seen]


def _score_coverage(
    db: SessionStore,
    terms: Sequence[Term],
    hits: list[TurnHit],
    window: Window | None = None,
    cost: Cost | None = None,
) -> int:
    """Stage 3 — term coverage: BM25 scaled by the IDF-weighted share of the query terms a
    hit contains (inside ``window`` when the candidates were ranked in one: its postings and
    IDF, already read). Returns the archive size used for IDF."""
    if window is not None:
        total = window.span
    else:
        total = int(db.read("SELECT MAX(id) FROM messages")[0][0] or 0) or 1
    if COVERAGE_POWER and len(terms) > 1:
        if window is not None:
            wanted = {h.message_id for h in hits}
            idf = {t.to_match(): window.idf.get(t.to_match(), 0.0) for t in terms}
            cover: dict[int, set[str]] = defaultdict(set)
            for expr, ids in window.postings.items():
                for rowid in ids & wanted:
                    cover[rowid].add(expr)
        else:
            idf, cover = _term_postings(db, terms, [h.message_id for h in hits], total, cost)
        idf_sum = sum(idf.values()) or 1.0
        for hit in hits:
            matched = cover.get(hit.message_id, set())
            hit.matched = frozenset(matched)
            frac = sum(idf[t] for t in matched) / idf_sum
            hit.score = hit.bm25 * (frac**COVERAGE_POWER)
    else:
        for hit in hits:
            hit.score = hit.bm25
    return total


def _apply_dates(
    db: SessionStore, window: TimeWindow | None, hits: list[TurnHit], where: str, params: list[Any]
) -> None:
    """Stage 4 — dates named in the query boost hits inside them; sessions active then
    without a keyword hit get a :data:`WINDOW_PRIOR` pseudo-hit."""
    if window is None:
        return
    boost = RELATIVE_BOOST if window.relative else TIME_BOOST
    for hit in hits:
        if window.contains(hit.timestamp):
            hit.score *= 1.0 + boost
    if WINDOW_PRIOR and hits and (window.month is not None or math.isfinite(window.start)):
        hits.extend(_window_hits(db, window, hits, where, params))


def _apply_speakers(db: SessionStore, named: set[str], hits: list[TurnHit]) -> None:
    """Stage 5 — messages spoken by a participant the query names get
    :data:`SPEAKER_BOOST`."""
    if not SPEAKER_BOOST or not named:
        return
    speaker_of = _speakers_of(db, [h.message_id for h in hits])
    for hit in hits:
        if speaker_of.get(hit.message_id, "") in named:
            hit.score *= 1.0 + SPEAKER_BOOST


_ASKS = re.compile(r"[?？]\s*(?:\[[^\]]*\]\s*)?$")
"""A message that ends with a question ("You play any instruments?", "你去哪儿了？"; an
attachment note such as "[shared an image: …]" after it is allowed)."""


def _add_replies(db: SessionStore, hits: list[TurnHit]) -> list[TurnHit]:
    """Stage 7b — a question between people is answered by the next turn: when one of the
    best :data:`REPLY_POOL` turns is a participant's question (not the assistant's) and the
    next message of its session is also a participant's, that reply joins the *turns* with
    :data:`REPLY_SHARE` of the question's score, even without a query word ("You play any
    instruments?" → "Yeah, I play clarinet!"). The assistant's answers are left out: they
    repeat the question's words and match on their own. Called after the sessions are
    aggregated, so the session ranking never changes. Returns ``hits`` re-sorted."""
    ids = [h.message_id for h in hits[:REPLY_POOL]]
    if not ids:
        return hits
    rows = db.read(
        "SELECT m.id, m.content, (SELECT MIN(n.id) FROM messages n WHERE n.session_id = "
        "m.session_id AND n.id > m.id AND n.active = 1) FROM messages m "
        f"WHERE m.id IN ({','.join('?' * len(ids))}) AND m.role != 'assistant'",
        ids,
    )
    have = {h.message_id for h in hits}
    asks = {
        int(r[0]): int(r[2])
        for r in rows
        if r[2] is not None and int(r[2]) not in have and _ASKS.search(str(r[1] or "").strip())
    }
    if not asks:
        return hits
    replies = sorted(set(asks.values()))
    spoken = {
        int(r[0])
        for r in db.read(
            f"SELECT id FROM messages WHERE id IN ({','.join('?' * len(replies))}) "
            "AND role != 'assistant'",
            replies,
        )
    }
    added: dict[int, TurnHit] = {}
    for hit in hits[:REPLY_POOL]:
        reply = asks.get(hit.message_id)
        if reply in spoken and reply not in added:
            added[reply] = TurnHit(
                reply, hit.session_id, 0.0, hit.timestamp, score=REPLY_SHARE * hit.score
            )
    if not added:
        return hits
    return sorted([*hits, *added.values()], key=lambda h: (-h.score, h.message_id))


def _apply_neighbours(hits: list[TurnHit]) -> None:
    """Stage 6 — a hit gains :data:`NEIGHBOUR_SHARE` of its best adjacent hit's score."""
    if not NEIGHBOUR_SHARE:
        return
    base = {(h.session_id, h.message_id): h.score for h in hits}
    for hit in hits:
        sid, mid = hit.session_id, hit.message_id
        bonus = max(base.get((sid, mid - 1), 0.0), base.get((sid, mid + 1), 0.0))
        hit.score += NEIGHBOUR_SHARE * bonus


def _merge_relaxed(hits: list[TurnHit], relaxed: list[TurnHit]) -> list[TurnHit]:
    """Primary hits best first, then the relaxed hits: positive, below every (positive)
    primary hit, in their own BM25 order."""
    hits.sort(key=lambda h: (-h.score, h.message_id))
    ceiling = 0.5 * min((h.score for h in hits if h.score > 0), default=2.0)
    top_relaxed = max((h.bm25 for h in relaxed), default=1.0) or 1.0
    for hit in relaxed:
        hit.score = ceiling * max(hit.bm25, 0.0) / top_relaxed
    hits.extend(sorted(relaxed, key=lambda h: (-h.score, h.message_id)))
    return hits


def _aggregate_sessions(
    db: SessionStore, hits: Sequence[TurnHit], demoted_sources: Sequence[str]
) -> list[SessionHit]:
    """Stage 7 — a session scores its best hit plus decaying shares of the next best
    (:data:`SESSION_DECAY`); sessions from ``demoted_sources`` are scaled by
    :data:`DEMOTION`. Best first."""
    by_session: dict[str, list[TurnHit]] = defaultdict(list)
    for hit in hits:
        by_session[hit.session_id].append(hit)
    sessions: list[SessionHit] = []
    for sid, shits in by_session.items():
        score = sum(w * h.score for w, h in zip(SESSION_DECAY, shits, strict=False))
        sessions.append(SessionHit(sid, score, shits[0].message_id, shits))
    if demoted_sources and sessions:
        ids = [s.session_id for s in sessions]
        marks = ",".join("?" * len(ids))
        demoted = {
            row[0]
            for row in db.read(
                f"SELECT id FROM sessions WHERE id IN ({marks}) AND source IN "
                f"({','.join('?' * len(demoted_sources))})",
                [*ids, *demoted_sources],
            )
        }
        for session_hit in sessions:
            if session_hit.session_id in demoted:
                session_hit.score *= DEMOTION
    sessions.sort(key=lambda s: (-s.score, s.anchor_message_id))
    return sessions


def asks_to_count_or_list(query: str) -> bool:
    """Whether ``query`` counts ("how many", "how much", 多少, 几个: an amount is the answer,
    :func:`~hermes_core.recall_pack.answer_cue`) or lists ("what instruments …", 哪些:
    :data:`LIST_QUESTION`): its answer is spread over sessions."""
    cue = answer_cue(query)
    return (cue is not None and cue.kind == "number") or LIST_QUESTION.search(query) is not None


def _order_own_words(
    db: SessionStore, hits: list[TurnHit], mine: bool, named: set[str], query: str = ""
) -> list[TurnHit]:
    """Stage 9 — the best :data:`OWN_WORDS_POOL` turns re-ordered with the scores of the
    messages written by the person the question is about ×(1 + :data:`OWN_WORDS_BOOST`):
    the user's own messages when ``mine`` (a first-person question), the messages spoken by
    a participant the query names (``named``); then, for a question that counts or lists
    (:func:`asks_to_count_or_list` on ``query``), the n-th of a session's turns in that order
    ×:data:`SPREAD`^n. ``hits`` best first; scores and the session ranking are left as they
    are."""
    spread = SPREAD < 1.0 and asks_to_count_or_list(query)
    if not mine and not named and not spread:
        return hits
    pool, rest = hits[:OWN_WORDS_POOL], hits[OWN_WORDS_POOL:]
    ids = [h.message_id for h in pool]
    owners = _user_messages(db, ids) if mine else set()
    if named:
        owners |= {i for i, who in _speakers_of(db, ids).items() if who in named}
    factor = {mid: 1.0 + OWN_WORDS_BOOST for mid in owners}
    pool.sort(key=lambda h: (-h.score * factor.get(h.message_id, 1.0), h.message_id))
    if spread:  # the n-th turn of a session (in that order) ×SPREAD^n
        seen: dict[str, int] = defaultdict(int)
        for hit in pool:
            factor[hit.message_id] = (
                factor.get(hit.message_id, 1.0) * SPREAD ** seen[hit.session_id]
            )
            seen[hit.session_id] += 1
        pool.sort(key=lambda h: (-h.score * factor.get(h.message_id, 1.0), h.message_id))
    return [*pool, *rest]


def rank(
    db: SessionStore,
    query: str,
    filters: SearchFilters | None = None,
    *,
    candidates: int | None = None,
    now: float | None = None,
) -> Ranking:
    """Rank messages and sessions for ``query`` through the stages listed in the module
    docstring. ``now`` (epoch seconds of the question; ``session_search`` passes the current
    time) resolves relative times in the query ("two weeks ago", "上周六"); without it only
    absolute dates are read. Never raises for odd query text; returns an empty ranking when
    nothing is searchable or FTS5 is unavailable."""
    filters = filters or SearchFilters()
    candidates = CANDIDATES if candidates is None else candidates
    q = _prepare_query(db, query, filters.user_id, now)
    if q.match is None:
        return Ranking([], [], q.terms, None, Cost())
    where, params = _filter_sql(filters)
    cost = Cost()
    hits, window = _candidates(db, q.match, where, params, candidates, q.terms, cost)
    relaxed = _relaxed_hits(db, q, hits, where, params, candidates, cost)
    if not hits and not relaxed:
        return Ranking([], [], q.terms, q.match, cost)
    total = _score_coverage(db, q.terms, hits, window, cost)
    if PRF_WEIGHT and hits and not q.explicit:
        floor = window.floor if window is not None else 0
        hits = _feedback(db, hits, q.terms, q.named, where, params, candidates, total, cost, floor)
    _apply_dates(db, q.window, hits, where, params)
    _apply_speakers(db, q.named, hits)
    _apply_neighbours(hits)
    hits = _merge_relaxed(hits, relaxed)
    sessions = _aggregate_sessions(db, hits, filters.demoted_sources)
    if REPLY_SHARE:
        hits = _add_replies(db, hits)
    if OWN_WORDS_BOOST:
        hits = _order_own_words(db, hits, about_the_asker(query), q.named, query)
    return Ranking(hits, sessions, q.terms, q.match, cost)


__all__ = ["Cost", "Ranking", "SearchFilters", "SessionHit", "TurnHit", "Window", "rank"]
