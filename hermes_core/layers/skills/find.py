"""``skills_find`` and ``skill_feedback``: relevance blended with a track record.

Relevance is lexical, fused with an embedding ranking when the optional embedder is installed
(:func:`fuse`; vectors from :mod:`hermes_core.layers.skills.semantic`). Lexical relevance is
SQLite FTS5 BM25 over four columns (name, description, tags + category, body;
weights 6/4/4/1) in an in-memory table rebuilt when the library changes. The tokenizer is
``porter unicode61``; CJK characters are space-separated before indexing and queries use CJK
bigram phrases, so Chinese works without a segmenter (unicode61 alone would index a whole
run of Chinese as one token). The final score is
``0.8 * relevance / best_relevance + 0.2 * (successes + 1) / (uses + 2)``: the track record
re-orders close candidates but never lifts an irrelevant skill: lexically only FTS hits are
ranked; with the embedder only skills whose cosine stands out from the library's baseline
(FTS hits need less, see :func:`fuse`).

Outcomes and views live in hermes-core's own database (``$HERMES_HOME/state.db``, or
``hermes_core.db`` beside a Hermes Agent ``state.db``: :mod:`hermes_core.homefiles`), tables
``skill_outcomes`` and ``skill_usage`` (created idempotently; WAL; busy timeout; other tables
are never touched).
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import sqlite3
import threading
import time
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from hermes_core.homefiles import own_db_path
from hermes_core.layers.skills.library import Skill
from hermes_core.text import CJK_RUN, space_cjk

log = logging.getLogger(__name__)

STATE_DB = "state.db"
RELEVANCE_WEIGHT = 0.8
TRACK_RECORD_WEIGHT = 0.2
NOTE_MAX_CHARS = 2000
BM25_WEIGHTS = (6.0, 4.0, 4.0, 1.0)

_WORD = re.compile(r"[a-z0-9]+")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_STOPWORDS = _words(
    """a an and are as at be but by can could do does doing for from get got has have how i
    i'm in into is it its me my need of on or our please should so some that the their them
    then there these this to up us want was we what when where which while who why will with
    would you your help make sure just also like one about any all"""
)
_CJK_STOP_BIGRAMS = _words(
    "一个 一下 怎么 如何 我们 我的 这个 那个 帮我 需要 可以 然后 什么 时候 现在 已经 应该 "
    "的时 时候 一些 是不 不是 能不 不能 有没 没有 为什 什么 么办 怎样 之后 以后 里的 给我 "
    "请帮 帮忙 我想 想要 要把 把这"
)


def split_cjk(text: str) -> str:
    """``text`` with every CJK character surrounded by spaces (for unicode61 indexing)."""
    return space_cjk(text)


def build_match_query(task: str) -> str:
    """An FTS5 MATCH expression for free text: OR of quoted English terms (stop words
    dropped) and CJK bigram phrases. ``""`` when nothing is searchable."""
    text = unicodedata.normalize("NFKC", task).lower()
    terms: list[str] = []
    seen: set[str] = set()

    def add(term: str) -> None:
        if term not in seen:
            seen.add(term)
            terms.append(term)

    for run in CJK_RUN.findall(text):
        if len(run) == 1:
            add(f'"{run}"')
            continue
        for i in range(len(run) - 1):
            bigram = run[i : i + 2]
            if bigram not in _CJK_STOP_BIGRAMS:
                add(f'"{bigram[0]} {bigram[1]}"')
    for word in _WORD.findall(CJK_RUN.sub(" ", text)):
        if len(word) > 1 and word not in _STOPWORDS:
            add(f'"{word}"')
    return " OR ".join(terms[:64])


@dataclass(frozen=True, slots=True)
class SkillStats:
    """Recorded use of one skill."""

    successes: int = 0
    failures: int = 0
    views: int = 0
    last_used: float | None = None

    @property
    def uses(self) -> int:
        """Recorded outcomes."""
        return self.successes + self.failures

    @property
    def success_rate(self) -> float:
        """Laplace-smoothed: 0.5 with no outcomes."""
        return (self.successes + 1) / (self.uses + 2)


_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS skill_outcomes (
        id INTEGER PRIMARY KEY,
        skill TEXT NOT NULL,
        outcome TEXT NOT NULL CHECK (outcome IN ('success', 'failure')),
        note TEXT,
        session_id TEXT,
        created_at REAL NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS idx_skill_outcomes_skill ON skill_outcomes(skill)",
    """CREATE TABLE IF NOT EXISTS skill_usage (
        skill TEXT PRIMARY KEY,
        views INTEGER NOT NULL DEFAULT 0,
        last_viewed_at REAL
    )""",
)


class SkillStatsStore:
    """The skill tables of ``state.db``. Each call opens and closes its own connection."""

    def __init__(self, home: Path) -> None:
        self.path = own_db_path(home)

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        created = not self.path.exists()
        conn = sqlite3.connect(self.path, timeout=10.0)
        try:
            if created:
                self.path.chmod(0o600)  # before WAL: the -wal/-shm sidecars copy this mode
            conn.execute("PRAGMA busy_timeout = 10000")
            conn.execute("PRAGMA journal_mode = WAL")
            with conn:
                for statement in _SCHEMA:
                    conn.execute(statement)
        except BaseException:
            conn.close()  # a locked or unreadable state.db must not leak the connection
            raise
        return conn

    def record_outcome(
        self, skill: str, outcome: str, note: str | None = None, session_id: str = ""
    ) -> SkillStats:
        """Store one outcome and return the skill's updated stats."""
        conn = self._connect()
        try:
            with conn:
                conn.execute(
                    "INSERT INTO skill_outcomes (skill, outcome, note, session_id, created_at) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (skill, outcome, note, session_id, time.time()),
                )
        finally:
            conn.close()
        return self.stats([skill]).get(skill, SkillStats())

    def record_view(self, skill: str) -> None:
        """Count one ``skill_view`` of ``skill``."""
        conn = self._connect()
        try:
            with conn:
                conn.execute(
                    "INSERT INTO skill_usage (skill, views, last_viewed_at) VALUES (?, 1, ?) "
                    "ON CONFLICT(skill) DO UPDATE SET views = views + 1, "
                    "last_viewed_at = excluded.last_viewed_at",
                    (skill, time.time()),
                )
        finally:
            conn.close()

    def stats_or_empty(self, names: Iterable[str] | None = None) -> dict[str, SkillStats]:
        """:meth:`stats`, or ``{}`` (with a warning logged) when state.db cannot be read:
        ranking and listing then work without the track record instead of failing."""
        try:
            return self.stats(names)
        except (sqlite3.Error, OSError) as exc:
            log.warning(
                "skill usage stats unavailable (%s: %s); move %s aside if it is damaged",
                type(exc).__name__,
                exc,
                self.path,
            )
            return {}

    def stats(self, names: Iterable[str] | None = None) -> dict[str, SkillStats]:
        """Stats per skill name (all recorded skills when ``names`` is None)."""
        conn = self._connect()
        try:
            rows = conn.execute(
                "SELECT skill, SUM(outcome = 'success'), SUM(outcome = 'failure'), "
                "MAX(created_at) FROM skill_outcomes GROUP BY skill"
            ).fetchall()
            views = conn.execute("SELECT skill, views, last_viewed_at FROM skill_usage").fetchall()
        finally:
            conn.close()
        out: dict[str, SkillStats] = {}
        for skill, ok, bad, last in rows:
            out[skill] = SkillStats(successes=int(ok or 0), failures=int(bad or 0), last_used=last)
        for skill, count, last in views:
            prev = out.get(skill, SkillStats())
            latest = max(x for x in (prev.last_used, last, 0.0) if x is not None)
            out[skill] = SkillStats(prev.successes, prev.failures, int(count), latest or None)
        if names is not None:
            wanted = set(names)
            out = {k: v for k, v in out.items() if k in wanted}
        return out


@dataclass(frozen=True, slots=True)
class Ranked:
    """One ``skills_find`` result."""

    skill: Skill
    score: float
    relevance: float
    stats: SkillStats


class _FtsIndex:
    def __init__(self, skills: Sequence[Skill]) -> None:
        self.conn = sqlite3.connect(":memory:", check_same_thread=False)
        self.conn.execute(
            "CREATE VIRTUAL TABLE skills_fts USING fts5(name, description, tags, body, "
            "tokenize = 'porter unicode61 remove_diacritics 2')"
        )
        self.names: list[str] = []
        rows = []
        for rowid, skill in enumerate(skills, start=1):
            self.names.append(skill.name)
            meta = skill.meta
            name_text = f"{meta.name} {re.sub(r'[._-]+', ' ', meta.name)}"
            tags = " ".join([*meta.tags, skill.category.replace("/", " ")])
            rows.append(
                (
                    rowid,
                    *(
                        split_cjk(unicodedata.normalize("NFKC", part))
                        for part in (name_text, meta.description, tags, skill.doc.body)
                    ),
                )
            )
        with self.conn:
            self.conn.executemany(
                "INSERT INTO skills_fts (rowid, name, description, tags, body) VALUES (?,?,?,?,?)",
                rows,
            )
        self.lock = threading.Lock()

    def search(self, query: str, limit: int) -> list[tuple[str, float]]:
        with self.lock:
            rows = self.conn.execute(
                "SELECT rowid, bm25(skills_fts, ?, ?, ?, ?) AS score FROM skills_fts "
                "WHERE skills_fts MATCH ? ORDER BY score LIMIT ?",
                (*BM25_WEIGHTS, query, limit),
            ).fetchall()
        return [(self.names[rowid - 1], -float(score)) for rowid, score in rows]


_INDEXES: dict[str, _FtsIndex] = {}
_INDEX_LOCK = threading.Lock()


def _library_key(skills: Sequence[Skill]) -> str:
    parts = []
    for skill in skills:
        try:
            st = skill.skill_md.stat()
            parts.append([skill.name, str(skill.skill_md), st.st_mtime_ns, st.st_size])
        except OSError:
            parts.append([skill.name, str(skill.skill_md), 0, 0])
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


def _index_for(skills: Sequence[Skill]) -> _FtsIndex:
    key = _library_key(skills)
    with _INDEX_LOCK:
        index = _INDEXES.get(key)
        if index is None:
            if len(_INDEXES) >= 8:
                _INDEXES.pop(next(iter(_INDEXES))).conn.close()
            index = _INDEXES[key] = _FtsIndex(skills)
        return index


SEMANTIC_MARGIN = 0.18
"""How far above its baseline (see :func:`fuse`) a skill's cosine must be for the skill to
become a candidate on the embedding ranking alone (no word in common with the task).
Nonsense queries stay below it: every skill is about equally (dis)similar to them."""
LEXICAL_SUPPORT = 0.05
"""With the embedder on, a skill that shares words with the task is a candidate only if its
cosine is at least this far above its baseline: one shared common word ("tell", "match")
is not enough when the meaning is unrelated."""
LEXICAL_SHARE = 0.3
"""Share of the fused relevance that comes from BM25 when the embedder is on."""
LEXICAL_SATURATION = 10.0
"""BM25 evidence is ``bm25 / (bm25 + LEXICAL_SATURATION)`` when fused: absolute, so a lone
weak hit is not promoted to full lexical evidence just because it is the best of the hits."""
SCRIPT_GROUP_MIN = 5
"""A script group (CJK or Latin skills) needs this many skills to get its own baseline; a
library with fewer visible skills keeps every FTS hit (its median is no baseline)."""


def text_script(text: str) -> str:
    """``"cjk"`` when CJK characters carry the text (one character counting as half a Latin
    word's letters), else ``"latin"``."""
    cjk = sum(len(run) for run in CJK_RUN.findall(text))
    latin = sum(1 for ch in text if ch.isascii() and ch.isalpha())
    return "cjk" if cjk and cjk * 2 >= latin else "latin"


def _upper_median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2] if ordered else 0.0


def fuse(
    lexical: Mapping[str, float],
    semantic: Mapping[str, float] | None,
    scripts: Mapping[str, str] | None = None,
) -> dict[str, float]:
    """Relevance in [0, 1] per candidate skill.

    Lexical only (``semantic`` None): BM25 / best BM25, FTS hits only.

    With the embedder (``semantic``: cosine per skill, every visible skill), each skill's
    cosine is measured against a *baseline*: the median cosine of the skills written in the
    same script (``scripts``: name → ``"cjk"``/``"latin"``, see :func:`text_script`) when
    that group has at least ``SCRIPT_GROUP_MIN`` skills, else the median over all skills.
    The multilingual encoder scores same-language pairs higher, so a Chinese task would
    otherwise lift every Chinese skill above the English one it is about. The margin
    ``m = cosine - baseline`` is rescaled so the best margin is 1, and relevance is
    ``LEXICAL_SHARE * bm25 / (bm25 + LEXICAL_SATURATION) + (1 - LEXICAL_SHARE) * m``.

    Candidates: skills with ``m >= SEMANTIC_MARGIN`` (a Chinese task finds an English skill
    with no word in common), and FTS hits with ``m >= LEXICAL_SUPPORT``. A task unrelated to
    every skill returns nothing, even when it shares a common word with one of them. Below
    ``SCRIPT_GROUP_MIN`` visible skills a median says little, so every FTS hit is kept.
    """
    if semantic is None:
        best_lex = max(lexical.values(), default=0.0) or 1.0
        return {name: score / best_lex for name, score in lexical.items()}
    if not semantic:
        return {}
    scripts = scripts or {}
    overall = _upper_median(list(semantic.values()))
    groups: dict[str, list[float]] = {}
    for name, cosine in semantic.items():
        groups.setdefault(scripts.get(name, "latin"), []).append(cosine)
    baseline = {
        script: _upper_median(values) if len(values) >= SCRIPT_GROUP_MIN else overall
        for script, values in groups.items()
    }
    margin = {
        name: cosine - baseline[scripts.get(name, "latin")] for name, cosine in semantic.items()
    }
    span = max(margin.values())
    support = LEXICAL_SUPPORT if len(semantic) >= SCRIPT_GROUP_MIN else float("-inf")
    out: dict[str, float] = {}
    for name, m in margin.items():
        if m < SEMANTIC_MARGIN and not (name in lexical and m >= support):
            continue
        bm25 = max(0.0, lexical.get(name, 0.0))
        lex = bm25 / (bm25 + LEXICAL_SATURATION)
        sem = max(0.0, min(1.0, m / span)) if span > 0 else 0.0
        out[name] = LEXICAL_SHARE * lex + (1 - LEXICAL_SHARE) * sem
    return out


def rank_skills(
    skills: Sequence[Skill],
    task: str,
    stats: dict[str, SkillStats] | None = None,
    *,
    limit: int = 5,
    semantic: Mapping[str, float] | None = None,
) -> list[Ranked]:
    """Skills relevant to ``task``, best first (see module doc for the blend).

    ``semantic`` maps skill names to the cosine similarity of ``task`` (from
    :class:`~hermes_core.layers.skills.semantic.SkillVectors`); None ranks lexically only.
    """
    if not skills or not task.strip():
        return []
    query = build_match_query(task)
    hits = _index_for(skills).search(query, max(limit * 4, 20)) if query else []
    scripts = (
        {skill.name: text_script(skill.meta.description or skill.meta.name) for skill in skills}
        if semantic is not None
        else None
    )
    relevance = fuse(dict(hits), semantic, scripts)
    if not relevance:
        return []
    by_name = {skill.name: skill for skill in skills}
    stats = stats or {}
    best = max(relevance.values()) or 1.0
    ranked = []
    for name, value in relevance.items():
        if name not in by_name or value <= 0:
            continue
        record = stats.get(name, SkillStats())
        score = RELEVANCE_WEIGHT * (value / best) + TRACK_RECORD_WEIGHT * record.success_rate
        ranked.append(Ranked(by_name[name], round(score, 4), round(value, 4), record))
    ranked.sort(key=lambda r: (-r.score, r.skill.name))
    return ranked[:limit]


__all__ = [
    "NOTE_MAX_CHARS",
    "Ranked",
    "SkillStats",
    "SkillStatsStore",
    "build_match_query",
    "fuse",
    "rank_skills",
    "split_cjk",
    "text_script",
]
