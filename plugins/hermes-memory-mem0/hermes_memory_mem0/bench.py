"""mem0 OSS as a ``hermes-memory bench locomo --retriever provider`` retriever.

A comparison point, configured like the provider's oss mode: in-process ``mem0.Memory``,
chroma vector store, the bundled multilingual USE embedder (512-d), ``infer=False`` (each
turn stored verbatim as one memory: ``"<speaker>: <text>"``, no LLM). Each conversation
gets a fresh store under ``workdir``; searches are scoped by ``user_id`` = conversation id.
Wall-clock search latencies are kept in :attr:`Mem0BenchRetriever.latencies_ms`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hermes_core.bench.retrievers import BenchSession, RetrievalResult, RetrievedTurn
from hermes_memory_mem0.oss import OssBackend, OssConfig


class Mem0BenchRetriever:
    """Implements ``hermes_core.bench.retrievers.Retriever`` over mem0 OSS."""

    name = "mem0-oss"

    def __init__(self, workdir: Path, *, collection: str = "hermes_bench") -> None:
        self.workdir = Path(workdir)
        self.collection = collection
        self._backend: OssBackend | None = None
        self._conversation = ""
        self._counter = 0
        self.latencies_ms: list[float] = []

    def reset(self) -> None:
        self.close()
        self._counter += 1
        self._backend = OssBackend(
            OssConfig(data_dir=self.workdir / f"conv-{self._counter}", collection=self.collection)
        )

    def index(self, conversation_id: str, sessions: Sequence[BenchSession]) -> None:
        if self._backend is None:
            self.reset()
        assert self._backend is not None
        self._conversation = conversation_id
        memory: Any = self._backend.memory
        for session in sessions:
            for turn in session.turns:
                memory.add(
                    [{"role": "user", "content": f"{turn.speaker}: {turn.text}"}],
                    user_id=conversation_id,
                    metadata={"turn_id": turn.turn_id, "bench_session": session.session_id},
                    infer=False,
                )

    def search(self, query: str, k: int) -> RetrievalResult:
        assert self._backend is not None, "index() first"
        start = time.perf_counter()
        found = self._backend.memory.search(
            query, top_k=k, filters={"user_id": self._conversation}, threshold=0.0
        )
        self.latencies_ms.append((time.perf_counter() - start) * 1000.0)
        turns = []
        for row in found.get("results", []):
            meta = row.get("metadata") or {}
            if "turn_id" in meta and "bench_session" in meta:
                turns.append(
                    RetrievedTurn(
                        str(meta["bench_session"]),
                        str(meta["turn_id"]),
                        float(row.get("score") or 0.0),
                    )
                )
        return RetrievalResult(tuple(turns))

    def close(self) -> None:
        if self._backend is not None:
            self._backend.close()
            self._backend = None


__all__ = ["Mem0BenchRetriever"]
