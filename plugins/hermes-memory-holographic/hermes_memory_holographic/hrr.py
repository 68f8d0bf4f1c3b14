"""Holographic reduced representations (Plate's HRR) over numpy, optional.

Each symbol (a content term or an entity name) gets a deterministic random vector (seeded by
its SHA-256, so vectors are stable across processes and need not be stored). A fact is the
normalised superposition of ``bind(CONTENT, term)`` for its terms and ``bind(ENTITY, name)``
for its entities, where ``bind`` is circular convolution. Then

* ``cos(fact, bind(ENTITY, e))`` is high when ``e`` is one of the fact's entities (probe);
* ``cos(fact, Σ bind(ENTITY, e_i))`` is highest for facts tied to all ``e_i`` (reason);
* ``cos(fact, Σ bind(CONTENT, t))`` is a bag-of-words similarity (search blend).

:func:`available` says whether numpy can be imported; callers fall back to keyword search
when it cannot.
"""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

CONTENT_ROLE = "\x00role:content"
ENTITY_ROLE = "\x00role:entity"


def available() -> bool:
    """True when numpy is importable."""
    return importlib.util.find_spec("numpy") is not None


class HRR:
    """Encoder for one dimension. Vectors are float32 numpy arrays of length ``dim``."""

    def __init__(self, dim: int = 1024) -> None:
        import numpy as np

        self.np = np
        self.dim = dim
        self._symbol = lru_cache(maxsize=50_000)(self._make_symbol)

    def _make_symbol(self, name: str) -> Any:
        seed = int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:8], "little")
        rng = self.np.random.default_rng(seed)
        return rng.normal(0.0, 1.0 / self.np.sqrt(self.dim), self.dim).astype(self.np.float32)

    def symbol(self, name: str) -> Any:
        return self._symbol(name)

    def bind(self, a: Any, b: Any) -> Any:
        np = self.np
        return np.fft.irfft(np.fft.rfft(a) * np.fft.rfft(b), n=self.dim).astype(np.float32)

    def _normalised(self, vec: Any) -> Any:
        norm = float(self.np.linalg.norm(vec))
        return vec / norm if norm > 0 else vec

    def role_sum(self, role: str, names: Iterable[str]) -> Any:
        """Normalised ``Σ bind(role, name)``; a zero vector for no names. Binding is linear,
        so this is one inverse FFT of ``rfft(role) × Σ rfft(name)`` (equal to summing the
        binds up to float rounding)."""
        np = self.np
        unique = list(dict.fromkeys(names))
        if not unique:
            return np.zeros(self.dim, dtype=np.float32)
        spectrum = np.fft.rfft(np.stack([self.symbol(n) for n in unique]), axis=1).sum(axis=0)
        acc = np.fft.irfft(np.fft.rfft(self.symbol(role)) * spectrum, n=self.dim)
        return self._normalised(acc.astype(np.float32))

    def encode_fact(self, terms: Iterable[str], entities: Iterable[str]) -> Any:
        """The fact vector (unit length)."""
        r_c, r_e = self.symbol(CONTENT_ROLE), self.symbol(ENTITY_ROLE)
        acc = self.np.zeros(self.dim, dtype=self.np.float32)
        for term in dict.fromkeys(terms):
            acc += self.bind(r_c, self.symbol(term))
        for name in dict.fromkeys(entities):
            acc += self.bind(r_e, self.symbol(name))
        return self._normalised(acc)

    def to_bytes(self, vec: Any) -> bytes:
        return bytes(self.np.asarray(vec, dtype=self.np.float32).tobytes())

    def from_bytes(self, blob: bytes) -> Any:
        return self.np.frombuffer(blob, dtype=self.np.float32)

    def cosines(self, matrix: Any, key: Any) -> Any:
        """Cosine of every row of ``matrix`` (unit rows) with ``key``."""
        key = self._normalised(key)
        return matrix @ key


__all__ = ["CONTENT_ROLE", "ENTITY_ROLE", "HRR", "available"]
