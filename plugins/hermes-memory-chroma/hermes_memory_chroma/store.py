"""The memory store: chromadb (vectors, texts, metadata) plus the FTS5 side index.

Layout under ``$HERMES_HOME/chroma``: a chromadb ``PersistentClient`` (telemetry off, cosine
space, embeddings always computed here — chroma's DefaultEmbeddingFunction, which downloads a
model, is never used) and ``fts.db``. In server mode the caller passes the chromadb client
(an ``HttpClient`` from :mod:`hermes_memory_chroma.server`) and ``root`` holds only
``fts.db``; everything else is the same.

Isolation: **one collection per user** (``<prefix>-u-<sha256(user)[:24]>``) holding only
that user's *active* memories, and one history collection (``<prefix>-h-...``) for the
memories they replaced. Every row carries ``user_id`` and every row read back is checked
against it in Python (id lookups are unfiltered: a metadata filter on an id lookup costs
chromadb a scan of the whole collection); every public method takes ``user_id`` first and
there is no cross-user query.

Hygiene on :meth:`MemoryStore.add`: a normalised-hash or cosine ≥ ``dedup_cosine`` match is
a duplicate (nothing new stored); a same-subject (explicit ``subject``, or same type and
cosine ≥ ``supersede_threshold``) active memory is *superseded*: it moves to the history
collection with ``superseded_by`` set (visible in :meth:`history`) and leaves recall and the
FTS index. Expired and deleted memories are deleted everywhere. So recall, the duplicate
check and the supersede check read a bounded number of rows of the live collection,
whatever the size of the history. A store written before this layout (schema 1) is
migrated when a user's collection is first opened.

Reads go through a per-user cache of rows by id that every write updates by id (never
dropped wholesale); the live row count is kept the same way.

Writes are batched: a chromadb write costs tens of milliseconds whatever its size, so
:meth:`MemoryStore.add` *stages* a new memory (and :meth:`MemoryStore.supersede` moves a
staged one to history while still staged) instead of writing it at once. Staged rows are
kept in a crash-safe outbox in ``fts.db`` (written before the keyword index) and are
visible to every read at once: id lookups, the dense ranking (their cosines are computed
directly, at most :data:`FLUSH_ROWS` of them), the duplicate and supersede checks. They go
to chromadb in one ``upsert`` per collection when :data:`FLUSH_ROWS` are waiting, on
:meth:`MemoryStore.flush` (the provider calls it at the end of every session), before any
full read (listings, history, expiry, stats, re-embedding) and on :meth:`MemoryStore.close`.
Rows a crash left in the outbox are written when the user's collection next opens.

Shared (server) mode writes every staged row at once, and the outbox is what keeps a write
the server could not take (:class:`ServiceUnavailable`: unreachable, timed out, 502-504, or
the breaker paused; a refused token or a bad request still raises): :meth:`MemoryStore.add`
then stages the memory without the duplicate and supersede checks (they need the server;
a memory with an id, like a dialogue turn, is still written exactly once) and keyword recall
sees it at once. Waiting rows are retried on the user's next write, on :meth:`retry` (the
provider calls it before each recall and at session end), on every flush and on
:meth:`close`; rows still waiting at exit stay in ``fts.db`` and the next process that
opens the store writes them (:meth:`retry`, or the user's collection opening).

The embedder's name and dimension live in the collection metadata; opening a collection made
with another embedder re-embeds it (:mod:`reembed`, progress bar on stderr) instead of
failing on the dimension.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from hermes_core.providers.hnsw_files import scrub_unused_capacity
from hermes_core.providers.service import ServiceError, ServiceUnavailable

from hermes_memory_chroma.embedders import Embedder, Vectors
from hermes_memory_chroma.fts import FtsIndex
from hermes_memory_chroma.reembed import (
    REEMBED_SUFFIX,
    Progress,
    is_stale,
    recover,
    reembed_collection,
)
from hermes_memory_chroma.text import content_hash

log = logging.getLogger(__name__)

SCHEMA_VERSION = 2
"""1: superseded rows stayed in the live collection; 2: they live in the history collection."""
CACHE_LIMIT = 20_000
"""Rows kept in the per-user read cache (oldest dropped first)."""
DEDUP_PROBE = 8
"""Nearest live rows read to find a near-duplicate (skipped types are passed over)."""
SUPERSEDE_PROBE = 16
"""Nearest live rows read to find same-type memories a new one replaces."""
FLUSH_ROWS = 64
"""Staged rows of one user that trigger a write to chromadb (one upsert per collection)."""

_STANDARD_KEYS = frozenset(
    {
        "user_id",
        "type",
        "subject",
        "source",
        "session_id",
        "created_at",
        "updated_at",
        "superseded_by",
        "hash",
    }
)

SUPERSEDE_BY_SIMILARITY = frozenset(
    {"user_profile", "fact", "project_status", "key_decision", "note"}
)
"""Types where a close paraphrase on the same subject replaces the older memory."""


@dataclass(frozen=True, slots=True)
class Memory:
    """One stored memory as read back from chroma."""

    id: str
    user_id: str
    content: str
    type: str = "fact"
    subject: str = ""
    source: str = ""
    session_id: str = ""
    created_at: float = 0.0
    updated_at: float = 0.0
    superseded_by: str = ""
    hash: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Metadata beyond the standard fields (``speaker``, ``index_text``...)."""

    @property
    def active(self) -> bool:
        return not self.superseded_by

    @classmethod
    def from_chroma(cls, mem_id: str, document: str | None, meta: Mapping[str, Any]) -> Memory:
        return cls(
            id=mem_id,
            user_id=str(meta.get("user_id", "")),
            content=document or "",
            type=str(meta.get("type", "fact")),
            subject=str(meta.get("subject", "")),
            source=str(meta.get("source", "")),
            session_id=str(meta.get("session_id", "")),
            created_at=float(meta.get("created_at", 0.0)),
            updated_at=float(meta.get("updated_at", 0.0)),
            superseded_by=str(meta.get("superseded_by", "")),
            hash=str(meta.get("hash", "")),
            extra={k: v for k, v in meta.items() if k not in _STANDARD_KEYS},
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "content": self.content,
            "type": self.type,
            "subject": self.subject,
            "source": self.source,
            "session_id": self.session_id,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "superseded_by": self.superseded_by or None,
        }


@dataclass(frozen=True, slots=True)
class AddResult:
    """Outcome of :meth:`MemoryStore.add`: ``status`` is ``added`` or ``duplicate`` (then
    ``id`` is the existing memory); ``superseded`` lists memories this one replaced."""

    id: str
    status: Literal["added", "duplicate"]
    superseded: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class NewMemory:
    """Input of :meth:`MemoryStore.add_many`."""

    content: str
    type: str = "fact"
    subject: str = ""
    source: str = ""
    session_id: str = ""
    created_at: float | None = None
    id: str | None = None
    extra: Mapping[str, str | int | float | bool] = field(default_factory=dict)
    index_text: str | None = None
    """What is embedded and keyword-indexed when it differs from ``content`` (for example a
    dialogue turn with its neighbours); kept in the metadata for re-embedding."""


@dataclass(slots=True)
class _Staged:
    """A row written to the outbox but not yet to chromadb (see the module doc)."""

    target: Literal["live", "history"]
    document: str
    meta: dict[str, Any]
    vector: Vectors

    def memory(self, mem_id: str) -> Memory:
        return Memory.from_chroma(mem_id, self.document, self.meta)


_WHERE_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "$eq": lambda v, a: bool(v == a),
    "$ne": lambda v, a: bool(v != a),
    "$in": lambda v, a: v in a,
    "$nin": lambda v, a: v not in a,
    "$gt": lambda v, a: v is not None and bool(v > a),
    "$gte": lambda v, a: v is not None and bool(v >= a),
    "$lt": lambda v, a: v is not None and bool(v < a),
    "$lte": lambda v, a: v is not None and bool(v <= a),
}


def _where_matches(meta: Mapping[str, Any], where: Mapping[str, Any] | None) -> bool:
    """Whether ``meta`` passes a chromadb ``where`` filter (the operators this module and
    the retriever use: ``$and``, ``$or``, ``$in``, ``$nin``, ``$eq``, ``$ne``, ``$gt``,
    ``$gte``, ``$lt``, ``$lte``, and plain equality)."""
    if not where:
        return True
    for key, cond in where.items():
        if key == "$and":
            if not all(_where_matches(meta, c) for c in cond):
                return False
            continue
        if key == "$or":
            if not any(_where_matches(meta, c) for c in cond):
                return False
            continue
        value = meta.get(key)
        if not isinstance(cond, Mapping):
            cond = {"$eq": cond}
        for op, arg in cond.items():
            ok = _WHERE_OPS[op](value, arg)
            if not ok:
                return False
    return True


def _cosines(vector: Vectors, others: Sequence[Vectors]) -> list[float]:
    if not others:
        return []
    matrix = np.asarray(others, dtype=np.float32)
    query = np.asarray(vector, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1) * max(float(np.linalg.norm(query)), 1e-12)
    return [float(x) for x in (matrix @ query) / np.maximum(norms, 1e-12)]


def _and(*clauses: Mapping[str, Any]) -> dict[str, Any]:
    parts = [dict(c) for c in clauses if c]
    if len(parts) == 1:
        return parts[0]
    return {"$and": parts}


def new_memory_id() -> str:
    return "mem_" + uuid.uuid4().hex[:20]


class MemoryStore:
    """Per-user memory collections in one chromadb directory, plus the FTS5 side index.

    Thread-safe (one re-entrant lock). Call :meth:`close` when done.
    """

    def __init__(
        self,
        root: Path,
        embedder: Embedder,
        *,
        prefix: str = "hermes",
        dedup_cosine: float = 0.95,
        supersede_threshold: float = 0.8,
        reembed_progress: Callable[[str, int], Progress] | None = None,
        client: Any | None = None,
        location: str | None = None,
        shared: bool = False,
    ) -> None:
        """``client``: a chromadb client to use instead of a ``PersistentClient`` at
        ``root`` (server mode); ``location`` is what :meth:`stats` reports as the store's
        place (the server URL), ``root`` by default. ``shared``: other processes may write
        the same collections (a server), so live row counts are asked, never cached."""
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        try:
            self.root.chmod(0o700)
        except OSError:
            pass
        self.embedder = embedder
        self.prefix = prefix
        self.dedup_cosine = dedup_cosine
        self.supersede_threshold = supersede_threshold
        self._reembed_progress = reembed_progress
        self._lock = threading.RLock()
        self.location = location or str(self.root)
        self.shared = shared
        self._owns_client = client is None
        if client is None:
            import chromadb
            from chromadb.config import Settings as ChromaClientSettings

            client = chromadb.PersistentClient(
                path=str(self.root),
                settings=ChromaClientSettings(anonymized_telemetry=False, allow_reset=False),
            )
        self._client: Any = client
        self.fts = FtsIndex(self.root / "fts.db")
        self._collections: dict[str, Any] = {}
        self._histories: dict[str, Any] = {}
        self._cache: dict[str, dict[str, Memory]] = {}
        self._counts: dict[str, int] = {}
        self._pending: dict[str, dict[str, _Staged]] = {}
        self._retrying = False
        self.chroma_writes = 0
        """Write calls made to chromadb (add/upsert/update/delete): a cost counter."""
        self._closed = False

    # ------------------------------------------------------------------ read cache

    def _forget_user(self, user_id: str) -> None:
        """Drop everything cached for ``user_id`` (collection swapped or removed)."""
        self._cache.pop(user_id, None)
        self._counts.pop(user_id, None)

    def _total(self, user_id: str, coll: Any) -> int:
        """Rows in the live collection (counted once, then kept by every write)."""
        if self.shared:  # another host may have written since: one count call
            return int(coll.count())
        if user_id not in self._counts:
            self._counts[user_id] = int(coll.count())
        return self._counts[user_id]

    def _written(self, user_id: str, coll: Any) -> int:
        """Rows chromadb itself holds in the live collection (the count less the staged
        rows; in shared mode the count is asked and holds no staged rows)."""
        total = self._total(user_id, coll)
        return total if self.shared else total - len(self._staged(user_id))

    def _shift_count(self, user_id: str, delta: int) -> None:
        if user_id in self._counts:
            self._counts[user_id] = max(0, self._counts[user_id] + delta)

    def _remember(self, user_id: str, memories: Iterable[Memory]) -> None:
        cache = self._cache.setdefault(user_id, {})
        for mem in memories:
            cache.pop(mem.id, None)
            cache[mem.id] = mem
        while len(cache) > CACHE_LIMIT:
            del cache[next(iter(cache))]

    def _drop_cached(self, user_id: str, ids: Iterable[str]) -> None:
        cache = self._cache.get(user_id)
        if cache:
            for mem_id in ids:
                cache.pop(mem_id, None)

    # ------------------------------------------------------------------ staged writes

    def _staged(self, user_id: str, target: str | None = "live") -> dict[str, _Staged]:
        """Staged rows of ``user_id`` (only those bound for ``target`` unless None)."""
        rows = self._pending.get(user_id, {})
        if target is None:
            return rows
        return {i: r for i, r in rows.items() if r.target == target}

    def _stage(self, user_id: str, mem_id: str, row: _Staged) -> None:
        """Put ``row`` in the outbox (durable) and the pending rows (visible to reads); write
        the user's staged rows to chromadb once :data:`FLUSH_ROWS` are waiting."""
        vector = np.asarray(row.vector, dtype=np.float32)
        self.fts.stage(
            user_id,
            [(mem_id, row.target, row.document, json.dumps(row.meta), vector.tobytes())],
        )
        self._pending.setdefault(user_id, {})[mem_id] = row
        if self.shared:  # server mode writes at once: other hosts read the same collections
            self._flush_shared(user_id)
        elif len(self._pending[user_id]) >= FLUSH_ROWS:
            self._flush_user(user_id)

    def _flush_shared(self, user_id: str) -> bool:
        """Server mode: write ``user_id``'s waiting rows, then (that write worked) those of
        every other user. A server that cannot take them leaves them in the outbox (logged,
        not raised). Returns whether everything of ``user_id`` was written."""
        try:
            self._flush_user(user_id)
        except ServiceUnavailable as exc:
            log.warning(
                "%d memories of %s wait in the outbox until the chroma server answers: %s",
                len(self._pending.get(user_id, {})),
                user_id,
                exc,
            )
            return False
        if not self._retrying and (self._pending or self.fts.staged_users()):
            self._retry_all()
        return True

    def _retry_all(self) -> int:
        """Write the waiting rows of every user: those this process staged and those an
        earlier process left in the outbox. Stops at the first :class:`ServiceUnavailable`
        (the rest keep waiting). Returns how many rows were written."""
        written = 0
        users = dict.fromkeys([*self._pending, *self.fts.staged_users()])
        self._retrying = True
        try:
            for user in users:
                if user not in self._collections:  # opening the collection replays the rows
                    before = len(self.fts.staged(user))
                    self._collection(user)
                    written += before - len(self.fts.staged(user))
                else:
                    written += self._flush_user(user)
        except ServiceUnavailable as exc:
            log.info("outbox rows keep waiting for the chroma server: %s", exc)
        finally:
            self._retrying = False
        return written

    def retry(self) -> int:
        """Write rows waiting in the outbox (server mode: what the server could not take;
        embedded: the staged batch). Never raises for a server that is down: what cannot be
        written keeps waiting. Returns how many rows were written."""
        with self._lock:
            self._check_open()
            if not self._pending and not self.fts.staged_users():
                return 0
            if not self.shared:
                return self.flush()
            return self._retry_all()

    def waiting(self) -> dict[str, int]:
        """Rows waiting in the outbox per user (on disk: what a crash or exit would leave)."""
        with self._lock:
            self._check_open()
            return self.fts.staged_users()

    def _flush_user(self, user_id: str, targets: Sequence[str] = ("live", "history")) -> int:
        """Write ``user_id``'s staged rows bound for ``targets`` to chromadb (one upsert per
        collection), then clear them from the outbox. Returns how many were written."""
        pending = {i: r for i, r in self._pending.get(user_id, {}).items() if r.target in targets}
        if not pending:
            return 0
        coll = self._collections.get(user_id) or self._collection(user_id)
        for target in targets:
            rows = [(i, r) for i, r in pending.items() if r.target == target]
            if not rows:
                continue
            dest = coll if target == "live" else self._history(user_id, create=True)
            assert dest is not None
            dest.upsert(
                ids=[i for i, _ in rows],
                embeddings=np.asarray([r.vector for _, r in rows], dtype=np.float32),
                documents=[r.document for _, r in rows],
                metadatas=[r.meta for _, r in rows],
            )
            self.chroma_writes += 1
        left = self._pending.get(user_id, {})
        for mem_id in pending:
            left.pop(mem_id, None)
        if not left:
            self._pending.pop(user_id, None)
        self.fts.unstage(user_id, list(pending))
        return len(pending)

    def flush(self, user_id: str | None = None, *, history: bool = True) -> int:
        """Write the staged rows of ``user_id`` (every user when None) to chromadb; with
        ``history=False`` only those bound for the live collection (a staged history row is
        final: it can wait in the outbox for the next batch). Returns how many rows were
        written."""
        targets = ("live", "history") if history else ("live",)
        with self._lock:
            self._check_open()
            users = [user_id] if user_id is not None else list(self._pending)
            return sum(self._flush_user(u, targets) for u in users)

    def _replay(self, user_id: str) -> None:
        """Write rows a previous process staged but never wrote (it crashed) for
        ``user_id``, and bring the keyword index in line with them."""
        rows = self.fts.staged(user_id)
        if not rows:
            return
        log.info("writing %d staged memories of %s left by an earlier process", len(rows), user_id)
        dim = int(self.embedder.dim)
        pending = self._pending.setdefault(user_id, {})
        for mem_id, target, document, meta_json, blob in rows:
            vector = np.frombuffer(blob, dtype=np.float32)
            if vector.shape[0] != dim:  # staged under another embedder
                vector = self.embedder.embed_documents([document])[0]
            pending[mem_id] = _Staged(
                "history" if target == "history" else "live",
                document,
                json.loads(meta_json),
                vector,
            )
        self._counts.pop(user_id, None)
        if self.shared:
            self._flush_shared(user_id)
        else:
            self._flush_user(user_id)
        live = [(i, d) for i, t, d, _, _ in rows if t != "history"]
        keys = {
            i: (str(pending_meta.get("hash", "")), str(pending_meta.get("type", "")))
            for i, pending_meta in ((i, json.loads(j)) for i, t, _, j, _ in rows if t != "history")
        }
        self.fts.upsert(user_id, live, keys)
        retired = [i for i, t, *_ in rows if t == "history"]
        self.fts.delete(user_id, retired)
        self.fts.retire(user_id, retired)

    # ------------------------------------------------------------------ collections

    def collection_name(self, user_id: str) -> str:
        digest = hashlib.sha256(user_id.encode("utf-8")).hexdigest()[:24]
        return f"{self.prefix}-u-{digest}"

    def history_name(self, user_id: str) -> str:
        """The collection of ``user_id``'s superseded memories."""
        digest = hashlib.sha256(user_id.encode("utf-8")).hexdigest()[:24]
        return f"{self.prefix}-h-{digest}"

    def _metadata(self, user_id: str) -> dict[str, Any]:
        return {
            "user_id": user_id,
            "embedder": self.embedder.name,
            "dim": int(self.embedder.dim),
            "schema": SCHEMA_VERSION,
        }

    def _existing(self, name: str) -> Any | None:
        try:
            return self._client.get_collection(name=name, embedding_function=None)
        except ServiceError:  # server mode: unreachable or refused is not "no collection"
            raise
        except Exception:  # chromadb raises NotFoundError/ValueError depending on version
            return None

    def _create(self, name: str, user_id: str) -> Any:
        return self._client.create_collection(
            name=name,
            metadata=self._metadata(user_id),
            configuration={"hnsw": {"space": "cosine"}},
            embedding_function=None,
        )

    def _open(self, name: str, user_id: str, create: bool) -> tuple[Any | None, bool]:
        """``(collection, existed)``: ``name`` as it is (recovered if a crash left it
        half-renamed), else created empty when ``create``, else ``(None, False)``."""
        coll = recover(self._client, name, self._existing)
        if coll is not None:
            return coll, True
        return (self._create(name, user_id) if create else None), False

    def _collection(self, user_id: str, *, create: bool = True) -> Any | None:
        """The live collection of ``user_id`` (re-embedded first if another embedder made
        it, migrated first if an older layout did)."""
        if not user_id:
            raise ValueError("user_id is required for every memory read and write")
        with self._lock:
            self._check_open()
            cached = self._collections.get(user_id)
            if cached is not None:
                return cached
            coll, existed = self._open(self.collection_name(user_id), user_id, create)
            if coll is None:
                return None
            if existed:
                legacy = int((coll.metadata or {}).get("schema", 1)) < SCHEMA_VERSION
                if self._stale(coll):
                    hist = self._existing(self.history_name(user_id))
                    todo = [coll, *([hist] if hist is not None and self._stale(hist) else [])]
                    total = sum(int(c.count()) for c in todo)
                    factory = self._reembed_progress
                    coll = self._reembed_all(
                        user_id, todo, factory(user_id, total) if factory else None
                    )[0]
                if legacy:
                    self._migrate(user_id, coll)
            self._collections[user_id] = coll
            self._backfill_keys(user_id, coll)
            self._replay(user_id)
            return coll

    def _backfill_keys(self, user_id: str, coll: Any) -> None:
        """Keyword indexes written before the duplicate keys and the history ids were kept
        in ``fts.db``: read them from chromadb once (then every duplicate and history
        check is one SQLite lookup). Shared (server) mode asks the collections instead."""
        if self.shared:
            return
        missing = self.fts.unhashed(user_id)
        for start in range(0, len(missing), 500):
            got = coll.get(ids=missing[start : start + 500], include=["metadatas"])
            self.fts.set_keys(
                user_id,
                {
                    str(i): (str((m or {}).get("hash", "")), str((m or {}).get("type", "")))
                    for i, m in zip(got["ids"], got["metadatas"] or [], strict=False)
                    if (m or {}).get("user_id") == user_id
                },
            )
        if not self.fts.retired_complete(user_id):
            hist = self._history(user_id)
            ids = [str(i) for i in hist.get(include=[])["ids"]] if hist is not None else []
            self.fts.retired_complete(user_id, ids)

    def _history(self, user_id: str, *, create: bool = False) -> Any | None:
        """The history collection of ``user_id`` (re-embedded first when stale)."""
        with self._lock:
            cached = self._histories.get(user_id)
            if cached is not None:
                return cached
            coll, existed = self._open(self.history_name(user_id), user_id, create)
            if coll is None:
                return None
            if existed and self._stale(coll):
                factory = self._reembed_progress
                tick = factory(user_id, int(coll.count())) if factory else None
                coll = self._reembed_all(user_id, [coll], tick)[0]
            self._histories[user_id] = coll
            return coll

    def _migrate(self, user_id: str, coll: Any) -> None:
        """Schema 1 → 2: move superseded rows out of the live collection (idempotent: a
        crash half-way leaves rows in both places and the next open finishes the move)."""
        got = coll.get(
            where={"superseded_by": {"$ne": ""}}, include=["embeddings", "documents", "metadatas"]
        )
        ids = [str(i) for i in got["ids"]]
        if ids:
            log.info("moving %d superseded memories of %s to history", len(ids), user_id)
            hist = self._history(user_id, create=True)
            assert hist is not None
            for start in range(0, len(ids), 256):
                part = slice(start, start + 256)
                hist.upsert(
                    ids=ids[part],
                    embeddings=got["embeddings"][part],
                    documents=got["documents"][part],
                    metadatas=got["metadatas"][part],
                )
            coll.delete(ids=ids)
            self.fts.delete(user_id, ids)
            self.fts.retire(user_id, ids)
        coll.modify(metadata=self._metadata(user_id))

    def _stale(self, coll: Any) -> bool:
        return is_stale(coll, self.embedder)

    def needs_reembed(self, user_id: str) -> bool:
        """Whether ``user_id``'s collections were built with another embedder."""
        with self._lock:
            for name in (self.collection_name(user_id), self.history_name(user_id)):
                coll = self._existing(name)
                if coll is not None and self._stale(coll):
                    return True
            return False

    def size(self, user_id: str) -> int:
        """Memories (including superseded) of ``user_id``, read as stored: unlike the other
        reads this never starts a re-embed."""
        with self._lock:
            if user_id in self._pending:
                self._flush_user(user_id)
            total = 0
            for name in (self.collection_name(user_id), self.history_name(user_id)):
                coll = self._existing(name)
                total += 0 if coll is None else int(coll.count())
            return total

    def users(self) -> list[str]:
        """User ids that have a collection under this prefix."""
        with self._lock:
            self._check_open()
            found: list[str] = []
            for item in self._client.list_collections():
                name = item if isinstance(item, str) else item.name
                if not name.startswith(f"{self.prefix}-u-") or name.endswith(REEMBED_SUFFIX):
                    continue
                coll = self._existing(name)
                if coll is not None and (coll.metadata or {}).get("user_id"):
                    found.append(str(coll.metadata["user_id"]))
            return sorted(found)

    # ------------------------------------------------------------------ re-embedding

    def _reembed_all(self, user_id: str, todo: Sequence[Any], tick: Progress | None) -> list[Any]:
        """Re-embed the collections ``todo`` of ``user_id`` with one progress count over
        all of them; returns the new collections in the same order."""
        total = sum(int(c.count()) for c in todo)
        fresh: list[Any] = []
        done_before = 0
        for old in todo:
            size = int(old.count())

            def part(done: int, _n: int, base: int = done_before) -> None:
                if tick:
                    tick(base + done, total)

            fresh.append(
                reembed_collection(
                    self._client,
                    old,
                    self.embedder,
                    lambda name: self._create(name, user_id),
                    self._metadata(user_id),
                    self._existing,
                    part,
                )
            )
            done_before += size
        return fresh

    def reembed(
        self, user_id: str, progress: Progress | None = None, *, force: bool = False
    ) -> int:
        """Re-embed ``user_id``'s memories (live and history) with the current embedder when
        it changed (or always with ``force``). Returns the number of memories re-embedded."""
        with self._lock:
            self._check_open()
            if user_id in self._pending:
                self._flush_user(user_id)
            coll = self._existing(self.collection_name(user_id))
            if coll is None:
                return 0
            legacy = int((coll.metadata or {}).get("schema", 1)) < SCHEMA_VERSION
            hist = self._existing(self.history_name(user_id))
            todo = [c for c in (coll, hist) if c is not None and (force or self._stale(c))]
            if not todo:
                return 0
            self._collections.pop(user_id, None)
            self._histories.pop(user_id, None)
            self._forget_user(user_id)
            total = sum(int(c.count()) for c in todo)
            fresh = self._reembed_all(user_id, todo, progress)
            live = fresh[0] if todo[0] is coll else self._existing(self.collection_name(user_id))
            if legacy:
                self._migrate(user_id, live)
            self._collections[user_id] = live
            return total

    # ------------------------------------------------------------------ writes

    def add(
        self,
        user_id: str,
        content: str,
        *,
        type: str = "fact",
        subject: str = "",
        source: str = "",
        session_id: str = "",
        memory_id: str | None = None,
        created_at: float | None = None,
        dedup: bool = True,
        supersede: bool = True,
        dedup_skip_types: Sequence[str] = (),
    ) -> AddResult:
        """Store one memory for ``user_id`` with dedup and supersede (see module doc).

        ``memory_id`` makes the write idempotent (a resent turn overwrites itself).
        ``dedup_skip_types`` are memory types a new memory is never a duplicate of.
        Raises ValueError on empty content.
        """
        text = content.strip()
        if not text:
            raise ValueError("memory content is empty")
        with self._lock:
            self._check_open()
            if not user_id:
                raise ValueError("user_id is required for every memory read and write")
            digest = content_hash(text)
            vector = self.embedder.embed_documents([text])[0]
            fresh_id = memory_id or new_memory_id()
            try:
                return self._add(
                    user_id,
                    text,
                    digest,
                    vector,
                    type,
                    subject,
                    source,
                    session_id,
                    memory_id,
                    fresh_id,
                    created_at,
                    dedup,
                    supersede,
                    dedup_skip_types,
                )
            except ServiceUnavailable as exc:
                if not self.shared:
                    raise
                if fresh_id in self._staged(user_id, None):  # staged before the failure
                    return AddResult(fresh_id, "added")
                log.warning(
                    "chroma server unavailable: memory %s of %s waits in the outbox (%s)",
                    fresh_id,
                    user_id,
                    exc,
                )
                meta = self._meta(
                    user_id, type, subject, source, session_id, created_at or time.time(), digest
                )
                row = _Staged("live", text, meta, vector)
                self.fts.stage(
                    user_id,
                    [(fresh_id, "live", text, json.dumps(meta), vector.tobytes())],
                )
                self._pending.setdefault(user_id, {})[fresh_id] = row
                self._remember(user_id, [row.memory(fresh_id)])
                self.fts.upsert(user_id, [(fresh_id, text)], {fresh_id: (digest, type)})
                return AddResult(fresh_id, "added")

    def _add(
        self,
        user_id: str,
        text: str,
        digest: str,
        vector: Vectors,
        type: str,
        subject: str,
        source: str,
        session_id: str,
        memory_id: str | None,
        fresh_id: str,
        created_at: float | None,
        dedup: bool,
        supersede: bool,
        dedup_skip_types: Sequence[str],
    ) -> AddResult:
        """:meth:`add` with the server reachable (or embedded); ``fresh_id`` is the id of a
        new memory (chosen by the caller, so a retry after a failure reuses it)."""
        coll = self._collection(user_id)
        assert coll is not None

        def write(mid: str, *, upsert: bool) -> None:
            self._write(
                coll,
                user_id,
                mid,
                text,
                vector,
                digest,
                type,
                subject,
                source,
                session_id,
                created_at,
                upsert=upsert,
            )

        if memory_id and self._exists(user_id, coll, memory_id):
            write(memory_id, upsert=True)
            return AddResult(memory_id, "added")
        if memory_id and self._in_history(user_id, memory_id):
            return AddResult(memory_id, "duplicate")  # already stored, then replaced
        if dedup:
            dup = self._find_duplicate(coll, user_id, digest, vector, dedup_skip_types)
            if dup is not None:
                self._touch(coll, user_id, dup)
                return AddResult(dup, "duplicate")
        old: list[str] = []
        if supersede:
            old = self._find_superseded(coll, user_id, vector, type, subject)
        new_id = fresh_id
        write(new_id, upsert=False)
        if old:
            self._retire(coll, user_id, old, new_id)
        return AddResult(new_id, "added", tuple(old))

    def add_many(
        self, user_id: str, items: Sequence[NewMemory], progress: Progress | None = None
    ) -> list[str]:
        """Bulk insert without dedup/supersede (imports, benchmarks). Returns the ids."""
        with self._lock:
            coll = self._collection(user_id)
            assert coll is not None
            self._flush_user(user_id)
            ids: list[str] = []
            now = time.time()
            for start in range(0, len(items), 256):
                chunk = [i for i in items[start : start + 256] if i.content.strip()]
                if not chunk:
                    continue
                texts = [i.content.strip() for i in chunk]
                indexed = [
                    (i.index_text or "").strip() or t for i, t in zip(chunk, texts, strict=True)
                ]
                vectors = self.embedder.embed_documents(indexed)
                chunk_ids = [i.id or new_memory_id() for i in chunk]
                metas = []
                for item, text, index_text in zip(chunk, texts, indexed, strict=True):
                    extra = dict(item.extra)
                    if index_text != text:
                        extra["index_text"] = index_text
                    metas.append(
                        self._meta(
                            user_id,
                            item.type,
                            item.subject,
                            item.source,
                            item.session_id,
                            item.created_at or now,
                            content_hash(text),
                            extra,
                        )
                    )
                self._counts.pop(user_id, None)  # upserts: some ids may have existed
                coll.upsert(ids=chunk_ids, embeddings=vectors, documents=texts, metadatas=metas)
                self.chroma_writes += 1
                self._remember(
                    user_id,
                    (
                        Memory.from_chroma(i, t, m)
                        for i, t, m in zip(chunk_ids, texts, metas, strict=True)
                    ),
                )
                self.fts.upsert(
                    user_id,
                    zip(chunk_ids, indexed, strict=True),
                    {i: (m["hash"], m["type"]) for i, m in zip(chunk_ids, metas, strict=True)},
                )
                ids.extend(chunk_ids)
                if progress:
                    progress(min(start + 256, len(items)), len(items))
            return ids

    def _meta(
        self,
        user_id: str,
        type: str,
        subject: str,
        source: str,
        session_id: str,
        created_at: float,
        digest: str,
        extra: Mapping[str, str | int | float | bool] | None = None,
    ) -> dict[str, Any]:
        meta: dict[str, Any] = dict(extra or {})
        meta.update(
            {
                "user_id": user_id,
                "type": type,
                "subject": subject.strip().casefold(),
                "source": source,
                "session_id": session_id,
                "created_at": float(created_at),
                "updated_at": float(created_at),
                "superseded_by": "",
                "hash": digest,
            }
        )
        return meta

    def _write(
        self,
        coll: Any,
        user_id: str,
        mem_id: str,
        text: str,
        vector: Vectors,
        digest: str,
        type: str,
        subject: str,
        source: str,
        session_id: str,
        created_at: float | None,
        *,
        upsert: bool,
    ) -> None:
        meta = self._meta(
            user_id, type, subject, source, session_id, created_at or time.time(), digest
        )
        self._total(user_id, coll)
        if upsert and mem_id not in self._staged(user_id):
            coll.upsert(
                ids=[mem_id], embeddings=vector[None, :], documents=[text], metadatas=[meta]
            )
            self.chroma_writes += 1
        else:
            self._stage(user_id, mem_id, _Staged("live", text, meta, vector))
            if not upsert:
                self._shift_count(user_id, +1)
        self._remember(user_id, [Memory.from_chroma(mem_id, text, meta)])
        self.fts.upsert(user_id, [(mem_id, text)], {mem_id: (digest, type)})

    def _exists(self, user_id: str, coll: Any, mem_id: str) -> bool:
        """Whether ``mem_id`` of ``user_id`` is a live memory: staged, cached, or indexed in
        the keyword index (which holds exactly the active memories; one key lookup), else
        one chromadb id lookup."""
        staged = self._staged(user_id, None).get(mem_id)
        if staged is not None:
            return staged.target == "live"
        cached = self._cache.get(user_id, {}).get(mem_id)
        if cached is not None:
            return cached.user_id == user_id
        if not self.shared and not self.fts.has(user_id, mem_id):
            return False
        got = coll.get(ids=[mem_id], include=["metadatas"])
        metas = got["metadatas"] or []
        return bool(got["ids"]) and bool(metas) and (metas[0] or {}).get("user_id") == user_id

    def _in_history(self, user_id: str, mem_id: str) -> bool:
        staged = self._staged(user_id, None).get(mem_id)
        if staged is not None:
            return staged.target == "history"
        known = None if self.shared else self.fts.is_retired(user_id, mem_id)
        if known is not None:
            return known
        hist = self._history(user_id)
        if hist is None:
            return False
        got = hist.get(ids=[mem_id], include=["metadatas"])
        metas = got["metadatas"] or []
        return bool(got["ids"]) and bool(metas) and (metas[0] or {}).get("user_id") == user_id

    def _find_duplicate(
        self, coll: Any, user_id: str, digest: str, vector: Vectors, skip: Sequence[str] = ()
    ) -> str | None:
        """An active memory with the same normalised hash (an indexed metadata lookup), or
        among the ``DEDUP_PROBE`` nearest rows one with cosine ≥ ``dedup_cosine``; rows of
        ``skip`` types never count."""
        for mem_id, row in self._staged(user_id).items():
            if row.meta.get("hash") == digest and row.meta.get("type") not in skip:
                return mem_id
        if self.shared:  # other hosts write too: ask the collection (an indexed lookup)
            same = coll.get(where={"hash": digest}, include=["metadatas"])
            for mem_id, meta in zip(same["ids"], same["metadatas"] or [], strict=False):
                meta = meta or {}
                if meta.get("user_id") == user_id and meta.get("type") not in skip:
                    return str(mem_id)
        else:
            for mem_id, mem_type in self.fts.by_hash(user_id, digest):
                if mem_type not in skip:
                    return mem_id
        for mem_id, sim, meta in self._probe(coll, user_id, vector, DEDUP_PROBE):
            if sim < self.dedup_cosine:
                break
            if meta.get("type") not in skip:
                return mem_id
        return None

    def _find_superseded(
        self, coll: Any, user_id: str, vector: Vectors, type: str, subject: str
    ) -> list[str]:
        """Active memories a new one replaces: the same ``subject``, or (for the types in
        ``SUPERSEDE_BY_SIMILARITY``, no subject) up to three of the same type among the
        ``SUPERSEDE_PROBE`` nearest rows with cosine ≥ ``supersede_threshold``."""
        key = subject.strip().casefold()
        if key:
            hits = coll.get(where={"subject": key}, include=["metadatas"])
            staged = [i for i, r in self._staged(user_id).items() if r.meta.get("subject") == key]
            return staged + [
                str(i)
                for i, meta in zip(hits["ids"], hits["metadatas"] or [], strict=False)
                if (meta or {}).get("user_id") == user_id and str(i) not in staged
            ]
        if type not in SUPERSEDE_BY_SIMILARITY:
            return []
        found: list[str] = []
        for mem_id, sim, meta in self._probe(coll, user_id, vector, SUPERSEDE_PROBE):
            if sim < self.supersede_threshold or len(found) == 3:
                break
            if meta.get("type") == type and not meta.get("subject"):
                found.append(mem_id)
        return found

    def _probe(
        self, coll: Any, user_id: str, vector: Vectors, n: int
    ) -> list[tuple[str, float, Mapping[str, Any]]]:
        """``(id, cosine, metadata)`` of the ``n`` nearest live rows of ``user_id``, best
        first (one unfiltered vector query: the collection holds active rows only; staged
        rows are compared directly)."""
        staged = self._staged(user_id)
        found: list[tuple[str, float, Mapping[str, Any]]] = [
            (i, sim, r.meta)
            for (i, r), sim in zip(
                staged.items(), _cosines(vector, [r.vector for r in staged.values()]), strict=True
            )
        ]
        written = self._written(user_id, coll)
        if written > 0:
            res = coll.query(
                query_embeddings=vector[None, :],
                n_results=min(n, written),
                include=["distances", "metadatas"],
            )
            ids = res["ids"][0] if res["ids"] else []
            dists = res["distances"][0] if res.get("distances") else []
            metas = res["metadatas"][0] if res.get("metadatas") else [{}] * len(ids)
            found.extend(
                (str(i), 1.0 - float(d), m or {})
                for i, d, m in zip(ids, dists, metas, strict=False)
                if (m or {}).get("user_id") == user_id and str(i) not in staged
            )
        found.sort(key=lambda x: -x[1])
        return found[:n]

    def _retire(self, coll: Any, user_id: str, old_ids: Sequence[str], new_id: str) -> None:
        """Move ``old_ids`` to the history collection, marked as replaced by ``new_id``
        (a staged row is re-staged for history: it never reaches the live collection)."""
        if not old_ids:
            return
        now = time.time()
        staged = self._staged(user_id)
        moved = [i for i in old_ids if i in staged]
        for mem_id in moved:
            row = staged[mem_id]
            meta = {**row.meta, "superseded_by": new_id, "updated_at": now}
            self._stage(user_id, mem_id, _Staged("history", row.document, meta, row.vector))
        if moved:
            self._shift_count(user_id, -len(moved))
            self._drop_cached(user_id, moved)
            self.fts.delete(user_id, moved)
            self.fts.retire(user_id, moved)
        old_ids = [i for i in old_ids if i not in staged]
        if not old_ids:
            return
        got = coll.get(ids=list(old_ids), include=["embeddings", "documents", "metadatas"])
        ids, vectors, docs, metas = [], [], [], []
        for i, (mem_id, meta) in enumerate(zip(got["ids"], got["metadatas"] or [], strict=False)):
            if (meta or {}).get("user_id") != user_id:
                continue
            updated = dict(meta or {})
            updated["superseded_by"] = new_id
            updated["updated_at"] = now
            ids.append(str(mem_id))
            vectors.append(got["embeddings"][i])
            docs.append((got["documents"] or [""] * (i + 1))[i] or "")
            metas.append(updated)
        if not ids:
            return
        hist = self._history(user_id, create=True)
        assert hist is not None
        hist.upsert(ids=ids, embeddings=vectors, documents=docs, metadatas=metas)
        self._total(user_id, coll)
        coll.delete(ids=ids)
        self.chroma_writes += 2
        self._shift_count(user_id, -len(ids))
        self._drop_cached(user_id, ids)
        self.fts.delete(user_id, ids)
        self.fts.retire(user_id, ids)

    def supersede(self, user_id: str, old_ids: Sequence[str], new_id: str) -> None:
        """Mark ``old_ids`` of ``user_id`` as replaced by ``new_id`` (kept in history).

        Server mode with the server unavailable: staged rows still move to history (in the
        outbox); rows already on the server stay active (logged), nothing is lost."""
        with self._lock:
            unique = [i for i in dict.fromkeys(old_ids) if i != new_id]
            try:
                coll = self._collection(user_id)
                self._retire(coll, user_id, unique, new_id)
            except ServiceUnavailable as exc:
                if not self.shared:
                    raise
                log.warning("memories %s of %s stay active: %s", unique, user_id, exc)

    def _touch(self, coll: Any, user_id: str, mem_id: str) -> None:
        row = self._staged(user_id).get(mem_id)
        if row is not None:
            meta = {**row.meta, "updated_at": time.time()}
            self._stage(user_id, mem_id, _Staged("live", row.document, meta, row.vector))
            self._remember(user_id, [Memory.from_chroma(mem_id, row.document, meta)])
            return
        got = coll.get(ids=[mem_id], include=["documents", "metadatas"])
        metas = got["metadatas"] or []
        if got["ids"] and metas and (metas[0] or {}).get("user_id") == user_id:
            meta = dict(metas[0] or {})
            meta["updated_at"] = time.time()
            coll.update(ids=[mem_id], metadatas=[meta])
            self.chroma_writes += 1
            doc = (got["documents"] or [""])[0]
            self._remember(user_id, [Memory.from_chroma(mem_id, doc, meta)])

    # ------------------------------------------------------------------ deletes

    def delete_memory(self, user_id: str, memory_id: str) -> bool:
        """Delete one memory of ``user_id`` everywhere (chroma live and history, FTS, recall
        stats). Returns False when ``user_id`` has no memory with that id."""
        with self._lock:
            coll = self._collection(user_id, create=False)
            if coll is None:
                return False
            found = False
            staged = self._pending.get(user_id, {}).pop(memory_id, None)
            if staged is not None:
                self.fts.unstage(user_id, [memory_id])
                if staged.target == "live":
                    self._shift_count(user_id, -1)
                    self._drop_cached(user_id, [memory_id])
                found = True
            if self._exists(user_id, coll, memory_id):
                self._total(user_id, coll)
                coll.delete(ids=[memory_id])
                self.chroma_writes += 1
                self._shift_count(user_id, -1)
                self._drop_cached(user_id, [memory_id])
                found = True
            if self._in_history(user_id, memory_id):
                hist = self._history(user_id)
                if hist is not None:  # None: it was only ever staged
                    hist.delete(ids=[memory_id])
                    self.chroma_writes += 1
                found = True
            if found:
                self.fts.delete(user_id, [memory_id])
                self.fts.unretire(user_id, [memory_id])
            return found

    def delete_many(self, user_id: str, memory_ids: Sequence[str]) -> int:
        """Delete ``memory_ids`` of ``user_id``; returns how many existed."""
        return sum(1 for m in list(memory_ids) if self.delete_memory(user_id, m))

    def clear_user_memory(self, user_id: str) -> int:
        """Remove everything of ``user_id``: both collections, FTS rows and recall stats.
        Returns the number of memories removed (including superseded ones)."""
        with self._lock:
            self._check_open()
            self._collections.pop(user_id, None)
            self._histories.pop(user_id, None)
            self._forget_user(user_id)
            staged = self._pending.pop(user_id, {})
            self.fts.unstage(user_id, [i for i, *_ in self.fts.staged(user_id)])
            removed = len(staged)
            for name in (self.collection_name(user_id), self.history_name(user_id)):
                for candidate in (name, name + REEMBED_SUFFIX):
                    coll = self._existing(candidate)
                    if coll is not None:
                        if candidate == name:
                            removed += int(coll.count())
                        self._client.delete_collection(candidate)
            fts_removed = self.fts.delete_user(user_id)
            self.fts.forget_history(user_id)
            return max(removed, fts_removed)

    def scrub_write_log(self, memory_ids: Sequence[str]) -> int:
        """Blank what chromadb's own write-ahead log (``embeddings_queue`` of the embedded
        ``chroma.sqlite3``) still keeps of deleted memories: their document and metadata,
        kept until the vector index next persists. The vector stays (a replay of the log
        needs it); the metadata segment applied the rows already. A no-op in server mode
        (the server's files are its operator's). Returns the rows blanked."""
        path = self.root / "chroma.sqlite3"
        ids = [str(i) for i in memory_ids]
        if not self._owns_client or not ids or not path.is_file() or path.is_symlink():
            return 0
        with self._lock, closing(sqlite3.connect(path, timeout=30.0)) as conn, conn:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
            if "embeddings_queue" not in tables:
                return 0
            changed = 0
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                marks = ",".join("?" * len(chunk))
                changed += conn.execute(
                    f"UPDATE embeddings_queue SET metadata = NULL WHERE id IN ({marks}) "
                    "AND metadata IS NOT NULL",
                    chunk,
                ).rowcount
            return changed

    def scrub_index_files(self) -> int:
        """Zero the unused capacity of every persisted vector index below the embedded store
        (:func:`hermes_core.providers.hnsw_files.scrub_unused_capacity`: it can hold stray
        bytes of memories deleted a moment ago). A no-op in server mode. Returns the files
        scrubbed."""
        with self._lock:
            return self._scrub_unlocked()

    def _scrub_unlocked(self) -> int:
        return scrub_unused_capacity(self.root) if self._owns_client else 0

    # ------------------------------------------------------------------ reads

    def get(self, user_id: str, ids: Sequence[str]) -> list[Memory]:
        """Active memories of ``user_id`` with these ids (unknown ids are skipped), in order.

        Served from the read cache; the ids it lacks are fetched in one unfiltered id lookup
        and checked for ``user_id`` here."""
        if not ids:
            return []
        with self._lock:
            coll = self._collection(user_id, create=False)
            if coll is None:
                return []
            staged = self._staged(user_id)
            if staged:
                self._remember(user_id, (r.memory(i) for i, r in staged.items() if i in ids))
            cache = self._cache.get(user_id, {})
            missing = [i for i in dict.fromkeys(ids) if i not in cache]
            if missing:
                got = coll.get(ids=missing, include=["documents", "metadatas"])
                self._remember(
                    user_id,
                    (
                        Memory.from_chroma(str(i), d, m or {})
                        for i, d, m in zip(
                            got["ids"], got["documents"] or [], got["metadatas"] or [], strict=False
                        )
                        if (m or {}).get("user_id") == user_id
                    ),
                )
            cache = self._cache.get(user_id, {})
            return [cache[i] for i in ids if i in cache and cache[i].user_id == user_id]

    def dense(
        self,
        user_id: str,
        vector: Vectors,
        n: int,
        where: Mapping[str, Any] | None = None,
    ) -> list[tuple[Memory, float]]:
        """Active memories of ``user_id`` nearest to ``vector``: ``(memory, cosine)``.

        One vector query of the live collection (``where`` narrows it by type or time) and
        the rows from the read cache: the rows read do not depend on the store's size."""
        with self._lock:
            coll = self._collection(user_id, create=False)
            if coll is None:
                return []
            staged = {
                i: r for i, r in self._staged(user_id).items() if _where_matches(r.meta, where)
            }
            sims = _cosines(vector, [r.vector for r in staged.values()])
            scored = [(i, sim) for i, sim in zip(staged, sims, strict=True)]
            written = self._written(user_id, coll)
            if written > 0:
                res = coll.query(
                    query_embeddings=vector[None, :],
                    n_results=min(n, written),
                    where=dict(where) if where else None,
                    include=["distances"],
                )
                ids = [str(i) for i in (res["ids"][0] if res["ids"] else [])]
                dists = (res.get("distances") or [[]])[0]
                scored.extend(
                    (i, 1.0 - float(d)) for i, d in zip(ids, dists, strict=False) if i not in staged
                )
            scored.sort(key=lambda x: -x[1])
            scored = scored[:n]
            by_id = {mem.id: mem for mem in self.get(user_id, [i for i, _ in scored])}
            return [(by_id[i], sim) for i, sim in scored if i in by_id and by_id[i].active]

    def list_memories(
        self,
        user_id: str,
        *,
        include_superseded: bool = False,
        where: Mapping[str, Any] | None = None,
        limit: int | None = None,
    ) -> list[Memory]:
        """Memories of ``user_id``, newest first (a full read: for listings and tools, not
        for the per-turn path; staged rows are written first)."""
        with self._lock:
            coll = self._collection(user_id, create=False)
            if coll is None:
                return []
            self._flush_user(user_id)
            sources = [coll]
            if include_superseded:
                hist = self._history(user_id)
                if hist is not None:
                    sources.append(hist)
            items: list[Memory] = []
            for source in sources:
                got = source.get(
                    where=dict(where) if where else None, include=["documents", "metadatas"]
                )
                items.extend(
                    Memory.from_chroma(str(i), d, m or {})
                    for i, d, m in zip(
                        got["ids"], got["documents"] or [], got["metadatas"] or [], strict=False
                    )
                    if (m or {}).get("user_id") == user_id
                )
        if not include_superseded:
            items = [m for m in items if m.active]
        items.sort(key=lambda m: m.created_at, reverse=True)
        return items[:limit] if limit else items

    def history(self, user_id: str, memory_id: str) -> list[Memory]:
        """The chain around ``memory_id``: the memories it replaced (recursively), itself,
        and what replaced it, oldest first."""
        everything = {m.id: m for m in self.list_memories(user_id, include_superseded=True)}
        if memory_id not in everything:
            return []
        chain = [everything[memory_id]]
        seen = {memory_id}
        frontier = [memory_id]
        while frontier:
            current = frontier.pop()
            for mem in everything.values():
                if mem.superseded_by == current and mem.id not in seen:
                    seen.add(mem.id)
                    chain.append(mem)
                    frontier.append(mem.id)
        nxt = everything[memory_id].superseded_by
        while nxt and nxt in everything and nxt not in seen:
            seen.add(nxt)
            chain.append(everything[nxt])
            nxt = everything[nxt].superseded_by
        return sorted(chain, key=lambda m: m.created_at)

    def rebuild_keyword_index(self, user_id: str) -> int:
        """Rebuild ``user_id``'s FTS rows from the active memories in chroma; returns the
        number indexed."""
        with self._lock:
            active = self.list_memories(user_id)
            self.fts.delete_user(user_id)
            self.fts.upsert(
                user_id,
                [(m.id, str(m.extra.get("index_text") or m.content)) for m in active],
                {m.id: (m.hash, m.type) for m in active},
            )
            return len(active)

    def count(self, user_id: str, *, include_superseded: bool = False) -> int:
        with self._lock:
            coll = self._collection(user_id, create=False)
            if coll is None:
                return 0
            total = self._total(user_id, coll)
            if include_superseded:
                self._flush_user(user_id)
                hist = self._history(user_id)
                total += 0 if hist is None else int(hist.count())
            return total

    def note_recall(self, user_id: str, ids: Iterable[str]) -> None:
        self.fts.note_recall(user_id, list(ids))

    # ------------------------------------------------------------------ expiry

    def expire(
        self,
        user_id: str,
        *,
        ttl_days: float,
        low_value_types: Iterable[str],
        now: float | None = None,
    ) -> list[str]:
        """Delete active memories of the low-value types older than ``ttl_days`` that were
        never recalled. Returns the deleted ids."""
        at = time.time() if now is None else now
        cutoff = at - ttl_days * 86400.0
        types = sorted(set(low_value_types))
        if not types:
            return []
        with self._lock:
            coll = self._collection(user_id, create=False)
            if coll is None:
                return []
            if any(
                float(r.meta.get("created_at", at)) < cutoff for r in self._staged(user_id).values()
            ):
                self._flush_user(user_id)  # a staged row old enough to expire
            got = coll.get(
                where=_and({"type": {"$in": types}}, {"created_at": {"$lt": cutoff}}),
                include=["metadatas"],
            )
            candidates = [
                str(i)
                for i, m in zip(got["ids"], got["metadatas"] or [], strict=False)
                if (m or {}).get("user_id") == user_id
            ]
            recalled = self.fts.recall_counts(user_id, candidates)
            doomed = [i for i in candidates if recalled.get(i, 0) == 0]
            if doomed:
                self._total(user_id, coll)
                coll.delete(ids=doomed)
                self.chroma_writes += 1
                self._shift_count(user_id, -len(doomed))
                self._drop_cached(user_id, doomed)
                self.fts.delete(user_id, doomed)
            return doomed

    # ------------------------------------------------------------------ lifecycle

    def stats(self) -> dict[str, Any]:
        """Per-user counts, the embedder, whether a re-embed is pending, and ``outbox``: rows
        still waiting to be written to chromadb (written first; 0 unless that failed)."""
        users = []
        with self._lock:
            if self.shared:  # also what an earlier process left waiting
                self._retry_all()
            self.flush()
            for user in self.users():
                # read the collections as they are: a stats call must not start a re-embed
                coll = self._existing(self.collection_name(user))
                if coll is None:
                    continue
                hist = self._existing(self.history_name(user))
                legacy = int((coll.metadata or {}).get("schema", 1)) < SCHEMA_VERSION
                if legacy:  # superseded rows still share the live collection
                    active = len(coll.get(where={"superseded_by": ""}, include=[])["ids"])
                else:
                    active = int(coll.count())
                users.append(
                    {
                        "user_id": user,
                        "active": active,
                        "total": int(coll.count()) + (0 if hist is None else int(hist.count())),
                        "indexed": self.fts.count(user),
                        "needs_reembed": self._stale(coll)
                        or (hist is not None and self._stale(hist)),
                    }
                )
            waiting = sum(self.fts.staged_users().values())
        return {
            "path": self.location,
            "embedder": self.embedder.name,
            "dim": self.embedder.dim,
            "users": users,
            "outbox": waiting,
        }

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("the chroma memory store is closed")

    def close(self) -> None:
        """Write the staged rows (a row that cannot be written stays in the outbox for the
        next open), close the FTS index, drop collection handles and close the chromadb
        client the store opened (a client passed in is the caller's to close). Idempotent."""
        with self._lock:
            if self._closed:
                return
            for user_id in list(self._pending):
                try:
                    self._flush_user(user_id)
                except Exception as exc:  # kept in the outbox: written at the next open
                    log.warning("staged memories of %s not written yet: %s", user_id, exc)
            self._closed = True
            self._collections.clear()
            self._histories.clear()
            self.fts.close()
            if self._owns_client:  # the PersistentClient opened here (its files and threads)
                try:
                    self._client.close()
                except Exception as exc:  # closing must not fail a shutdown
                    log.debug("closing the chromadb client of %s: %s", self.root, exc)
                try:  # its last persist may have written stray process memory: clear it
                    self._scrub_unlocked()
                except OSError as exc:
                    log.warning(
                        "could not clear the unused index capacity in %s: %s", self.root, exc
                    )


__all__ = [
    "AddResult",
    "Memory",
    "MemoryStore",
    "NewMemory",
    "Progress",
    "new_memory_id",
]
