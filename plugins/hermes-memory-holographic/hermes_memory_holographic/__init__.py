"""hermes-memory-holographic: a local SQLite + FTS5 fact store with trust scores, entities
and optional numpy HRR vectors, as a Hermes memory provider. No required dependencies."""

from __future__ import annotations

from hermes_memory_holographic.provider import HolographicProvider
from hermes_memory_holographic.settings import HolographicSettings
from hermes_memory_holographic.store import Fact, FactStore, FactStoreError

__version__ = "0.1.0"

__all__ = [
    "Fact",
    "FactStore",
    "FactStoreError",
    "HolographicProvider",
    "HolographicSettings",
    "__version__",
]
