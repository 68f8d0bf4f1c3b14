"""The BM25 side index: SQLite FTS5 at ``$HERMES_HOME/chroma/fts.db``.

It holds the *active* memories only (superseded and deleted ones are removed), with the user
id as an unindexed column that every query must name (there is no method that searches
across users) and as an indexed ``owner`` token (``u`` + 20 hex digits of its SHA-256) that
every MATCH starts with, so FTS5 itself restricts a search to the user's rows instead of
reading the user id of every match. The owner column has weight 0 in ``bm25()``: scores
are those of the text alone.

Bounded keyword search (:meth:`FtsIndex.search`): a user with at most :data:`EXACT_ROWS`
texts is searched exactly (FTS5 ``bm25()`` over every match, as always). A larger one is
ranked in a window of their :data:`WINDOW_ROWS` newest texts (×4 while it yields fewer
candidates than asked): each query word's postings inside the window give its IDF and the
candidates, scored by BM25 with FTS5's own text lengths (``bm25()`` itself would count every
word's matches in the whole index). A word found at most :data:`RARE_MAX` times in the
window is also looked up in the older texts, and when it is that rare there too its old
matches join the ranking, so an old memory sharing a rare word with the question is still
found. The rows read per search stay bounded however large the store grows
(:attr:`FtsIndex.last_cost`, :attr:`FtsIndex.rows_ranked`).

``memory_rows`` maps ``(user_id, mem_id)`` to the FTS rowid, so replacing or
deleting one text touches one row instead of scanning the index. Chinese and Japanese are
indexed with spaces between CJK characters so ``unicode61`` (with the ``porter`` stemmer
for English) can match 1-2 character words. It also keeps recall statistics (how often and
when a memory was last recalled), which drive TTL expiry.
"""

from __future__ import annotations

import hashlib
import logging
import math
import sqlite3
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_memory_chroma.text import fts_phrase, fts_query, split_cjk

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE VIRTUAL TABLE IF NOT EXISTS memory_fts USING fts5(
    content, mem_id UNINDEXED, user_id UNINDEXED, owner, tokenize='porter unicode61'
);
CREATE TABLE IF NOT EXISTS recall (
    mem_id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    count INTEGER NOT NULL DEFAULT 0,
    last_at REAL
);
CREATE INDEX IF NOT EXISTS recall_user ON recall(user_id);
CREATE TABLE IF NOT EXISTS outbox (
    user_id TEXT NOT NULL,
    mem_id TEXT NOT NULL,
    target TEXT NOT NULL,
    document TEXT NOT NULL,
    metadata TEXT NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (user_id, mem_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS memory_rows (
    user_id TEXT NOT NULL,
    mem_id TEXT NOT NULL,
    row INTEGER NOT NULL,
    hash TEXT,
    type TEXT,
    PRIMARY KEY (user_id, mem_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS retired (
    user_id TEXT NOT NULL,
    mem_id TEXT NOT NULL,
    PRIMARY KEY (user_id, mem_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS retired_complete (user_id TEXT PRIMARY KEY);
"""
_HASH_INDEX = "CREATE INDEX IF NOT EXISTS memory_rows_hash ON memory_rows(user_id, hash)"
_ROW_INDEX = "CREATE INDEX IF NOT EXISTS memory_rows_row ON memory_rows(row)"
_ROWS_VERSION = 1
"""``PRAGMA user_version`` once ``memory_rows`` maps every indexed text to its FTS rowid."""
_OWNER_VERSION = 2
"""``PRAGMA user_version`` once every row carries its ``owner`` token."""
_BM25 = "bm25(memory_fts, 1.0, 0.0, 0.0, 0.0)"
"""Text-only BM25 (the owner token scores nothing)."""

EXACT_ROWS = 1000
"""Users with at most this many indexed texts are searched exactly (``bm25()`` over every
match); larger ones in a window of their newest texts."""
WINDOW_ROWS = 250
"""The user's newest texts a search of a large store ranks first (×4 while it finds fewer
candidates than asked)."""
RARE_MAX = 50
"""A query word found in at most this many texts of the window is also looked up in the
older texts (up to this many): a word that rare there too brings its old matches in."""
PHRASE_DF_CAP = 2000
"""CJK phrase document frequencies are counted up to this many texts."""
DF_REFRESH = 0.05
"""Cached document frequencies are dropped once the index grew or shrank by this share."""

# Per-connection helpers for pseudo-relevance feedback (:mod:`feedback`): a scratch table
# tokenised exactly like the index, so a word's index term (its porter stem) comes from FTS5
# itself, and the index's vocabulary, which gives each term's document frequency.
_TERM_SCHEMA = """
PRAGMA temp_store = MEMORY;
CREATE VIRTUAL TABLE IF NOT EXISTS temp.term_probe USING fts5(
    word, tokenize='porter unicode61'
);
CREATE VIRTUAL TABLE IF NOT EXISTS temp.term_probe_vocab
    USING fts5vocab(temp, term_probe, instance);
CREATE VIRTUAL TABLE IF NOT EXISTS temp.memory_vocab USING fts5vocab(main, memory_fts, row);
"""


_STEM_CACHE = 100_000


def _first_varint(data: bytes) -> int:
    """The first SQLite varint of ``data`` (FTS5 docsize records are one per column)."""
    value = 0
    for i, byte in enumerate(data[:9]):
        if i == 8:
            return (value << 8) | byte
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value
    return value


def owner_token(user_id: str) -> str:
    """The indexed token standing for ``user_id`` in the ``owner`` column (one unicode61
    token: a letter and hex digits)."""
    return "u" + hashlib.sha256(user_id.encode("utf-8")).hexdigest()[:20]


@dataclass(frozen=True, slots=True)
class SearchCost:
    """What one :meth:`FtsIndex.search` read: ``rows_ranked`` matches scored (by FTS5's
    ``bm25()``, or by the window's BM25), ``counted`` postings read to score a window and
    look up rare words, ``windows`` windows tried (0: ranked exactly over all the user's
    matches)."""

    rows_ranked: int = 0
    counted: int = 0
    windows: int = 0


class FtsIndex:
    """Thread-safe FTS5 index of memory texts, partitioned by user id."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.RLock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        with self._db:
            self._migrate_owner()
            self._db.executescript(_SCHEMA)
            if int(self._db.execute("PRAGMA user_version").fetchone()[0]) < _ROWS_VERSION:
                # indexes written before the row map: map them once (one scan, at open)
                self._db.execute(
                    "INSERT OR REPLACE INTO memory_rows(user_id, mem_id, row) "
                    "SELECT user_id, mem_id, rowid FROM memory_fts"
                )
            cols = [r[1] for r in self._db.execute("PRAGMA table_info(memory_rows)")]
            for col in ("hash", "type"):
                if col not in cols:  # row maps written before the duplicate keys
                    self._db.execute(f"ALTER TABLE memory_rows ADD COLUMN {col} TEXT")
            self._db.execute(_HASH_INDEX)
            self._db.execute(_ROW_INDEX)
            self._db.execute(f"PRAGMA user_version = {_OWNER_VERSION}")
        self._db.executescript(_TERM_SCHEMA)
        self._total: int | None = None
        self._stems: dict[str, str] = {}  # word -> index term; the tokenizer never changes
        self._df: dict[str, int] = {}  # index term or CJK phrase -> texts containing it
        self._df_at = 0  # total() when the cache was started
        self._sizes: dict[str, int] = {}  # user -> their indexed texts
        self.rows_ranked = 0
        """Matches scored by ``bm25()`` over this index's life (cost counter for tests)."""
        self.last_cost = SearchCost()
        try:
            path.chmod(0o600)
        except OSError:
            pass

    def _migrate_owner(self) -> None:
        """Indexes written before the ``owner`` column: rebuilt once with it (same rowids,
        so the row map stays valid)."""
        cols = [r[1] for r in self._db.execute("PRAGMA table_info(memory_fts)").fetchall()]
        if not cols or "owner" in cols:
            return
        self._db.create_function("owner_token", 1, owner_token, deterministic=True)
        self._db.execute("ALTER TABLE memory_fts RENAME TO memory_fts_v1")
        self._db.executescript(_SCHEMA.split(";")[0] + ";")
        self._db.execute(
            "INSERT INTO memory_fts(rowid, content, mem_id, user_id, owner) "
            "SELECT rowid, content, mem_id, user_id, owner_token(user_id) FROM memory_fts_v1"
        )
        self._db.execute("DROP TABLE memory_fts_v1")

    def _drop_rows(self, user_id: str, mem_ids: Sequence[str]) -> int:
        """Delete the FTS rows of ``mem_ids`` by rowid (through the row map: a lookup on the
        unindexed ``mem_id`` column would scan the whole index). Returns how many went."""
        dropped = 0
        for mem_id in mem_ids:
            found = self._db.execute(
                "SELECT row FROM memory_rows WHERE user_id = ? AND mem_id = ?", (user_id, mem_id)
            ).fetchone()
            if found is not None:
                self._db.execute("DELETE FROM memory_fts WHERE rowid = ?", (found[0],))
                self._db.execute(
                    "DELETE FROM memory_rows WHERE user_id = ? AND mem_id = ?", (user_id, mem_id)
                )
                dropped += 1
        return dropped

    def upsert(
        self,
        user_id: str,
        items: Iterable[tuple[str, str]],
        keys: Mapping[str, tuple[str, str]] | None = None,
    ) -> None:
        """Index ``(mem_id, content)`` pairs for ``user_id`` (replacing earlier text);
        ``keys`` gives each memory's ``(content hash, type)`` for :meth:`by_hash`."""
        keys = keys or {}
        owner = owner_token(user_id)
        rows = [(split_cjk(content), mem_id, user_id, owner) for mem_id, content in items]
        if not rows:
            return
        with self._lock, self._db:
            self._shift_total(user_id, len(rows) - self._drop_rows(user_id, [r[1] for r in rows]))
            for row in rows:
                cur = self._db.execute(
                    "INSERT INTO memory_fts(content, mem_id, user_id, owner) VALUES (?, ?, ?, ?)",
                    row,
                )
                digest, mem_type = keys.get(row[1], (None, None))
                self._db.execute(
                    "INSERT OR REPLACE INTO memory_rows(user_id, mem_id, row, hash, type) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (user_id, row[1], cur.lastrowid, digest, mem_type),
                )

    def delete(self, user_id: str, mem_ids: Sequence[str]) -> None:
        """Remove ``mem_ids`` of ``user_id`` from the index and the recall table."""
        if not mem_ids:
            return
        pairs = [(m, user_id) for m in mem_ids]
        with self._lock, self._db:
            self._shift_total(user_id, -self._drop_rows(user_id, list(mem_ids)))
            self._db.executemany("DELETE FROM recall WHERE mem_id = ? AND user_id = ?", pairs)

    def delete_user(self, user_id: str) -> int:
        """Remove every row of ``user_id``; returns the number of indexed texts removed."""
        with self._lock, self._db:
            self._total = None
            cur = self._db.execute("DELETE FROM memory_fts WHERE user_id = ?", (user_id,))
            self._db.execute("DELETE FROM memory_rows WHERE user_id = ?", (user_id,))
            self._sizes.pop(user_id, None)
            self._db.execute("DELETE FROM recall WHERE user_id = ?", (user_id,))
            return cur.rowcount

    def search(self, user_id: str, query: str, limit: int) -> list[tuple[str, float]]:
        """BM25 hits of ``user_id`` for free text ``query``: ``(mem_id, score)``, best first
        (score is the negated FTS5 bm25, larger is better). Empty when nothing matches.

        Bounded: a broad query on a large store is ranked in a recent window plus the
        matches of its rare words (module doc); :attr:`last_cost` says what was ranked."""
        expr = fts_query(query)
        if expr is None:
            return []
        owner = owner_token(user_id)
        match = f"owner:{owner} AND ({expr})"
        with self._lock:
            try:
                hits, cost = self._ranked(user_id, owner, match, expr, limit)
            except sqlite3.OperationalError as exc:  # an expression FTS5 refuses
                log.debug("keyword search skipped for %r: %s", expr, exc)
                hits, cost = [], SearchCost()
            self.last_cost = cost
            self.rows_ranked += cost.rows_ranked
        return hits

    def _rank(
        self, user_id: str, match: str, limit: int, floor: int = 0
    ) -> tuple[list[tuple[str, float]], int]:
        """The best ``limit`` of ``user_id``'s matches above rowid ``floor`` and how many
        were ranked (``count(*) OVER ()``: the sort saw them all anyway). Only rowids and
        scores are sorted; the id and owner of the best rows are read afterwards (the owner
        token in ``match`` already restricts the rows to the user, re-checked here)."""
        top = self._db.execute(
            "SELECT r, s, n FROM (SELECT r, s, count(*) OVER () AS n FROM "
            f"(SELECT rowid AS r, {_BM25} AS s FROM memory_fts "
            "WHERE memory_fts MATCH ? AND rowid > ?)) ORDER BY s, r LIMIT ?",
            (match, floor, limit),
        ).fetchall()
        if not top:
            return [], 0
        hits = self._owned(user_id, [(int(r), -float(score)) for r, score, _ in top])
        return hits, int(top[0][2])

    def _floor(self, user_id: str, texts: int) -> int:
        """The rowid below the window of ``user_id``'s ``texts`` newest texts (0 when they
        have no more than that): a walk of ``texts`` postings of the owner token."""
        row = self._db.execute(
            "SELECT rowid FROM memory_fts WHERE memory_fts MATCH ? ORDER BY rowid DESC "
            "LIMIT 1 OFFSET ?",
            (f"owner:{owner_token(user_id)}", texts),
        ).fetchone()
        return int(row[0]) if row else 0

    def _postings(
        self, match: str, above: int = 0, below: int | None = None, *, cap: bool = True
    ) -> set[int]:
        """Rowids matching ``match`` in ``(above, below]``; with ``below`` and ``cap``, at
        most ``RARE_MAX + 1`` of them."""
        sql = "SELECT rowid FROM memory_fts WHERE memory_fts MATCH ? AND rowid > ?"
        args: list[Any] = [match, above]
        if below is not None:
            sql += " AND rowid <= ?"
            args.append(below)
            if cap:
                sql += " LIMIT ?"
                args.append(RARE_MAX + 1)
        return {row for (row,) in self._db.execute(sql, args)}

    def _ranked(
        self, user_id: str, owner: str, match: str, expr: str, limit: int
    ) -> tuple[list[tuple[str, float]], SearchCost]:
        size = self._user_size(user_id)
        if size <= EXACT_ROWS:
            hits, ranked = self._rank(user_id, match, limit)
            return hits, SearchCost(rows_ranked=ranked)
        terms = expr.split(" OR ")
        texts, counted, windows = WINDOW_ROWS, 0, 0
        while True:
            windows += 1
            floor = self._floor(user_id, texts) if texts < size else 0
            mine = self._postings(f"owner:{owner}", floor)
            if floor > 0 and max(mine, default=floor) - floor <= 2 * len(mine):
                # the window is mostly this user's rows: a word alone is cheaper for FTS5
                # than the word AND the owner token, and reads at most twice the window
                top = max(mine)
                postings = {t: self._postings(t, floor, top, cap=False) & mine for t in terms}
            else:  # other users' rows interleave: keep FTS5 on this user's rows
                postings = {t: self._postings(f"owner:{owner} AND {t}", floor) for t in terms}
            counted += sum(len(found) for found in postings.values())
            rows = set().union(*postings.values())
            if len(rows) >= limit or floor <= 0:
                break
            texts *= 4  # too few candidates in the window: widen
        span = min(texts, size)
        idf = {
            t: max(math.log((span - len(found) + 0.5) / (len(found) + 0.5)), 1e-6)
            for t, found in postings.items()
        }
        if floor > 0:
            # a word rare in the window may be rare everywhere: then its few older matches
            # are ranked too, so an old memory sharing a rare word with the query is found
            old: set[int] = set()
            for term, found in postings.items():
                if len(found) <= RARE_MAX:
                    more = self._postings(f"owner:{owner} AND {term}", 0, floor)
                    counted += len(more)
                    if len(more) <= RARE_MAX:
                        old |= more
            if old:
                marks = ",".join("?" * len(old))
                for term in terms:
                    postings[term] |= {
                        int(r[0])
                        for r in self._db.execute(
                            "SELECT rowid FROM memory_fts WHERE memory_fts MATCH ? "
                            f"AND rowid IN ({marks})",
                            [term, *sorted(old)],
                        )
                    }
                rows |= old
        scores = self._window_scores(rows, postings, idf)
        best = sorted(scores.items(), key=lambda kv: (-kv[1], -kv[0]))[: 2 * limit]
        hits = self._owned(user_id, best)[:limit]
        return hits, SearchCost(rows_ranked=len(rows), counted=counted, windows=windows)

    def _window_scores(
        self, rows: set[int], postings: dict[str, set[int]], idf: dict[str, float]
    ) -> dict[int, float]:
        """BM25 (k1 1.2, b 0.75, each matching term counted once) of ``rows`` from the
        terms' postings and IDFs inside the window, with FTS5's own text lengths: bounded
        by the window, unlike ``bm25()``, which counts every term's matches in the whole
        index for its IDF."""
        k1, b = 1.2, 0.75
        lengths = self._lengths(rows)
        avg = sum(lengths.values()) / max(len(lengths), 1) or 1.0
        damp = {
            row: (k1 + 1) / (1.0 + k1 * (1 - b + b * lengths.get(row, avg) / avg)) for row in rows
        }
        scores = dict.fromkeys(rows, 0.0)
        for term, found in postings.items():
            weight = idf[term]
            for row in found:
                scores[row] += weight * damp[row]
        return scores

    def _lengths(self, rows: set[int]) -> dict[int, float]:
        """Tokens in the text column of each of ``rows`` (FTS5's docsize record)."""
        out: dict[int, float] = {}
        ordered = sorted(rows)
        for start in range(0, len(ordered), 500):
            chunk = ordered[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for row, blob in self._db.execute(
                f"SELECT id, sz FROM memory_fts_docsize WHERE id IN ({marks})", chunk
            ):
                out[row] = float(blob[0] if blob[0] < 0x80 else _first_varint(bytes(blob)))
        return out

    def _owned(self, user_id: str, best: Sequence[tuple[int, float]]) -> list[tuple[str, float]]:
        """``(mem_id, score)`` of the rowids in ``best`` that belong to ``user_id`` (read
        from the row map, not from the texts)."""
        if not best:
            return []
        marks = ",".join("?" * len(best))
        owners = {
            int(r): (str(m), str(u))
            for r, m, u in self._db.execute(
                f"SELECT row, mem_id, user_id FROM memory_rows WHERE row IN ({marks})",
                [r for r, _ in best],
            )
        }
        return [(owners[r][0], score) for r, score in best if owners.get(r, ("", ""))[1] == user_id]

    def stems(self, words: Sequence[str]) -> dict[str, str]:
        """The index term each of ``words`` becomes under the index's own tokenizer
        (case-folded, porter-stemmed: ``"universities"`` → ``"univers"``). A word that
        yields no token is left out; one that yields several maps to its first."""
        with self._lock:
            known = self._stems
            unique = [w for w in dict.fromkeys(words) if w and w not in known]
            if unique:
                try:
                    with self._db:
                        self._db.executemany(
                            "INSERT INTO temp.term_probe(rowid, word) VALUES (?, ?)",
                            [(i, split_cjk(w)) for i, w in enumerate(unique, 1)],
                        )
                    rows = self._db.execute(
                        "SELECT doc, term FROM temp.term_probe_vocab WHERE offset = 0"
                    ).fetchall()
                finally:
                    with self._db:
                        self._db.execute("DELETE FROM temp.term_probe")
                if len(known) > _STEM_CACHE:
                    known.clear()
                known.update((unique[int(doc) - 1], str(term)) for doc, term in rows)
            return {w: known[w] for w in words if w in known}

    def _df_cache(self) -> dict[str, int]:
        """Document frequencies seen so far, dropped once the index grew or shrank by
        :data:`DF_REFRESH` of its size (the counts feed an idf, a small drift is harmless)."""
        total = self.total()
        if abs(total - self._df_at) > max(100, DF_REFRESH * self._df_at):
            self._df.clear()
            self._df_at = total
        return self._df

    def term_doc_freq(self, terms: Sequence[str]) -> dict[str, int]:
        """How many indexed texts contain each index term (from :meth:`stems`), counted over
        the whole index like FTS5's own bm25 statistics (cached, see :meth:`_df_cache`).
        Absent terms are left out."""
        with self._lock:
            cache = self._df_cache()
            unique = [t for t in dict.fromkeys(terms) if "t:" + t not in cache]
            for start in range(0, len(unique), 500):
                chunk = unique[start : start + 500]
                marks = ",".join("?" * len(chunk))
                cache.update(dict.fromkeys(("t:" + t for t in chunk), 0))
                cache.update(
                    ("t:" + str(term), int(doc))
                    for term, doc in self._db.execute(
                        f"SELECT term, doc FROM temp.memory_vocab WHERE term IN ({marks})", chunk
                    )
                )
            return {t: cache["t:" + t] for t in terms if cache.get("t:" + t)}

    def phrase_doc_freq(self, phrases: Sequence[str]) -> dict[str, int]:
        """How many indexed texts contain each CJK phrase (e.g. ``"河边"``), whole index,
        counted up to :data:`PHRASE_DF_CAP` (cached, see :meth:`_df_cache`)."""
        out: dict[str, int] = {}
        with self._lock:
            cache = self._df_cache()
            for phrase in dict.fromkeys(phrases):
                key = "p:" + phrase
                if key not in cache:
                    try:
                        row = self._db.execute(
                            "SELECT count(*) FROM (SELECT 1 FROM memory_fts "
                            "WHERE memory_fts MATCH ? LIMIT ?)",
                            (fts_phrase(phrase), PHRASE_DF_CAP),
                        ).fetchone()
                    except sqlite3.OperationalError:
                        continue
                    cache[key] = int(row[0])
                out[phrase] = cache[key]
        return out

    def total(self) -> int:
        """Indexed texts of all users (counted once, then kept by every write)."""
        with self._lock:
            if self._total is None:
                self._total = self.count()
            return self._total

    def _shift_total(self, user_id: str, delta: int) -> None:
        if self._total is not None:
            self._total = max(0, self._total + delta)
        if user_id in self._sizes:
            self._sizes[user_id] = max(0, self._sizes[user_id] + delta)

    def _user_size(self, user_id: str) -> int:
        """Indexed texts of ``user_id`` (counted once, then kept by every write)."""
        if user_id not in self._sizes:
            self._sizes[user_id] = self.count(user_id)
        return self._sizes[user_id]

    def count(self, user_id: str | None = None) -> int:
        """Indexed texts of ``user_id`` (all users when None)."""
        with self._lock:
            if user_id is None:
                row = self._db.execute("SELECT count(*) FROM memory_rows").fetchone()
            else:
                row = self._db.execute(
                    "SELECT count(*) FROM memory_rows WHERE user_id = ?", (user_id,)
                ).fetchone()
        return int(row[0])

    def ids(self, user_id: str) -> set[str]:
        """Memory ids indexed for ``user_id``."""
        with self._lock:
            rows = self._db.execute(
                "SELECT mem_id FROM memory_rows WHERE user_id = ?", (user_id,)
            ).fetchall()
        return {str(r[0]) for r in rows}

    # ------------------------------------------------------------------ duplicate keys

    def by_hash(self, user_id: str, digest: str) -> list[tuple[str, str]]:
        """``(mem_id, type)`` of ``user_id``'s active memories with content hash ``digest``
        (an indexed lookup)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT mem_id, type FROM memory_rows WHERE user_id = ? AND hash = ?",
                (user_id, digest),
            ).fetchall()
        return [(str(m), str(t or "")) for m, t in rows]

    def unhashed(self, user_id: str) -> list[str]:
        """Indexed memories of ``user_id`` whose hash and type are not known yet (indexed
        before the keys were kept)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT mem_id FROM memory_rows WHERE user_id = ? AND hash IS NULL", (user_id,)
            ).fetchall()
        return [str(r[0]) for r in rows]

    def set_keys(self, user_id: str, keys: Mapping[str, tuple[str, str]]) -> None:
        """Record ``(hash, type)`` of indexed memories of ``user_id``."""
        with self._lock, self._db:
            self._db.executemany(
                "UPDATE memory_rows SET hash = ?, type = ? WHERE user_id = ? AND mem_id = ?",
                [(h, t, user_id, m) for m, (h, t) in keys.items()],
            )

    def retire(self, user_id: str, mem_ids: Sequence[str]) -> None:
        """Note that ``mem_ids`` of ``user_id`` are in the history collection."""
        with self._lock, self._db:
            self._db.executemany(
                "INSERT OR IGNORE INTO retired(user_id, mem_id) VALUES (?, ?)",
                [(user_id, m) for m in mem_ids],
            )

    def unretire(self, user_id: str, mem_ids: Sequence[str]) -> None:
        with self._lock, self._db:
            self._db.executemany(
                "DELETE FROM retired WHERE user_id = ? AND mem_id = ?",
                [(user_id, m) for m in mem_ids],
            )

    def is_retired(self, user_id: str, mem_id: str) -> bool | None:
        """Whether ``mem_id`` of ``user_id`` is in history; None when this index does not
        know all of the user's history yet (see :meth:`retired_complete`)."""
        with self._lock:
            if (
                self._db.execute(
                    "SELECT 1 FROM retired_complete WHERE user_id = ?", (user_id,)
                ).fetchone()
                is None
            ):
                return None
            row = self._db.execute(
                "SELECT 1 FROM retired WHERE user_id = ? AND mem_id = ?", (user_id, mem_id)
            ).fetchone()
        return row is not None

    def retired_complete(self, user_id: str, mem_ids: Sequence[str] | None = None) -> bool:
        """Whether every history id of ``user_id`` is recorded; with ``mem_ids`` (all of
        them, read from chromadb once), record them and say so."""
        with self._lock, self._db:
            if mem_ids is not None:
                self._db.executemany(
                    "INSERT OR IGNORE INTO retired(user_id, mem_id) VALUES (?, ?)",
                    [(user_id, m) for m in mem_ids],
                )
                self._db.execute(
                    "INSERT OR IGNORE INTO retired_complete(user_id) VALUES (?)", (user_id,)
                )
                return True
            row = self._db.execute(
                "SELECT 1 FROM retired_complete WHERE user_id = ?", (user_id,)
            ).fetchone()
        return row is not None

    def forget_history(self, user_id: str) -> None:
        """Drop what is recorded of ``user_id``'s history (their memories were cleared)."""
        with self._lock, self._db:
            self._db.execute("DELETE FROM retired WHERE user_id = ?", (user_id,))
            self._db.execute("DELETE FROM retired_complete WHERE user_id = ?", (user_id,))

    # ------------------------------------------------------------------ outbox

    def stage(self, user_id: str, rows: Sequence[tuple[str, str, str, str, bytes]]) -> None:
        """Keep ``(mem_id, target, document, metadata_json, vector_bytes)`` rows that the
        store has not written to chromadb yet (``target``: ``live`` or ``history``), so a
        crash loses none of them: the store replays them when it next opens the user."""
        if not rows:
            return
        with self._lock, self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO outbox(user_id, mem_id, target, document, metadata, "
                "vector) VALUES (?, ?, ?, ?, ?, ?)",
                [(user_id, *row) for row in rows],
            )

    def unstage(self, user_id: str, mem_ids: Sequence[str]) -> None:
        """Forget staged rows once they are in chromadb (or deleted)."""
        if not mem_ids:
            return
        with self._lock, self._db:
            self._db.executemany(
                "DELETE FROM outbox WHERE user_id = ? AND mem_id = ?",
                [(user_id, m) for m in mem_ids],
            )

    def staged(self, user_id: str) -> list[tuple[str, str, str, str, bytes]]:
        """The staged rows of ``user_id`` (see :meth:`stage`)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT mem_id, target, document, metadata, vector FROM outbox WHERE user_id = ?",
                (user_id,),
            ).fetchall()
        return [(str(m), str(t), str(d), str(j), bytes(v)) for m, t, d, j, v in rows]

    def staged_users(self) -> dict[str, int]:
        """Rows waiting in the outbox per user (all users; for retries and reports)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT user_id, COUNT(*) FROM outbox GROUP BY user_id"
            ).fetchall()
        return {str(u): int(n) for u, n in rows}

    def has(self, user_id: str, mem_id: str) -> bool:
        """Whether ``mem_id`` of ``user_id`` is indexed (an active memory): one key lookup."""
        with self._lock:
            row = self._db.execute(
                "SELECT 1 FROM memory_rows WHERE user_id = ? AND mem_id = ?", (user_id, mem_id)
            ).fetchone()
        return row is not None

    def note_recall(self, user_id: str, mem_ids: Sequence[str], now: float | None = None) -> None:
        """Count one recall of each of ``mem_ids`` (used by TTL expiry)."""
        if not mem_ids:
            return
        at = time.time() if now is None else now
        with self._lock, self._db:
            self._db.executemany(
                "INSERT INTO recall(mem_id, user_id, count, last_at) VALUES (?, ?, 1, ?) "
                "ON CONFLICT(mem_id) DO UPDATE SET count = count + 1, last_at = excluded.last_at",
                [(m, user_id, at) for m in mem_ids],
            )

    def recall_counts(self, user_id: str, mem_ids: Sequence[str]) -> dict[str, int]:
        """How often each of ``mem_ids`` was recalled (missing ids: never)."""
        if not mem_ids:
            return {}
        out: dict[str, int] = {}
        with self._lock:
            for start in range(0, len(mem_ids), 500):
                chunk = list(mem_ids[start : start + 500])
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(
                    f"SELECT mem_id, count FROM recall WHERE user_id = ? AND mem_id IN ({marks})",
                    [user_id, *chunk],
                ).fetchall()
                out.update({str(m): int(c) for m, c in rows})
        return out

    def close(self) -> None:
        with self._lock:
            try:
                self._db.close()
            except sqlite3.Error:
                pass


def outbox_waiting(path: Path) -> dict[str, int]:
    """Rows waiting in the outbox of the ``fts.db`` at ``path`` per user, read without
    opening the store (``{}`` when the file or table does not exist). For reports made while
    the store cannot open (a chroma server that is down)."""
    if not path.is_file():
        return {}
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5.0)
    try:
        rows = db.execute("SELECT user_id, COUNT(*) FROM outbox GROUP BY user_id").fetchall()
    except sqlite3.Error:
        return {}
    finally:
        db.close()
    return {str(u): int(n) for u, n in rows}


__all__ = ["FtsIndex", "SearchCost", "outbox_waiting", "owner_token"]
