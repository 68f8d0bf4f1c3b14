"""The BM25 side index: SQLite FTS5 at ``$HERMES_HOME/chroma/fts.db``.

It holds the *active* memories only (superseded and deleted ones are removed), with the user
id as an unindexed column that every query must name: there is no method that searches
across users. ``memory_rows`` maps ``(user_id, mem_id)`` to the FTS rowid, so replacing or
deleting one text touches one row instead of scanning the index. Chinese and Japanese are
indexed with spaces between CJK characters so ``unicode61`` (with the ``porter`` stemmer
for English) can match 1-2 character words. It also keeps recall statistics (how often and
when a memory was last recalled), which drive TTL expiry.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from hermes_memory_chroma.text import fts_phrase, fts_query, split_cjk

_SCHEMA = """
CREATE VIRTUAL TABLE IF NOT EXISTS memory_fts USING fts5(
    content, mem_id UNINDEXED, user_id UNINDEXED, tokenize='porter unicode61'
);
CREATE TABLE IF NOT EXISTS recall (
    mem_id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    count INTEGER NOT NULL DEFAULT 0,
    last_at REAL
);
CREATE INDEX IF NOT EXISTS recall_user ON recall(user_id);
CREATE TABLE IF NOT EXISTS memory_rows (
    user_id TEXT NOT NULL,
    mem_id TEXT NOT NULL,
    row INTEGER NOT NULL,
    PRIMARY KEY (user_id, mem_id)
) WITHOUT ROWID;
"""
_ROWS_VERSION = 1
"""``PRAGMA user_version`` once ``memory_rows`` maps every indexed text to its FTS rowid."""

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
            self._db.executescript(_SCHEMA)
            if int(self._db.execute("PRAGMA user_version").fetchone()[0]) < _ROWS_VERSION:
                # indexes written before the row map: map them once (one scan, at open)
                self._db.execute(
                    "INSERT OR REPLACE INTO memory_rows(user_id, mem_id, row) "
                    "SELECT user_id, mem_id, rowid FROM memory_fts"
                )
                self._db.execute(f"PRAGMA user_version = {_ROWS_VERSION}")
        self._db.executescript(_TERM_SCHEMA)
        self._total: int | None = None
        self._stems: dict[str, str] = {}  # word -> index term; the tokenizer never changes
        try:
            path.chmod(0o600)
        except OSError:
            pass

    def _drop_rows(self, user_id: str, mem_ids: Sequence[str]) -> None:
        """Delete the FTS rows of ``mem_ids`` by rowid (through the row map: a lookup on the
        unindexed ``mem_id`` column would scan the whole index)."""
        for mem_id in mem_ids:
            found = self._db.execute(
                "SELECT row FROM memory_rows WHERE user_id = ? AND mem_id = ?", (user_id, mem_id)
            ).fetchone()
            if found is not None:
                self._db.execute("DELETE FROM memory_fts WHERE rowid = ?", (found[0],))
                self._db.execute(
                    "DELETE FROM memory_rows WHERE user_id = ? AND mem_id = ?", (user_id, mem_id)
                )

    def upsert(self, user_id: str, items: Iterable[tuple[str, str]]) -> None:
        """Index ``(mem_id, content)`` pairs for ``user_id`` (replacing earlier text)."""
        rows = [(split_cjk(content), mem_id, user_id) for mem_id, content in items]
        if not rows:
            return
        with self._lock, self._db:
            self._total = None
            self._drop_rows(user_id, [r[1] for r in rows])
            for row in rows:
                cur = self._db.execute(
                    "INSERT INTO memory_fts(content, mem_id, user_id) VALUES (?, ?, ?)", row
                )
                self._db.execute(
                    "INSERT OR REPLACE INTO memory_rows(user_id, mem_id, row) VALUES (?, ?, ?)",
                    (user_id, row[1], cur.lastrowid),
                )

    def delete(self, user_id: str, mem_ids: Sequence[str]) -> None:
        """Remove ``mem_ids`` of ``user_id`` from the index and the recall table."""
        if not mem_ids:
            return
        pairs = [(m, user_id) for m in mem_ids]
        with self._lock, self._db:
            self._total = None
            self._drop_rows(user_id, list(mem_ids))
            self._db.executemany("DELETE FROM recall WHERE mem_id = ? AND user_id = ?", pairs)

    def delete_user(self, user_id: str) -> int:
        """Remove every row of ``user_id``; returns the number of indexed texts removed."""
        with self._lock, self._db:
            self._total = None
            cur = self._db.execute("DELETE FROM memory_fts WHERE user_id = ?", (user_id,))
            self._db.execute("DELETE FROM memory_rows WHERE user_id = ?", (user_id,))
            self._db.execute("DELETE FROM recall WHERE user_id = ?", (user_id,))
            return cur.rowcount

    def search(self, user_id: str, query: str, limit: int) -> list[tuple[str, float]]:
        """BM25 hits of ``user_id`` for free text ``query``: ``(mem_id, score)``, best first
        (score is the negated FTS5 bm25, larger is better). Empty when nothing matches."""
        expr = fts_query(query)
        if expr is None:
            return []
        with self._lock:
            try:
                rows = self._db.execute(
                    "SELECT mem_id, bm25(memory_fts) AS s FROM memory_fts "
                    "WHERE memory_fts MATCH ? AND user_id = ? ORDER BY s LIMIT ?",
                    (expr, user_id, limit),
                ).fetchall()
            except sqlite3.OperationalError:
                return []
        return [(str(mem_id), -float(score)) for mem_id, score in rows]

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

    def term_doc_freq(self, terms: Sequence[str]) -> dict[str, int]:
        """How many indexed texts contain each index term (from :meth:`stems`), counted over
        the whole index like FTS5's own bm25 statistics. Absent terms are left out."""
        unique = list(dict.fromkeys(terms))
        out: dict[str, int] = {}
        with self._lock:
            for start in range(0, len(unique), 500):
                chunk = unique[start : start + 500]
                marks = ",".join("?" * len(chunk))
                out.update(
                    (str(term), int(doc))
                    for term, doc in self._db.execute(
                        f"SELECT term, doc FROM temp.memory_vocab WHERE term IN ({marks})", chunk
                    )
                )
        return out

    def phrase_doc_freq(self, phrases: Sequence[str]) -> dict[str, int]:
        """How many indexed texts contain each CJK phrase (e.g. ``"河边"``), whole index."""
        out: dict[str, int] = {}
        with self._lock:
            for phrase in dict.fromkeys(phrases):
                try:
                    row = self._db.execute(
                        "SELECT count(*) FROM memory_fts WHERE memory_fts MATCH ?",
                        (fts_phrase(phrase),),
                    ).fetchone()
                except sqlite3.OperationalError:
                    continue
                out[phrase] = int(row[0])
        return out

    def total(self) -> int:
        """Indexed texts of all users (cached until the next write)."""
        with self._lock:
            if self._total is None:
                self._total = self.count()
            return self._total

    def count(self, user_id: str | None = None) -> int:
        """Indexed texts of ``user_id`` (all users when None)."""
        with self._lock:
            if user_id is None:
                row = self._db.execute("SELECT count(*) FROM memory_fts").fetchone()
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


__all__ = ["FtsIndex"]
