"""hermes-memory-chroma: a local long-term memory provider for hermes-core.

chromadb (dense, cosine) + SQLite FTS5 (BM25) hybrid recall, an LLM compactor with a
lossless fallback, supersede/dedup/TTL hygiene and per-user isolation. The provider class is
:class:`hermes_memory_chroma.provider.ChromaProvider` (entry point ``chroma`` in group
``hermes.memory_providers``). Importing this package loads neither chromadb nor a model.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
