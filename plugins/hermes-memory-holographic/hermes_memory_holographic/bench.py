"""The holographic fact store as a ``hermes-memory bench locomo --retriever provider`` retriever.

Each turn becomes one fact (``"<speaker>: <text>"``, entities extracted as usual) of the
conversation's user id in a fresh store under ``workdir``; search is the store's own
keyword + HRR blend with ``min_trust=0``. Identical turn texts collapse into one fact (the
store dedups), which maps to the first such turn. Search latencies are kept in
:attr:`HolographicBenchRetriever.latencies_ms`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from hermes_core.bench.retrievers import BenchSession, RetrievalResult, RetrievedTurn
from hermes_memory_holographic.store import FactStore, FactStoreError


class HolographicBenchRetriever:
    """Implements ``hermes_core.bench.retrievers.Retriever`` over :class:`FactStore`."""

    name = "holographic"

    def __init__(self, workdir: Path, *, hrr_dim: int = 1024, use_hrr: bool = True) -> None:
        self.workdir = Path(workdir)
        self.hrr_dim = hrr_dim
        self.use_hrr = use_hrr
        self._store: FactStore | None = None
        self._where: dict[int, tuple[str, str]] = {}
        self._user = ""
        self._counter = 0
        self.latencies_ms: list[float] = []

    def reset(self) -> None:
        self.close()
        self._counter += 1
        self._store = FactStore(
            self.workdir / f"conv-{self._counter}.db", hrr_dim=self.hrr_dim, use_hrr=self.use_hrr
        )
        self._where = {}

    def index(self, conversation_id: str, sessions: Sequence[BenchSession]) -> None:
        if self._store is None:
            self.reset()
        assert self._store is not None
        self._user = conversation_id
        for session in sessions:
            for turn in session.turns:
                text = f"{turn.speaker}: {turn.text}"[:2000]
                fact, created = self._store.add(conversation_id, text)
                if created:
                    self._where[fact.id] = (session.session_id, turn.turn_id)

    def search(self, query: str, k: int) -> RetrievalResult:
        assert self._store is not None, "index() first"
        start = time.perf_counter()
        try:
            facts = self._store.search(self._user, query, min_trust=0.0, limit=k)
        except FactStoreError:
            facts = []
        self.latencies_ms.append((time.perf_counter() - start) * 1000.0)
        turns = tuple(
            RetrievedTurn(*self._where[f.id], score=f.score or 0.0)
            for f in facts
            if f.id in self._where
        )
        return RetrievalResult(turns)

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None


__all__ = ["HolographicBenchRetriever"]
