"""The fact store: SQLite tables + an FTS5 index + optional HRR vectors, scoped by user.

Every row carries ``user_id`` and every method takes one; no query runs without it, so one
user's facts can never surface in another's results. Schema::

    facts(id, user_id, content, content_hash, category, tags JSON, trust, helpful,
          unhelpful, retrieval_count, created_at, updated_at)   UNIQUE(user_id, content_hash)
    entities(id, user_id, name, norm)                           UNIQUE(user_id, norm)
    fact_entities(fact_id, entity_id, user_id)
    facts_fts(body, user_id UNINDEXED)  -- fts5 unicode61, rowid = facts.id, CJK split
    hrr_vectors(fact_id, user_id, dim, vec)

Trust moves by feedback (+0.05 helpful, −0.10 unhelpful) and explicit deltas, clamped to
[0, 1]. Recall filters ``trust >= min_trust``.

The HRR vectors of a user are read from ``hrr_vectors`` once and then kept in memory
(:mod:`vectors`), updated by fact id on every add, update, feedback and removal; a search
reads no vector rows (another process's writes are noticed through ``data_version``).

The keyword side is bounded too: a query matching many facts is ranked by ``bm25()`` in a
recent window of fact ids (about :data:`WINDOW_TARGET` matches), widened only while it
yields too few of the user's facts, plus the query's rare phrases over the whole store
(:meth:`FactStore._keyword`); ``keyword_rows_ranked`` counts what was ranked.
"""

from __future__ import annotations

import json
import math
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_memory_holographic import hrr as hrr_mod
from hermes_memory_holographic.text import (
    content_hash,
    extract_entities,
    fts_phrases,
    has_negation,
    normalise,
    split_cjk,
    terms,
)
from hermes_memory_holographic.vectors import UserVectors, VectorCache

CATEGORIES = ("user_pref", "project", "tool", "general")
HELPFUL_DELTA = 0.05
UNHELPFUL_DELTA = -0.10
MAX_CONTENT = 2000
MAX_TAGS = 20
VECTOR_CANDIDATES = 50
"""Facts found by HRR similarity alone that a search considers (the best by cosine)."""
WINDOW_MIN = 1024
"""The smallest window (fact ids) a broad keyword query is ranked in."""
WINDOW_TARGET = 400
"""Matches a keyword window should hold before it is ranked."""
EXACT_MAX = 2000
"""Keyword queries matching at most about this many facts are ranked over the whole store."""
RARE_MAX = 100
"""A phrase matching at most this many facts is also searched outside the window."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS facts(
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id TEXT NOT NULL,
    content TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    category TEXT NOT NULL DEFAULT 'general',
    tags TEXT NOT NULL DEFAULT '[]',
    trust REAL NOT NULL,
    helpful INTEGER NOT NULL DEFAULT 0,
    unhelpful INTEGER NOT NULL DEFAULT 0,
    retrieval_count INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    UNIQUE(user_id, content_hash)
);
CREATE INDEX IF NOT EXISTS facts_user_trust ON facts(user_id, trust);
CREATE TABLE IF NOT EXISTS entities(
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id TEXT NOT NULL,
    name TEXT NOT NULL,
    norm TEXT NOT NULL,
    UNIQUE(user_id, norm)
);
CREATE TABLE IF NOT EXISTS fact_entities(
    fact_id INTEGER NOT NULL REFERENCES facts(id) ON DELETE CASCADE,
    entity_id INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    user_id TEXT NOT NULL,
    PRIMARY KEY(fact_id, entity_id)
);
CREATE INDEX IF NOT EXISTS fact_entities_entity ON fact_entities(entity_id, user_id);
CREATE VIRTUAL TABLE IF NOT EXISTS facts_fts USING fts5(
    body, user_id UNINDEXED, tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TABLE IF NOT EXISTS hrr_vectors(
    fact_id INTEGER PRIMARY KEY REFERENCES facts(id) ON DELETE CASCADE,
    user_id TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vec BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS hrr_user ON hrr_vectors(user_id);
"""


class FactStoreError(ValueError):
    """Bad input or an unknown fact; the message says how to fix the call."""


@dataclass(frozen=True, slots=True)
class Fact:
    id: int
    user_id: str
    content: str
    category: str
    tags: tuple[str, ...]
    trust: float
    helpful: int
    unhelpful: int
    retrieval_count: int
    created_at: float
    updated_at: float
    entities: tuple[str, ...] = ()
    score: float | None = None
    reason: str | None = field(default=None)

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "fact_id": self.id,
            "content": self.content,
            "category": self.category,
            "tags": list(self.tags),
            "trust": round(self.trust, 3),
            "entities": list(self.entities),
        }
        if self.score is not None:
            out["score"] = round(self.score, 4)
        return out


def _clamp(value: float) -> float:
    return max(0.0, min(1.0, value))


class FactStore:
    """One SQLite file; thread-safe (a lock around one connection).

    The keyword window sizes (:attr:`window_min`, :attr:`window_target`,
    :attr:`exact_max`, :attr:`rare_max`) default to the module constants; tests shrink
    them to reach the windowed path with small stores."""

    window_min = WINDOW_MIN
    window_target = WINDOW_TARGET
    exact_max = EXACT_MAX
    rare_max = RARE_MAX

    def __init__(
        self,
        path: Path,
        *,
        default_trust: float = 0.5,
        hrr_dim: int = 1024,
        hrr_weight: float = 0.3,
        use_hrr: bool = True,
        half_life_days: float = 0.0,
        clock: Any = time.time,
    ) -> None:
        self.path = Path(path)
        self.default_trust = default_trust
        self.hrr_weight = hrr_weight
        self.half_life_days = half_life_days
        self._clock = clock
        self.hrr: hrr_mod.HRR | None = (
            hrr_mod.HRR(hrr_dim) if use_hrr and hrr_mod.available() else None
        )
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30)
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA foreign_keys = ON")
        self._db.execute("PRAGMA journal_mode = WAL")
        with self._db:
            self._db.executescript(_SCHEMA)
        try:
            self.path.chmod(0o600)
        except OSError:
            pass
        self._closed = False
        self.keyword_rows_ranked = 0
        """Keyword index rows ranked by searches so far (the bounded part of a search)."""
        self.reencoded = self._reencode_stale()
        self._vectors_cache = VectorCache(self.hrr.np, self.hrr.dim) if self.hrr else None
        self._data_version = self._version()

    @property
    def vector_rows_read(self) -> int:
        """HRR vector rows read from SQLite so far (whole-matrix loads plus single rows)."""
        return self._vectors_cache.rows_read if self._vectors_cache is not None else 0

    @contextmanager
    def _txn(self, user_id: str) -> Iterator[None]:
        """One write transaction under the lock; a failed one drops ``user_id``'s cached
        vectors (the next search reads them again) so the cache never shows a rollback."""
        with self._lock:
            try:
                with self._db:
                    yield
            except BaseException:
                if self._vectors_cache is not None:
                    self._vectors_cache.drop(user_id)
                raise

    def _version(self) -> int:
        return int(self._db.execute("PRAGMA data_version").fetchone()[0])

    def _reencode_stale(self) -> int:
        """Give every fact an HRR vector of the current ``hrr_dim``: facts written with
        another dimension, or while numpy was missing, would otherwise drop out of the
        vector half of search. Returns how many were (re)encoded (0 without HRR)."""
        if self.hrr is None:
            return 0
        with self._lock, self._db:
            stale = self._db.execute(
                "SELECT f.id, f.user_id, f.content, f.tags FROM facts f "
                "LEFT JOIN hrr_vectors v ON v.fact_id = f.id "
                "WHERE v.fact_id IS NULL OR v.dim != ?",
                (self.hrr.dim,),
            ).fetchall()
            for row in stale:
                entities = self._entity_names(row["id"])
                tags = json.loads(row["tags"] or "[]")
                self._write_vector(row["id"], row["user_id"], row["content"], tags, entities)
        return len(stale)

    # ------------------------------------------------------------ lifecycle

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                self._db.close()

    # ------------------------------------------------------------ helpers

    @staticmethod
    def _need_user(user_id: str) -> str:
        if not isinstance(user_id, str) or not user_id:
            raise FactStoreError("user_id is required")
        return user_id

    def _entity_names(self, fact_id: int) -> list[str]:
        """Names of the entities linked to one fact."""
        return [
            r["name"]
            for r in self._db.execute(
                "SELECT e.name FROM fact_entities fe JOIN entities e "
                "ON e.id = fe.entity_id WHERE fe.fact_id = ?",
                (fact_id,),
            )
        ]

    def _fact(self, row: sqlite3.Row, **extra: Any) -> Fact:
        ents = tuple(
            r["name"]
            for r in self._db.execute(
                "SELECT e.name FROM fact_entities fe JOIN entities e ON e.id = fe.entity_id "
                "WHERE fe.fact_id = ? AND fe.user_id = ? ORDER BY e.name",
                (row["id"], row["user_id"]),
            )
        )
        return Fact(
            id=int(row["id"]),
            user_id=row["user_id"],
            content=row["content"],
            category=row["category"],
            tags=tuple(json.loads(row["tags"] or "[]")),
            trust=float(row["trust"]),
            helpful=int(row["helpful"]),
            unhelpful=int(row["unhelpful"]),
            retrieval_count=int(row["retrieval_count"]),
            created_at=float(row["created_at"]),
            updated_at=float(row["updated_at"]),
            entities=ents,
            **extra,
        )

    def _row(self, user_id: str, fact_id: int) -> sqlite3.Row:
        row = self._db.execute(
            "SELECT * FROM facts WHERE id = ? AND user_id = ?", (int(fact_id), user_id)
        ).fetchone()
        if row is None:
            raise FactStoreError(f"no fact with id {fact_id} (ids come from search or list)")
        return row  # type: ignore[no-any-return]

    @staticmethod
    def _check_content(content: str) -> str:
        if not isinstance(content, str) or not content.strip():
            raise FactStoreError("'content' is required: pass the fact as a non-empty string")
        content = content.strip()
        if len(content) > MAX_CONTENT:
            raise FactStoreError(f"'content' is too long ({len(content)} chars; max {MAX_CONTENT})")
        return content

    @staticmethod
    def _check_category(category: str | None) -> str:
        category = category or "general"
        if category not in CATEGORIES:
            raise FactStoreError(f"'category' must be one of {', '.join(CATEGORIES)}")
        return category

    @staticmethod
    def _check_tags(tags: Iterable[str] | str | None) -> tuple[str, ...]:
        if tags is None:
            return ()
        if isinstance(tags, str):
            tags = [t for t in tags.replace(",", " ").split() if t]
        out = []
        for tag in tags:
            if not isinstance(tag, str):
                raise FactStoreError("'tags' must be a list of strings")
            if tag.strip():
                out.append(tag.strip())
        if len(out) > MAX_TAGS:
            raise FactStoreError(f"at most {MAX_TAGS} tags")
        return tuple(dict.fromkeys(out))

    def _index(
        self, fact_id: int, user_id: str, content: str, tags: Sequence[str], entities: Sequence[str]
    ) -> None:
        """(Re)write the entity links, FTS row and HRR vector of one fact."""
        db = self._db
        db.execute("DELETE FROM fact_entities WHERE fact_id = ?", (fact_id,))
        for name in entities:
            norm = normalise(name)
            if not norm:
                continue
            db.execute(
                "INSERT OR IGNORE INTO entities(user_id, name, norm) VALUES (?, ?, ?)",
                (user_id, name, norm),
            )
            ent_id = db.execute(
                "SELECT id FROM entities WHERE user_id = ? AND norm = ?", (user_id, norm)
            ).fetchone()["id"]
            db.execute(
                "INSERT OR IGNORE INTO fact_entities(fact_id, entity_id, user_id) VALUES (?,?,?)",
                (fact_id, ent_id, user_id),
            )
        body = split_cjk(" ".join([content, *tags, *entities]))
        db.execute("DELETE FROM facts_fts WHERE rowid = ?", (fact_id,))
        db.execute(
            "INSERT INTO facts_fts(rowid, body, user_id) VALUES (?, ?, ?)", (fact_id, body, user_id)
        )
        self._write_vector(fact_id, user_id, content, tags, entities)

    def _write_vector(
        self,
        fact_id: int,
        user_id: str,
        content: str,
        tags: Sequence[str],
        entities: Sequence[str],
    ) -> None:
        """(Re)write the HRR vector of one fact at the current ``hrr_dim`` (no-op without
        HRR)."""
        if self.hrr is None:
            return
        vec = self.hrr.encode_fact(
            terms(" ".join([content, *tags])), [normalise(e) for e in entities]
        )
        self._db.execute(
            "INSERT OR REPLACE INTO hrr_vectors(fact_id, user_id, dim, vec) VALUES (?,?,?,?)",
            (fact_id, user_id, self.hrr.dim, self.hrr.to_bytes(vec)),
        )

    # ------------------------------------------------------------ writes

    def add(
        self,
        user_id: str,
        content: str,
        *,
        category: str | None = None,
        tags: Iterable[str] | str | None = None,
        entities: Iterable[str] | None = None,
        trust: float | None = None,
    ) -> tuple[Fact, bool]:
        """Store a fact; ``(fact, created)``. Re-adding the same text (case/space-insensitive)
        returns the existing fact with ``created=False``."""
        user_id = self._need_user(user_id)
        content = self._check_content(content)
        category = self._check_category(category)
        tag_list = self._check_tags(tags)
        if entities is not None and (
            isinstance(entities, str) or not all(isinstance(e, str) for e in entities)
        ):
            raise FactStoreError("'entities' must be a list of strings")
        names = list(dict.fromkeys([*(entities or []), *extract_entities(content)]))
        names = [n.strip() for n in names if n and n.strip()]
        now = float(self._clock())
        digest = content_hash(content)
        with self._txn(user_id):
            existing = self._db.execute(
                "SELECT * FROM facts WHERE user_id = ? AND content_hash = ?", (user_id, digest)
            ).fetchone()
            if existing is not None:
                return self._fact(existing), False
            cur = self._db.execute(
                "INSERT INTO facts(user_id, content, content_hash, category, tags, trust, "
                "created_at, updated_at) VALUES (?,?,?,?,?,?,?,?)",
                (
                    user_id,
                    content,
                    digest,
                    category,
                    json.dumps(list(tag_list), ensure_ascii=False),
                    _clamp(self.default_trust if trust is None else float(trust)),
                    now,
                    now,
                ),
            )
            fact_id = int(cur.lastrowid or 0)
            self._index(fact_id, user_id, content, tag_list, names)
            self._refresh_vector(user_id, fact_id)
            return self._fact(self._row(user_id, fact_id)), True

    def update(
        self,
        user_id: str,
        fact_id: int,
        *,
        content: str | None = None,
        trust_delta: float | None = None,
        tags: Iterable[str] | str | None = None,
        category: str | None = None,
    ) -> Fact:
        """Change content/tags/category and/or move trust by ``trust_delta`` (clamped)."""
        user_id = self._need_user(user_id)
        with self._txn(user_id):
            row = self._row(user_id, fact_id)
            new_content = row["content"] if content is None else self._check_content(content)
            new_tags = tuple(json.loads(row["tags"])) if tags is None else self._check_tags(tags)
            new_category = row["category"] if category is None else self._check_category(category)
            trust = float(row["trust"])
            if trust_delta is not None:
                if (
                    isinstance(trust_delta, bool)
                    or not isinstance(trust_delta, int | float)
                    or (not math.isfinite(float(trust_delta)))
                ):
                    raise FactStoreError("'trust_delta' must be a number, e.g. 0.1 or -0.2")
                trust = _clamp(trust + float(trust_delta))
            digest = content_hash(new_content)
            clash = self._db.execute(
                "SELECT id FROM facts WHERE user_id = ? AND content_hash = ? AND id != ?",
                (user_id, digest, row["id"]),
            ).fetchone()
            if clash is not None:
                raise FactStoreError(f"fact {clash['id']} already has this content; remove one")
            self._db.execute(
                "UPDATE facts SET content=?, content_hash=?, tags=?, category=?, trust=?, "
                "updated_at=? WHERE id=? AND user_id=?",
                (
                    new_content,
                    digest,
                    json.dumps(list(new_tags), ensure_ascii=False),
                    new_category,
                    trust,
                    float(self._clock()),
                    row["id"],
                    user_id,
                ),
            )
            if content is not None or tags is not None:
                old_entities = self._entity_names(row["id"])
                auto_old = {normalise(n) for n in extract_entities(row["content"])}
                kept = [n for n in old_entities if normalise(n) not in auto_old]
                names = list(dict.fromkeys([*kept, *extract_entities(new_content)]))
                self._index(int(row["id"]), user_id, new_content, new_tags, names)
            self._refresh_vector(user_id, int(row["id"]))
            return self._fact(self._row(user_id, fact_id))

    def feedback(self, user_id: str, fact_id: int, helpful: bool) -> Fact:
        """+0.05 trust when helpful, −0.10 when not (clamped to [0, 1])."""
        user_id = self._need_user(user_id)
        delta = HELPFUL_DELTA if helpful else UNHELPFUL_DELTA
        column = "helpful" if helpful else "unhelpful"
        with self._txn(user_id):
            row = self._row(user_id, fact_id)
            self._db.execute(
                f"UPDATE facts SET trust = ?, {column} = {column} + 1, updated_at = ? "
                "WHERE id = ? AND user_id = ?",
                (_clamp(float(row["trust"]) + delta), float(self._clock()), row["id"], user_id),
            )
            self._refresh_vector(user_id, int(row["id"]))
            return self._fact(self._row(user_id, fact_id))

    def remove(self, user_id: str, fact_id: int) -> Fact:
        """Delete a fact with its index rows; returns what was removed."""
        user_id = self._need_user(user_id)
        with self._txn(user_id):
            fact = self._fact(self._row(user_id, fact_id))
            self._db.execute("DELETE FROM facts_fts WHERE rowid = ?", (fact.id,))
            self._db.execute("DELETE FROM facts WHERE id = ? AND user_id = ?", (fact.id, user_id))
            self._db.execute(
                "DELETE FROM entities WHERE user_id = ? AND id NOT IN "
                "(SELECT entity_id FROM fact_entities WHERE user_id = ?)",
                (user_id, user_id),
            )
            self._refresh_vector(user_id, fact.id)
            return fact

    def remove_many(self, user_id: str, fact_ids: Iterable[int]) -> list[Fact]:
        """Delete these facts of ``user_id`` (unknown ids are skipped); returns the removed."""
        removed = []
        for fact_id in fact_ids:
            try:
                removed.append(self.remove(user_id, int(fact_id)))
            except (FactStoreError, ValueError):
                continue
        return removed

    def remove_user(self, user_id: str) -> int:
        """Delete every fact, entity, index row and vector of ``user_id``; returns the facts."""
        user_id = self._need_user(user_id)
        with self._txn(user_id):
            ids = [
                int(r["id"])
                for r in self._db.execute("SELECT id FROM facts WHERE user_id = ?", (user_id,))
            ]
            self._db.executemany("DELETE FROM facts_fts WHERE rowid = ?", [(i,) for i in ids])
            self._db.execute("DELETE FROM facts WHERE user_id = ?", (user_id,))
            self._db.execute("DELETE FROM entities WHERE user_id = ?", (user_id,))
            if self._vectors_cache is not None:
                self._vectors_cache.drop(user_id)
        return len(ids)

    def optimize_index(self) -> None:
        """Merge the full-text index into one segment, so the terms of deleted facts leave
        the file (FTS5 otherwise keeps them in older segments until a merge)."""
        with self._lock, self._db:
            self._db.execute("INSERT INTO facts_fts(facts_fts) VALUES ('optimize')")

    def mark_retrieved(self, user_id: str, ids: Iterable[int]) -> None:
        """Count one retrieval of each fact. The commit is not synced to disk on its own
        (``synchronous = NORMAL`` for this transaction: a recall pays no fsync); the next
        durable commit or checkpoint carries it, and a power cut can lose only these
        counters, never a fact."""
        params = [(int(i), user_id) for i in ids]
        if not params:
            return
        with self._lock:
            mode = int(self._db.execute("PRAGMA synchronous").fetchone()[0])
            self._db.execute("PRAGMA synchronous = NORMAL")
            try:
                with self._db:
                    self._db.executemany(
                        "UPDATE facts SET retrieval_count = retrieval_count + 1 "
                        "WHERE id = ? AND user_id = ?",
                        params,
                    )
            finally:
                self._db.execute(f"PRAGMA synchronous = {mode}")

    # ------------------------------------------------------------ reads

    def get(self, user_id: str, fact_id: int) -> Fact | None:
        with self._lock:
            try:
                return self._fact(self._row(self._need_user(user_id), fact_id))
            except FactStoreError:
                return None

    def list_facts(
        self, user_id: str, *, category: str | None = None, min_trust: float = 0.0, limit: int = 10
    ) -> list[Fact]:
        """Facts by trust (highest first), then newest."""
        user_id = self._need_user(user_id)
        sql = "SELECT * FROM facts WHERE user_id = ? AND trust >= ?"
        params: list[Any] = [user_id, float(min_trust)]
        if category:
            sql += " AND category = ?"
            params.append(self._check_category(category))
        sql += " ORDER BY trust DESC, updated_at DESC, id DESC LIMIT ?"
        params.append(int(limit))
        with self._lock:
            return [self._fact(r) for r in self._db.execute(sql, params)]

    def users(self) -> list[str]:
        """User ids that have facts."""
        with self._lock:
            return [
                str(r["user_id"])
                for r in self._db.execute("SELECT DISTINCT user_id FROM facts ORDER BY user_id")
            ]

    def all_facts(self, user_id: str) -> list[Fact]:
        """Every fact of ``user_id`` whatever its trust, newest change first."""
        user_id = self._need_user(user_id)
        with self._lock:
            return [
                self._fact(r)
                for r in self._db.execute(
                    "SELECT * FROM facts WHERE user_id = ? ORDER BY updated_at DESC, id DESC",
                    (user_id,),
                )
            ]

    def count(self, user_id: str) -> int:
        with self._lock:
            row = self._db.execute(
                "SELECT count(*) AS n FROM facts WHERE user_id = ?", (self._need_user(user_id),)
            ).fetchone()
            return int(row["n"])

    def _count(self, match: str, floor: int = 0) -> int:
        """Index rows (every user's) above id ``floor`` matching ``match``; no ranking."""
        return int(
            self._db.execute(
                "SELECT count(*) FROM facts_fts WHERE facts_fts MATCH ? AND rowid > ?",
                (match, int(floor)),
            ).fetchone()[0]
        )

    def _window_floor(self, match: str, newest: int) -> tuple[int, int]:
        """``(floor, matches)``: the id range above ``floor`` that a keyword query ranks and
        how many index rows in it match. The smallest recent window (at least
        :attr:`window_min` ids, grown geometrically) holding :attr:`window_target`
        matches; ``floor`` 0 (the whole store) when the store is smaller than that or all
        its matches are few enough (:attr:`exact_max`) to rank exactly. Each probe counts
        only the matches inside its window, so deciding costs about twice the matches
        finally ranked."""
        span = self.window_min
        while span < newest:
            matches = self._count(match, newest - span)
            if matches >= self.window_target:
                if matches * newest / span <= self.exact_max:
                    break
                return newest - span, matches
            grow = math.ceil(self.window_target * 1.25 / max(matches, 1))
            span *= max(2, min(grow, 16))
        return 0, self._count(match)

    def _ranked(
        self, user_id: str, match: str, floor: int, min_trust: float, limit: int
    ) -> list[sqlite3.Row]:
        """``user_id``'s best ``limit`` facts (trust ≥ ``min_trust``) among the index rows
        above id ``floor`` matching ``match``, by FTS5 ``bm25()`` (column ``rank``)."""
        return self._db.execute(
            "SELECT f.*, bm25(facts_fts) AS rank FROM facts_fts "
            "JOIN facts f ON f.id = facts_fts.rowid "
            "WHERE facts_fts MATCH ? AND facts_fts.rowid > ? AND f.user_id = ? "
            "AND f.trust >= ? ORDER BY rank LIMIT ?",
            (match, int(floor), user_id, float(min_trust), int(limit)),
        ).fetchall()

    def _keyword(
        self, user_id: str, query: str, *, min_trust: float, limit: int, mode: str = "OR"
    ) -> list[tuple[sqlite3.Row, float]]:
        """``user_id``'s best ``limit`` keyword matches with their bm25 relevance scaled to
        (0, 1], best first.

        Bounded whatever the store's size: a query matching more than :attr:`exact_max`
        facts is ranked in a recent window of fact ids holding about
        :attr:`window_target` matches (:meth:`_window_floor`), widened ×4 while it yields
        fewer than ``limit`` of the user's facts. An ``OR`` query then also ranks, over
        the whole store, the facts matching its rare phrases (at most :attr:`rare_max`
        facts each), so an old fact that shares a rare word with the query is still found.
        :attr:`keyword_rows_ranked` counts the index rows ranked."""
        phrases = fts_phrases(query)
        if not phrases:
            return []
        match = f" {mode} ".join(phrases)
        newest = int(self._db.execute("SELECT max(id) FROM facts").fetchone()[0] or 0)
        floor, matches = self._window_floor(match, newest)
        while True:
            self.keyword_rows_ranked += matches
            rows = self._ranked(user_id, match, floor, min_trust, limit)
            if floor == 0 or len(rows) >= limit:
                break
            floor = max(0, newest - 4 * (newest - floor))
            matches = self._count(match, floor)
        scored = {int(r["id"]): (r, -float(r["rank"])) for r in rows}
        if floor > 0 and mode == "OR" and len(phrases) > 1:
            rare = [p for p in phrases if self._rare(p)]
            if rare:
                rare_match = " OR ".join(rare)
                self.keyword_rows_ranked += self._count(rare_match)
                for r in self._ranked(user_id, rare_match, 0, min_trust, limit):
                    scored.setdefault(int(r["id"]), (r, -float(r["rank"])))
        if not scored:
            return []
        ranked = sorted(scored.values(), key=lambda x: (-x[1], -int(x[0]["id"])))[:limit]
        best = max(s for _, s in ranked) or 1.0
        return [(r, max(0.0, s) / best) for r, s in ranked]

    def _rare(self, phrase: str) -> bool:
        """Whether at most :attr:`rare_max` index rows match ``phrase`` (reads at most one
        more than that)."""
        found = self._db.execute(
            "SELECT count(*) FROM (SELECT 1 FROM facts_fts WHERE facts_fts MATCH ? LIMIT ?)",
            (phrase, self.rare_max + 1),
        ).fetchone()[0]
        return 0 < int(found) <= self.rare_max

    def _user_vectors(self, user_id: str) -> UserVectors:
        """``user_id``'s in-memory matrix, read from SQLite on first use (and again after
        another process wrote to the database)."""
        cache = self._vectors_cache
        assert cache is not None and self.hrr is not None
        version = self._version()
        if version != self._data_version:
            self._data_version = version
            cache.drop()
        loaded = cache.get(user_id)
        if loaded is None:
            rows = self._db.execute(
                "SELECT v.fact_id, v.vec, f.trust FROM hrr_vectors v JOIN facts f "
                "ON f.id = v.fact_id WHERE v.user_id = ? AND f.user_id = ? AND v.dim = ?",
                (user_id, user_id, self.hrr.dim),
            )
            loaded = cache.load(
                user_id, ((int(r["fact_id"]), r["vec"], float(r["trust"])) for r in rows)
            )
        return loaded

    def _refresh_vector(self, user_id: str, fact_id: int) -> None:
        """Bring one fact's cached row in step with the database (after a committed write)."""
        cache = self._vectors_cache
        if cache is None or self.hrr is None:
            return
        loaded = cache.get(user_id)
        if loaded is None:
            return
        row = self._db.execute(
            "SELECT v.vec, f.trust FROM hrr_vectors v JOIN facts f ON f.id = v.fact_id "
            "WHERE v.fact_id = ? AND v.user_id = ? AND f.user_id = ? AND v.dim = ?",
            (int(fact_id), user_id, user_id, self.hrr.dim),
        ).fetchone()
        if row is None:
            loaded.remove(int(fact_id))
            return
        cache.rows_read += 1
        loaded.put(
            int(fact_id),
            self.hrr.np.frombuffer(row["vec"], dtype=self.hrr.np.float32),
            float(row["trust"]),
        )

    def _unit(self, key: Any) -> Any:
        assert self.hrr is not None
        np = self.hrr.np
        norm = float(np.linalg.norm(key))
        return (key / norm if norm > 0 else key).astype(np.float32)

    def _blend_vectors(
        self, user_id: str, key: Any, min_trust: float, scores: dict[int, float], limit: int
    ) -> None:
        """Add ``hrr_weight`` × cosine to the keyword ``scores`` and add the facts most
        similar to ``key`` that the keyword pass missed (cosine > 0.2, the best
        ``max(5 × limit, VECTOR_CANDIDATES)``; trust ≥ ``min_trust``). One matrix-vector
        product; the Python work is bounded by the candidates, not the store."""
        assert self.hrr is not None
        np, w = self.hrr.np, self.hrr_weight
        vectors = self._user_vectors(user_id)
        if not len(vectors):
            return
        cos = vectors.scores(self._unit(key))
        ok = vectors.trusted(min_trust)
        free = ok & (cos > np.float64(0.2))
        for fid in list(scores):
            row = vectors.row(fid)
            if row is None:
                continue
            if ok[row]:
                scores[fid] += w * max(0.0, float(cos[row]))
            free[row] = False  # already a keyword hit
        want = max(limit * 5, VECTOR_CANDIDATES)
        rows = np.flatnonzero(free)
        if len(rows) > want:  # every row tied with the want-th best, then the exact order
            values = cos[rows]
            rows = rows[values >= np.partition(values, len(values) - want)[len(values) - want]]
        ids = vectors.ids
        best = sorted(((float(cos[r]), int(ids[r])) for r in rows), key=lambda x: (-x[0], -x[1]))
        for c, fid in best[:want]:  # similar by terms the keyword pass ranked out
            scores[fid] = w * c

    def _cosines_of(
        self, user_id: str, key: Any, min_trust: float, fact_ids: Iterable[int]
    ) -> dict[int, float]:
        """Cosine with ``key`` of those ``fact_ids`` that have a vector and trust ≥
        ``min_trust`` (one matrix-vector product, then lookups by id)."""
        vectors = self._user_vectors(user_id)
        if not len(vectors):
            return {}
        cos = vectors.scores(self._unit(key))
        ok = vectors.trusted(min_trust)
        out: dict[int, float] = {}
        for fid in fact_ids:
            row = vectors.row(fid)
            if row is not None and ok[row]:
                out[fid] = float(cos[row])
        return out

    def _decay(self, row: sqlite3.Row) -> float:
        if self.half_life_days <= 0:
            return 1.0
        age_days = max(0.0, (float(self._clock()) - float(row["updated_at"])) / 86400.0)
        return float(0.5 ** (age_days / self.half_life_days))

    def search(
        self,
        user_id: str,
        query: str,
        *,
        min_trust: float = 0.3,
        limit: int = 10,
        category: str | None = None,
    ) -> list[Fact]:
        """Keyword (FTS5 bm25) relevance blended with HRR similarity (weight ``hrr_weight``)
        when numpy is available, times a trust factor and the temporal decay."""
        user_id = self._need_user(user_id)
        if not isinstance(query, str) or not query.strip():
            raise FactStoreError("'query' is required: pass what to look for")
        if category:
            category = self._check_category(category)
        with self._lock:
            hits = self._keyword(user_id, query, min_trust=min_trust, limit=max(limit * 5, 50))
            scores: dict[int, float] = {}
            rows: dict[int, sqlite3.Row] = {}
            w = self.hrr_weight if self.hrr is not None else 0.0
            for row, rel in hits:
                rows[int(row["id"])] = row
                scores[int(row["id"])] = (1 - w) * rel
            if self.hrr is not None and w > 0:
                q_terms = terms(query)
                if q_terms:
                    key = self.hrr.role_sum(hrr_mod.CONTENT_ROLE, q_terms)
                    self._blend_vectors(user_id, key, min_trust, scores, limit)
            missing = [fid for fid in scores if fid not in rows]
            if missing:  # one query for the similarity-only candidates (at most 50)
                marks = ",".join("?" * len(missing))
                # ``+user_id``: look the ids up by primary key; the (user_id, trust) index
                # would walk every fact of the user
                for row in self._db.execute(
                    f"SELECT * FROM facts WHERE id IN ({marks}) AND +user_id = ?",
                    (*missing, user_id),
                ):
                    rows[int(row["id"])] = row
                for fid in [fid for fid in missing if fid not in rows]:
                    del scores[fid]  # removed meanwhile: nothing to show
            ranked = []
            for fid, base in scores.items():
                row = rows[fid]
                if category and row["category"] != category:
                    continue
                final = base * (0.5 + 0.5 * float(row["trust"])) * self._decay(row)
                ranked.append((final, fid))
            ranked.sort(key=lambda x: (-x[0], -x[1]))
            return [self._fact(rows[fid], score=s) for s, fid in ranked[:limit]]

    def _entity_fact_ids(self, user_id: str, name: str) -> set[int]:
        return {
            int(r["fact_id"])
            for r in self._db.execute(
                "SELECT fe.fact_id FROM fact_entities fe JOIN entities e ON e.id = fe.entity_id "
                "WHERE e.user_id = ? AND fe.user_id = ? AND e.norm = ?",
                (user_id, user_id, normalise(name)),
            )
        }

    def _by_ids(
        self, user_id: str, scored: dict[int, float], min_trust: float, limit: int
    ) -> list[Fact]:
        out = []
        for fid, score in sorted(scored.items(), key=lambda x: (-x[1], -x[0])):
            row = self._db.execute(
                "SELECT * FROM facts WHERE id = ? AND user_id = ? AND trust >= ?",
                (fid, user_id, float(min_trust)),
            ).fetchone()
            if row is not None:
                out.append(self._fact(row, score=score))
            if len(out) >= limit:
                break
        return out

    def _probe_scores(
        self, user_id: str, names: Sequence[str], min_trust: float
    ) -> list[dict[int, float]]:
        """Per entity: fact id → score (HRR cosine on the entity role, or keyword rank)."""
        out: list[dict[int, float]] = []
        for name in names:
            scores: dict[int, float] = {fid: 1.0 for fid in self._entity_fact_ids(user_id, name)}
            if self.hrr is not None and scores:
                key = self.hrr.bind(
                    self.hrr.symbol(hrr_mod.ENTITY_ROLE), self.hrr.symbol(normalise(name))
                )
                for fid, c in self._cosines_of(user_id, key, min_trust, list(scores)).items():
                    scores[fid] = max(c, 0.05)
            # Mentions that were not linked as entities (e.g. lower-case names): keywords.
            for row, rel in self._keyword(
                user_id, name, min_trust=min_trust, limit=200, mode="AND"
            ):
                scores.setdefault(int(row["id"]), 0.04 * rel)
            out.append(scores)
        return out

    @staticmethod
    def _need_entity(entity: str) -> str:
        if not isinstance(entity, str) or not entity.strip():
            raise FactStoreError("'entity' is required: pass a name, e.g. 'PostgreSQL'")
        return entity.strip()

    def probe(
        self, user_id: str, entity: str, *, min_trust: float = 0.3, limit: int = 10
    ) -> list[Fact]:
        """All facts about ``entity``: facts linked to it, ranked by HRR match strength when
        numpy is available, then facts that merely mention the name (keyword search)."""
        user_id = self._need_user(user_id)
        entity = self._need_entity(entity)
        with self._lock:
            (scores,) = self._probe_scores(user_id, [entity], min_trust)
            return self._by_ids(user_id, scores, min_trust, limit)

    def related(
        self, user_id: str, entity: str, *, min_trust: float = 0.3, limit: int = 10
    ) -> list[Fact]:
        """Facts one hop away: about entities that share a fact with ``entity``, excluding
        the facts about ``entity`` itself."""
        user_id = self._need_user(user_id)
        entity = self._need_entity(entity)
        with self._lock:
            own = self._entity_fact_ids(user_id, entity)
            neighbours: list[str] = []
            if own:
                marks = ",".join("?" * len(own))
                neighbours = [
                    r["name"]
                    for r in self._db.execute(
                        "SELECT DISTINCT e.name FROM fact_entities fe JOIN entities e "
                        "ON e.id = fe.entity_id WHERE fe.user_id = ? AND e.user_id = ? "
                        f"AND e.norm != ? AND fe.fact_id IN ({marks})",
                        (user_id, user_id, normalise(entity), *sorted(own)),
                    )
                ]
            if not own:  # nothing linked: keyword neighbours
                for row, _ in self._keyword(user_id, entity, min_trust=min_trust, limit=20):
                    own.add(int(row["id"]))
                    neighbours.extend(self._fact(row).entities)
                neighbours = [n for n in neighbours if normalise(n) != normalise(entity)]
            scored: dict[int, float] = {}
            for per in self._probe_scores(user_id, list(dict.fromkeys(neighbours)), min_trust):
                for fid, s in per.items():
                    if fid not in own:
                        scored[fid] = max(scored.get(fid, 0.0), s)
            return self._by_ids(user_id, scored, min_trust, limit)

    def reason(
        self, user_id: str, entities: Sequence[str], *, min_trust: float = 0.3, limit: int = 10
    ) -> list[Fact]:
        """Facts tied to every one of ``entities`` (ranked by the weakest tie)."""
        user_id = self._need_user(user_id)
        if (
            isinstance(entities, str)
            or not isinstance(entities, Sequence)
            or len([e for e in entities if isinstance(e, str) and e.strip()]) < 2
        ):
            raise FactStoreError("'entities' needs at least two names, e.g. ['Alice', 'Atlas']")
        names = [e.strip() for e in entities if isinstance(e, str) and e.strip()]
        with self._lock:
            per = self._probe_scores(user_id, names, min_trust)
            common = set(per[0])
            for s in per[1:]:
                common &= set(s)
            scored = {fid: min(s[fid] for s in per) for fid in common}
            return self._by_ids(user_id, scored, min_trust, limit)

    def contradict(
        self, user_id: str, *, entity: str | None = None, limit: int = 10
    ) -> list[tuple[Fact, Fact, str]]:
        """Pairs of facts that look contradictory: same subject (a shared entity or most
        content terms in common) and one negates what the other states, or they give
        different numbers for it."""
        user_id = self._need_user(user_id)
        with self._lock:
            if entity:
                ids = sorted(self._entity_fact_ids(user_id, self._need_entity(entity)))
                rows = [self._row(user_id, i) for i in ids]
            else:
                rows = self._db.execute(
                    "SELECT * FROM facts WHERE user_id = ? ORDER BY id DESC LIMIT 500", (user_id,)
                ).fetchall()
            facts = [self._fact(r) for r in rows]
        pairs: list[tuple[Fact, Fact, str]] = []
        info = [
            (
                f,
                set(terms(f.content)),
                {normalise(e) for e in f.entities},
                has_negation(f.content),
                set(_numbers(f.content)),
            )
            for f in facts
        ]
        for i, (a, ta, ea, na, numa) in enumerate(info):
            for b, tb, eb, nb, numb in info[i + 1 :]:
                jaccard = len(ta & tb) / max(1, len(ta | tb))
                if jaccard < 0.5 and not (ea & eb and jaccard >= 0.4):
                    continue
                if na != nb:
                    pairs.append((a, b, "one negates the other"))
                elif numa and numb and numa != numb:
                    pairs.append((a, b, "different numbers for the same subject"))
                if len(pairs) >= limit:
                    return pairs
        return pairs


def _numbers(text: str) -> list[str]:
    import re

    return re.findall(r"\d+(?:\.\d+)?", text)


__all__ = ["CATEGORIES", "Fact", "FactStore", "FactStoreError"]
