"""The BM25 side index: SQLite FTS5 at ``$HERMES_HOME/chroma/fts.db``.

It holds the *active* memories only (superseded and deleted ones are removed), with the user
id as an unindexed column that every query must name: there is no method that searches
across users. Chinese and Japanese are indexed with spaces between CJK characters so
``unicode61`` (with the ``porter`` stemmer for English) can match 1-2 character words.
It also keeps recall statistics (how often and when a memory was last recalled), which
drive TTL expiry.
"""

from __future__ import annotations

import math
import sqlite3
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from hermes_memory_chroma.text import CJK_RE, STOPWORDS, fts_query, split_cjk

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
"""

# Per-connection scratch tables for pseudo-relevance feedback: texts are tokenised by FTS5
# itself (same tokenizer as the index, so terms come out stemmed exactly like indexed ones),
# and the index's own vocabulary gives each term's document frequency.
_FEEDBACK_SCHEMA = """
CREATE VIRTUAL TABLE IF NOT EXISTS temp.feedback_docs USING fts5(
    content, tokenize='porter unicode61'
);
CREATE VIRTUAL TABLE IF NOT EXISTS temp.feedback_vocab
    USING fts5vocab(temp, feedback_docs, instance);
CREATE VIRTUAL TABLE IF NOT EXISTS temp.memory_vocab USING fts5vocab(main, memory_fts, row);
"""


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
        self._db.executescript(_FEEDBACK_SCHEMA)
        try:
            path.chmod(0o600)
        except OSError:
            pass

    def upsert(self, user_id: str, items: Iterable[tuple[str, str]]) -> None:
        """Index ``(mem_id, content)`` pairs for ``user_id`` (replacing earlier text)."""
        rows = [(split_cjk(content), mem_id, user_id) for mem_id, content in items]
        if not rows:
            return
        with self._lock, self._db:
            self._db.executemany(
                "DELETE FROM memory_fts WHERE mem_id = ? AND user_id = ?",
                [(r[1], user_id) for r in rows],
            )
            self._db.executemany(
                "INSERT INTO memory_fts(content, mem_id, user_id) VALUES (?, ?, ?)", rows
            )

    def delete(self, user_id: str, mem_ids: Sequence[str]) -> None:
        """Remove ``mem_ids`` of ``user_id`` from the index and the recall table."""
        if not mem_ids:
            return
        pairs = [(m, user_id) for m in mem_ids]
        with self._lock, self._db:
            self._db.executemany("DELETE FROM memory_fts WHERE mem_id = ? AND user_id = ?", pairs)
            self._db.executemany("DELETE FROM recall WHERE mem_id = ? AND user_id = ?", pairs)

    def delete_user(self, user_id: str) -> int:
        """Remove every row of ``user_id``; returns the number of indexed texts removed."""
        with self._lock, self._db:
            cur = self._db.execute("DELETE FROM memory_fts WHERE user_id = ?", (user_id,))
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

    def feedback_terms(
        self, texts: Sequence[str], query: str, limit: int, *, min_df: int = 2
    ) -> list[str]:
        """Expansion terms for pseudo-relevance feedback: index terms found in ``texts`` (the
        best hits of a first search, best first) and not in ``query``, ranked by
        ``Σ idf(term) / rank`` over the texts that contain them, at most ``limit``.

        Terms are FTS5 tokens (stemmed English words, single CJK characters), so they can be
        searched as they are. Terms in fewer than ``min_df`` indexed texts cannot find anything
        new and are skipped, as are stopwords, numbers and one- or two-letter Latin tokens. Document
        frequencies come from the whole index, like FTS5's own bm25 statistics; the terms
        themselves come only from ``texts``, so nothing of another user can be suggested.
        """
        if limit <= 0 or not texts:
            return []
        with self._lock:
            with self._db:
                self._db.execute("DELETE FROM temp.feedback_docs")
                self._db.executemany(
                    "INSERT INTO temp.feedback_docs(rowid, content) VALUES (?, ?)",
                    [(0, split_cjk(query)), *((i, split_cjk(t)) for i, t in enumerate(texts, 1))],
                )
            seen = self._db.execute("SELECT DISTINCT term, doc FROM temp.feedback_vocab").fetchall()
            in_query = {str(term) for term, doc in seen if doc == 0}
            ranks: dict[str, list[int]] = {}
            for term, doc in seen:
                term = str(term)
                if doc == 0 or term in in_query or term in STOPWORDS or term.isdigit():
                    continue
                if len(term) < 3 and not CJK_RE.match(term):
                    continue
                ranks.setdefault(term, []).append(int(doc))
            if not ranks:
                return []
            total = self._db.execute("SELECT max(rowid) FROM memory_fts").fetchone()[0] or 1
            df: dict[str, int] = {}
            candidates = list(ranks)
            for start in range(0, len(candidates), 500):
                chunk = candidates[start : start + 500]
                marks = ",".join("?" * len(chunk))
                df.update(
                    (str(term), int(doc))
                    for term, doc in self._db.execute(
                        f"SELECT term, doc FROM temp.memory_vocab WHERE term IN ({marks})", chunk
                    )
                )
        scored = []
        for term, docs in ranks.items():
            freq = df.get(term, 0)
            if freq < min_df:
                continue
            idf = math.log(1 + total / freq)
            scored.append((sum(idf / rank for rank in docs), term))
        scored.sort(key=lambda x: (-x[0], x[1]))
        return [term for _, term in scored[:limit]]

    def count(self, user_id: str | None = None) -> int:
        """Indexed texts of ``user_id`` (all users when None)."""
        with self._lock:
            if user_id is None:
                row = self._db.execute("SELECT count(*) FROM memory_fts").fetchone()
            else:
                row = self._db.execute(
                    "SELECT count(*) FROM memory_fts WHERE user_id = ?", (user_id,)
                ).fetchone()
        return int(row[0])

    def ids(self, user_id: str) -> set[str]:
        """Memory ids indexed for ``user_id``."""
        with self._lock:
            rows = self._db.execute(
                "SELECT mem_id FROM memory_fts WHERE user_id = ?", (user_id,)
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
