"""The memory store: chromadb (vectors, texts, metadata) plus the FTS5 side index.

Layout under ``$HERMES_HOME/chroma``: a chromadb ``PersistentClient`` (telemetry off, cosine
space, embeddings always computed here — chroma's DefaultEmbeddingFunction, which downloads a
model, is never used) and ``fts.db``.

Isolation: **one collection per user** (``<prefix>-u-<sha256(user)[:24]>``) and, on top,
every chroma read and write filters on the ``user_id`` metadata field; every public method
takes ``user_id`` first and there is no cross-user query.

Hygiene on :meth:`MemoryStore.add`: a normalised-hash or cosine ≥ ``dedup_cosine`` match is
a duplicate (nothing new stored); a same-subject (explicit ``subject``, or same type and
cosine ≥ ``supersede_threshold``) active memory is *superseded*: it stays in chroma with
``superseded_by`` set (visible in :meth:`history`) but leaves recall and the FTS index.

The embedder's name and dimension live in the collection metadata; opening a collection made
with another embedder re-embeds it (:mod:`reembed`, progress bar on stderr) instead of
failing on the dimension.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

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

SCHEMA_VERSION = 1

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
    ) -> None:
        import chromadb
        from chromadb.config import Settings as ChromaClientSettings

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
        self._client = chromadb.PersistentClient(
            path=str(self.root),
            settings=ChromaClientSettings(anonymized_telemetry=False, allow_reset=False),
        )
        self.fts = FtsIndex(self.root / "fts.db")
        self._collections: dict[str, Any] = {}
        self._cache: dict[str, dict[str, Memory]] = {}
        self._counts: dict[str, int] = {}
        self._closed = False

    # ------------------------------------------------------------------ read cache

    def _dirty(self, user_id: str) -> None:
        """Drop ``user_id``'s cached reads; every write path calls it."""
        self._cache.pop(user_id, None)
        self._counts.pop(user_id, None)

    def _total(self, user_id: str, coll: Any) -> int:
        if user_id not in self._counts:
            self._counts[user_id] = int(coll.count())
        return self._counts[user_id]

    def _remember(self, user_id: str, memories: Iterable[Memory]) -> None:
        cache = self._cache.setdefault(user_id, {})
        if len(cache) > 20_000:
            cache.clear()
        for mem in memories:
            cache[mem.id] = mem

    # ------------------------------------------------------------------ collections

    def collection_name(self, user_id: str) -> str:
        digest = hashlib.sha256(user_id.encode("utf-8")).hexdigest()[:24]
        return f"{self.prefix}-u-{digest}"

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
        except Exception:  # chromadb raises NotFoundError/ValueError depending on version
            return None

    def _create(self, name: str, user_id: str) -> Any:
        return self._client.create_collection(
            name=name,
            metadata=self._metadata(user_id),
            configuration={"hnsw": {"space": "cosine"}},
            embedding_function=None,
        )

    def _collection(self, user_id: str, *, create: bool = True) -> Any | None:
        """The collection of ``user_id`` (re-embedded first if another embedder made it)."""
        if not user_id:
            raise ValueError("user_id is required for every memory read and write")
        with self._lock:
            self._check_open()
            cached = self._collections.get(user_id)
            if cached is not None:
                return cached
            name = self.collection_name(user_id)
            coll = recover(self._client, name, self._existing)
            if coll is None:
                if not create:
                    return None
                coll = self._create(name, user_id)
            elif self._stale(coll):
                coll = self._reembed_collection(user_id, coll, self._reembed_progress)
            self._collections[user_id] = coll
            return coll

    def _stale(self, coll: Any) -> bool:
        return is_stale(coll, self.embedder)

    def needs_reembed(self, user_id: str) -> bool:
        """Whether ``user_id``'s collection was built with another embedder."""
        with self._lock:
            coll = self._existing(self.collection_name(user_id))
            return coll is not None and self._stale(coll)

    def size(self, user_id: str) -> int:
        """Memories (including superseded) in ``user_id``'s collection, read as stored:
        unlike the other reads this never starts a re-embed."""
        with self._lock:
            coll = self._existing(self.collection_name(user_id))
            return 0 if coll is None else int(coll.count())

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

    def _reembed_collection(self, user_id: str, old: Any, progress: Any) -> Any:
        tick: Progress | None = progress(user_id, int(old.count())) if progress else None
        return reembed_collection(
            self._client,
            old,
            self.embedder,
            lambda name: self._create(name, user_id),
            self._metadata(user_id),
            self._existing,
            tick,
        )

    def reembed(
        self, user_id: str, progress: Progress | None = None, *, force: bool = False
    ) -> int:
        """Re-embed ``user_id``'s memories with the current embedder when it changed (or
        always with ``force``). Returns the number of memories re-embedded."""
        with self._lock:
            self._check_open()
            coll = self._existing(self.collection_name(user_id))
            if coll is None or not (force or self._stale(coll)):
                return 0
            self._collections.pop(user_id, None)
            self._dirty(user_id)
            count = int(coll.count())
            fresh = self._reembed_collection(
                user_id, coll, (lambda _u, _n: progress) if progress else None
            )
            self._collections[user_id] = fresh
            return count

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
            coll = self._collection(user_id)
            assert coll is not None
            digest = content_hash(text)
            vector = self.embedder.embed_documents([text])[0]
            if memory_id:
                existing = coll.get(ids=[memory_id], where={"user_id": user_id}, include=[])
                if existing["ids"]:
                    self._write(
                        coll,
                        user_id,
                        memory_id,
                        text,
                        vector,
                        digest,
                        type,
                        subject,
                        source,
                        session_id,
                        created_at,
                        upsert=True,
                    )
                    return AddResult(memory_id, "added")
            if dedup:
                dup = self._find_duplicate(coll, user_id, digest, vector, dedup_skip_types)
                if dup is not None:
                    self._touch(coll, user_id, dup)
                    return AddResult(dup, "duplicate")
            old: list[str] = []
            if supersede:
                old = self._find_superseded(coll, user_id, vector, type, subject)
            new_id = memory_id or new_memory_id()
            self._write(
                coll,
                user_id,
                new_id,
                text,
                vector,
                digest,
                type,
                subject,
                source,
                session_id,
                created_at,
                upsert=False,
            )
            if old:
                self._mark_superseded(coll, user_id, old, new_id)
            return AddResult(new_id, "added", tuple(old))

    def add_many(
        self, user_id: str, items: Sequence[NewMemory], progress: Progress | None = None
    ) -> list[str]:
        """Bulk insert without dedup/supersede (imports, benchmarks). Returns the ids."""
        with self._lock:
            coll = self._collection(user_id)
            assert coll is not None
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
                self._dirty(user_id)
                coll.upsert(ids=chunk_ids, embeddings=vectors, documents=texts, metadatas=metas)
                self.fts.upsert(user_id, zip(chunk_ids, indexed, strict=True))
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
        self._dirty(user_id)
        op = coll.upsert if upsert else coll.add
        op(ids=[mem_id], embeddings=vector[None, :], documents=[text], metadatas=[meta])
        self.fts.upsert(user_id, [(mem_id, text)])

    def _active(self, user_id: str, *more: Mapping[str, Any]) -> dict[str, Any]:
        return _and({"user_id": user_id}, {"superseded_by": ""}, *more)

    def _find_duplicate(
        self, coll: Any, user_id: str, digest: str, vector: Vectors, skip: Sequence[str] = ()
    ) -> str | None:
        not_skipped: list[dict[str, Any]] = [{"type": {"$nin": list(skip)}}] if skip else []
        same = coll.get(
            where=self._active(user_id, {"hash": digest}, *not_skipped), limit=1, include=[]
        )
        if same["ids"]:
            return str(same["ids"][0])
        extra = not_skipped[0] if not_skipped else None
        for mem_id, sim, _meta in self._nearest(coll, user_id, vector, 1, extra):
            if sim >= self.dedup_cosine:
                return mem_id
        return None

    def _find_superseded(
        self, coll: Any, user_id: str, vector: Vectors, type: str, subject: str
    ) -> list[str]:
        key = subject.strip().casefold()
        if key:
            hits = coll.get(where=self._active(user_id, {"subject": key}), include=[])
            return [str(i) for i in hits["ids"]]
        if type not in SUPERSEDE_BY_SIMILARITY:
            return []
        return [
            mem_id
            for mem_id, sim, meta in self._nearest(coll, user_id, vector, 3, {"type": type})
            if sim >= self.supersede_threshold and not meta.get("subject")
        ]

    def _nearest(
        self,
        coll: Any,
        user_id: str,
        vector: Vectors,
        n: int,
        extra: Mapping[str, Any] | None = None,
    ) -> list[tuple[str, float, Mapping[str, Any]]]:
        total = int(coll.count())
        if total == 0:
            return []
        res = coll.query(
            query_embeddings=vector[None, :],
            n_results=min(n, total),
            where=self._active(user_id, *([extra] if extra else [])),
            include=["distances", "metadatas"],
        )
        ids = res["ids"][0] if res["ids"] else []
        dists = res["distances"][0] if res.get("distances") else []
        metas = res["metadatas"][0] if res.get("metadatas") else [{}] * len(ids)
        return [
            (str(i), 1.0 - float(d), m or {}) for i, d, m in zip(ids, dists, metas, strict=False)
        ]

    def _mark_superseded(
        self, coll: Any, user_id: str, old_ids: Sequence[str], new_id: str
    ) -> None:
        if not old_ids:
            return
        got = coll.get(ids=list(old_ids), where={"user_id": user_id}, include=["metadatas"])
        now = time.time()
        metas = []
        for meta in got["metadatas"] or []:
            updated = dict(meta or {})
            updated["superseded_by"] = new_id
            updated["updated_at"] = now
            metas.append(updated)
        if got["ids"]:
            self._dirty(user_id)
            coll.update(ids=list(got["ids"]), metadatas=metas)
            self.fts.delete(user_id, [str(i) for i in got["ids"]])

    def supersede(self, user_id: str, old_ids: Sequence[str], new_id: str) -> None:
        """Mark ``old_ids`` of ``user_id`` as replaced by ``new_id`` (kept in history)."""
        with self._lock:
            coll = self._collection(user_id)
            unique = [i for i in dict.fromkeys(old_ids) if i != new_id]
            self._mark_superseded(coll, user_id, unique, new_id)

    def _touch(self, coll: Any, user_id: str, mem_id: str) -> None:
        got = coll.get(ids=[mem_id], where={"user_id": user_id}, include=["metadatas"])
        if got["ids"]:
            meta = dict((got["metadatas"] or [{}])[0] or {})
            meta["updated_at"] = time.time()
            self._dirty(user_id)
            coll.update(ids=[mem_id], metadatas=[meta])

    # ------------------------------------------------------------------ deletes

    def delete_memory(self, user_id: str, memory_id: str) -> bool:
        """Delete one memory of ``user_id`` everywhere (chroma, FTS, recall stats).
        Returns False when ``user_id`` has no memory with that id."""
        with self._lock:
            coll = self._collection(user_id, create=False)
            if coll is None:
                return False
            got = coll.get(ids=[memory_id], where={"user_id": user_id}, include=[])
            if not got["ids"]:
                return False
            self._dirty(user_id)
            coll.delete(ids=[memory_id], where={"user_id": user_id})
            self.fts.delete(user_id, [memory_id])
            return True

    def delete_many(self, user_id: str, memory_ids: Sequence[str]) -> int:
        """Delete ``memory_ids`` of ``user_id``; returns how many existed."""
        return sum(1 for m in list(memory_ids) if self.delete_memory(user_id, m))

    def clear_user_memory(self, user_id: str) -> int:
        """Remove everything of ``user_id``: the collection, FTS rows and recall stats.
        Returns the number of memories removed (including superseded ones)."""
        with self._lock:
            self._check_open()
            self._collections.pop(user_id, None)
            self._dirty(user_id)
            removed = 0
            name = self.collection_name(user_id)
            for candidate in (name, name + REEMBED_SUFFIX):
                coll = self._existing(candidate)
                if coll is not None:
                    if candidate == name:
                        removed = int(coll.count())
                    self._client.delete_collection(candidate)
            fts_removed = self.fts.delete_user(user_id)
            return max(removed, fts_removed)

    # ------------------------------------------------------------------ reads

    def get(self, user_id: str, ids: Sequence[str]) -> list[Memory]:
        """Memories of ``user_id`` with these ids (unknown ids are skipped), in order."""
        if not ids:
            return []
        with self._lock:
            coll = self._collection(user_id, create=False)
            if coll is None:
                return []
            cache = self._cache.get(user_id, {})
            missing = [i for i in dict.fromkeys(ids) if i not in cache]
            if missing:
                got = coll.get(
                    ids=missing, where={"user_id": user_id}, include=["documents", "metadatas"]
                )
                self._remember(
                    user_id,
                    (
                        Memory.from_chroma(str(i), d, m or {})
                        for i, d, m in zip(
                            got["ids"], got["documents"] or [], got["metadatas"] or [], strict=False
                        )
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
        """Active memories of ``user_id`` nearest to ``vector``: ``(memory, cosine)``."""
        with self._lock:
            coll = self._collection(user_id, create=False)
            if coll is None:
                return []
            total = self._total(user_id, coll)
            if total == 0:
                return []
            wanted = min(n, total)
            hits: list[tuple[Memory, float]] | None = None
            if where is None:
                # Fast path: the collection already belongs to this user and superseded
                # memories are few, so an unfiltered query (a metadata filter costs chroma
                # several ms) over-fetches a little and the same rules are applied here.
                fetched = min(total, wanted + 8 + wanted // 4)
                hits = [
                    (mem, sim)
                    for mem, sim in self._nearest_memories(user_id, coll, vector, fetched, None)
                    if not mem.superseded_by
                ]
                if len(hits) < wanted and fetched < total:
                    hits = None  # too many inactive rows among the nearest: filter in chroma
            if hits is None:
                filters = self._active(user_id, *([where] if where else []))
                hits = self._nearest_memories(user_id, coll, vector, wanted, filters)
            return hits[:wanted]

    def _nearest_memories(
        self,
        user_id: str,
        coll: Any,
        vector: Vectors,
        n: int,
        where: Mapping[str, Any] | None,
    ) -> list[tuple[Memory, float]]:
        """``(memory, cosine)`` of the ``n`` nearest rows, ``user_id``'s only.

        chroma returns just ids and distances (shipping 100 rows of metadata costs more than
        the vector search itself); the rows come from the read cache that every write path
        invalidates, fetched once per id otherwise.
        """
        res = coll.query(
            query_embeddings=vector[None, :], n_results=n, where=where, include=["distances"]
        )
        ids = [str(i) for i in (res["ids"][0] if res["ids"] else [])]
        dists = (res.get("distances") or [[]])[0]
        by_id = {mem.id: mem for mem in self.get(user_id, ids)}
        return [
            (by_id[i], 1.0 - float(dist)) for i, dist in zip(ids, dists, strict=False) if i in by_id
        ]

    def list_memories(
        self,
        user_id: str,
        *,
        include_superseded: bool = False,
        where: Mapping[str, Any] | None = None,
        limit: int | None = None,
    ) -> list[Memory]:
        """Memories of ``user_id``, newest first."""
        with self._lock:
            coll = self._collection(user_id, create=False)
            if coll is None:
                return []
            base = {"user_id": user_id} if include_superseded else self._active(user_id)
            got = coll.get(
                where=_and(base, *([where] if where else [])),
                include=["documents", "metadatas"],
            )
        items = [
            Memory.from_chroma(str(i), d, m or {})
            for i, d, m in zip(
                got["ids"], got["documents"] or [], got["metadatas"] or [], strict=False
            )
        ]
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
                user_id, [(m.id, str(m.extra.get("index_text") or m.content)) for m in active]
            )
            return len(active)

    def count(self, user_id: str, *, include_superseded: bool = False) -> int:
        with self._lock:
            coll = self._collection(user_id, create=False)
            if coll is None:
                return 0
            if include_superseded:
                return int(coll.count())
            got = coll.get(where=self._active(user_id), include=[])
            return len(got["ids"])

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
            got = coll.get(
                where=self._active(
                    user_id, {"type": {"$in": types}}, {"created_at": {"$lt": cutoff}}
                ),
                include=[],
            )
            candidates = [str(i) for i in got["ids"]]
            recalled = self.fts.recall_counts(user_id, candidates)
            doomed = [i for i in candidates if recalled.get(i, 0) == 0]
            if doomed:
                self._dirty(user_id)
                coll.delete(ids=doomed, where={"user_id": user_id})
                self.fts.delete(user_id, doomed)
            return doomed

    # ------------------------------------------------------------------ lifecycle

    def stats(self) -> dict[str, Any]:
        """Per-user counts, the embedder, and whether a re-embed is pending."""
        users = []
        with self._lock:
            for user in self.users():
                # read the collection as it is: a stats call must not start a re-embed
                coll = self._existing(self.collection_name(user))
                if coll is None:
                    continue
                active = coll.get(where=self._active(user), include=[])
                users.append(
                    {
                        "user_id": user,
                        "active": len(active["ids"]),
                        "total": int(coll.count()),
                        "indexed": self.fts.count(user),
                        "needs_reembed": self._stale(coll),
                    }
                )
        return {
            "path": str(self.root),
            "embedder": self.embedder.name,
            "dim": self.embedder.dim,
            "users": users,
        }

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("the chroma memory store is closed")

    def close(self) -> None:
        """Close the FTS index and drop collection handles. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._collections.clear()
            self.fts.close()


__all__ = [
    "AddResult",
    "Memory",
    "MemoryStore",
    "NewMemory",
    "Progress",
    "new_memory_id",
]
