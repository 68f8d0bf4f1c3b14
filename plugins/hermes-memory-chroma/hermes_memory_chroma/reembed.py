"""Re-embedding a user's collection when the embedder changed (or on request).

A collection records the embedder's name and dimension in its metadata. When they differ
from the current embedder, every row is embedded again (from its ``index_text`` when it has
one, else its document) into ``<name>-reembed``, the old collection is dropped and the new
one renamed: a crash in between leaves either the old collection or the finished copy, and
:func:`recover` picks up whichever is there on the next open.

These functions work on raw chromadb collections handed in by :class:`MemoryStore`; they
never decide *when* to re-embed (the store does) and hold no state.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from hermes_memory_chroma.embedders import Embedder

log = logging.getLogger(__name__)

REEMBED_SUFFIX = "-reembed"
BATCH = 128

Progress = Callable[[int, int], None]
"""``progress(done, total)`` during long operations."""


def is_stale(coll: Any, embedder: Embedder) -> bool:
    """Whether ``coll`` was built with another embedder (name or dimension)."""
    meta = coll.metadata or {}
    return bool(
        meta.get("embedder") != embedder.name or int(meta.get("dim", -1)) != int(embedder.dim)
    )


def recover(client: Any, name: str, existing: Callable[[str], Any | None]) -> Any | None:
    """Finish or discard an interrupted re-embed of collection ``name``; returns the
    collection now called ``name`` (None when there is none)."""
    coll = existing(name)
    pending = existing(name + REEMBED_SUFFIX)
    if coll is None and pending is not None:
        # crashed between dropping the old collection and renaming the new one
        pending.modify(name=name)
        return pending
    if pending is not None:
        client.delete_collection(name + REEMBED_SUFFIX)
    return coll


def reembed_collection(
    client: Any,
    old: Any,
    embedder: Embedder,
    create: Callable[[str], Any],
    metadata: Mapping[str, Any],
    existing: Callable[[str], Any | None],
    tick: Progress | None = None,
) -> Any:
    """Embed every row of ``old`` again with ``embedder`` and swap the copy in under
    ``old``'s name (with ``metadata``). ``create(name)`` makes an empty collection;
    ``tick(done, total)`` reports progress. Returns the new collection."""
    name = str(old.name)
    owner = (old.metadata or {}).get("user_id")
    data = old.get(include=["documents", "metadatas"])
    stored = zip(data["ids"], data["documents"] or [], data["metadatas"] or [], strict=False)
    rows = [
        (str(i), d or "", m or {})
        for i, d, m in stored
        if (m or {}).get("user_id") == owner  # one user per collection: others never copied
    ]
    ids = [r[0] for r in rows]
    docs = [r[1] for r in rows]
    metas: list[Mapping[str, Any]] = [r[2] for r in rows]
    indexed = [str(m.get("index_text") or d) for d, m in zip(docs, metas, strict=True)]
    log.info(
        "re-embedding %d memories of collection %s (%s -> %s)",
        len(ids),
        name,
        (old.metadata or {}).get("embedder"),
        embedder.name,
    )
    tmp_name = name + REEMBED_SUFFIX
    if existing(tmp_name) is not None:
        client.delete_collection(tmp_name)
    tmp = create(tmp_name)
    for start in range(0, len(ids), BATCH):
        chunk = slice(start, start + BATCH)
        vectors = embedder.embed_documents(indexed[chunk])
        tmp.add(ids=ids[chunk], embeddings=vectors, documents=docs[chunk], metadatas=metas[chunk])
        if tick:
            tick(min(start + BATCH, len(ids)), len(ids))
    if tick and not ids:
        tick(0, 0)
    client.delete_collection(name)
    tmp.modify(name=name, metadata=dict(metadata))
    return existing(name)


__all__ = ["REEMBED_SUFFIX", "Progress", "is_stale", "recover", "reembed_collection"]
