"""Hybrid recall: dense (chroma cosine) + BM25 (FTS5), fused by weighted reciprocal rank,
then scaled by memory-type weight and a recency decay; formatted as a prompt block.

``score = (Σ_r w_r / (rrf_k + rank_r)) × type_weight × ((1 - rw) + rw × 0.5^(age/half_life))``

Pseudo-relevance feedback adds a third ranking: the rare words of the first pass's best
``feedback_docs`` hits (:mod:`feedback`) become a second keyword search,
fused with ``feedback_weight``. It finds memories that share the topic but none of the
question's words ("What does Melanie do to destress?" → *running*, *headspace* → other
sessions about running).

A query naming an explicit date ("on 3 June, 2023", "2023年8月") multiplies by ``date_boost``
the memories created in that window (:mod:`dates`), and the date is left out of the keyword
query so its numbers do not match unrelated text.

Filters (type, time window) apply to every ranking. Only the store is used; this module
never writes except the recall counters that protect recalled memories from TTL expiry.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from hermes_core.llm.tokens import estimate_tokens
from hermes_core.recall_pack import DEFAULT_RECALL_TOKENS, RecallHit, pack_recall

from hermes_memory_chroma.dates import date_windows, strip_dates
from hermes_memory_chroma.feedback import expansion_terms
from hermes_memory_chroma.store import Memory, MemoryStore

if TYPE_CHECKING:
    from hermes_memory_chroma.settings import ChromaSettings


@dataclass(frozen=True, slots=True)
class Hit:
    """One recalled memory with its fused score and the evidence behind it."""

    memory: Memory
    score: float
    similarity: float | None = None
    dense_rank: int | None = None
    bm25_rank: int | None = None
    feedback_rank: int | None = None

    def to_dict(self) -> dict[str, Any]:
        out = self.memory.to_dict()
        out["score"] = round(self.score, 6)
        if self.similarity is not None:
            out["similarity"] = round(self.similarity, 4)
        return out


@dataclass(frozen=True, slots=True)
class RecallParams:
    """Tuning of :class:`Retriever`. The defaults here are neutral (plain RRF, no
    feedback); the provider's tuned defaults live in ``ChromaSettings`` and arrive through
    :meth:`from_settings`."""

    top_k: int = 6
    dense_weight: float = 1.0
    bm25_weight: float = 1.0
    rrf_k: int = 60
    candidates: int = 50
    min_similarity: float = 0.3
    recency_half_life_days: float = 30.0
    recency_weight: float = 0.2
    type_weights: Mapping[str, float] = field(default_factory=dict)
    date_boost: float = 4.0
    feedback_weight: float = 0.0
    feedback_docs: int = 5
    feedback_terms: int = 6

    @classmethod
    def from_settings(cls, settings: ChromaSettings, **overrides: Any) -> RecallParams:
        """The provider settings' recall fields (same names; a field the settings lack keeps
        its default here), then ``overrides``."""
        values = {
            f.name: getattr(settings, f.name) for f in fields(cls) if hasattr(settings, f.name)
        }
        if "type_weights" in values:
            values["type_weights"] = dict(values["type_weights"])
        return replace(cls(**values), **overrides)


@dataclass(frozen=True, slots=True)
class _Scoring:
    """The per-query rules :meth:`Retriever._rank` applies to fused candidates."""

    user_id: str
    types: Sequence[str] | None
    since: float | None
    until: float | None
    gate: bool
    boost: Mapping[str, Any] | None
    boost_factor: float
    windows: Sequence[tuple[float, float]]


class Retriever:
    """Hybrid search over one :class:`MemoryStore`, always scoped to one user."""

    def __init__(self, store: MemoryStore, params: RecallParams | None = None) -> None:
        self.store = store
        self.params = params or RecallParams()

    def search(
        self,
        user_id: str,
        query: str,
        *,
        top_k: int | None = None,
        types: Sequence[str] | None = None,
        since: float | None = None,
        until: float | None = None,
        gate: bool = False,
        now: float | None = None,
        record: bool = True,
        boost: Mapping[str, Any] | None = None,
        boost_factor: float = 1.5,
    ) -> list[Hit]:
        """The best ``top_k`` active memories of ``user_id`` for ``query``.

        ``types`` restricts memory types; ``since``/``until`` bound ``created_at`` (epoch
        seconds). ``gate`` drops dense-only hits below ``min_similarity`` (automatic recall
        should say nothing rather than something irrelevant). ``record`` counts the returned
        memories as recalled. ``boost`` multiplies by ``boost_factor`` the score of memories
        whose metadata holds all of its key/value pairs (e.g. ``{"speaker": "Ann"}``).
        """
        p = self.params
        k = top_k or p.top_k
        if not query.strip():
            return []
        where = _filters(types, since, until)
        windows = date_windows(query) if p.date_boost != 1.0 else []
        dense: list[tuple[Memory, float]] = []
        if p.dense_weight > 0:
            vector = self.store.embedder.embed_query(query)
            dense = self.store.dense(user_id, vector, p.candidates, where)
        bm25: list[tuple[str, float]] = []
        if p.bm25_weight > 0:
            keywords = strip_dates(query) if windows else query
            bm25 = self.store.fts.search(user_id, keywords, p.candidates)

        fused: dict[str, float] = {}
        info: dict[str, dict[str, Any]] = {}
        memories: dict[str, Memory] = {}
        for rank, (mem, sim) in enumerate(dense, start=1):
            fused[mem.id] = fused.get(mem.id, 0.0) + p.dense_weight / (p.rrf_k + rank)
            info.setdefault(mem.id, {}).update(similarity=sim, dense_rank=rank)
            memories[mem.id] = mem
        self._add_ranking(fused, info, bm25, p.bm25_weight, "bm25_rank")
        scoring = _Scoring(user_id, types, since, until, gate, boost, boost_factor, windows)
        at = time.time() if now is None else now
        factors: dict[str, float | None] = {}
        ranked = self._rank(fused, info, memories, factors, scoring, at)
        if p.feedback_weight > 0 and p.bm25_weight > 0 and ranked:
            best = [mem.content for _, mem in ranked[: p.feedback_docs]]
            terms = expansion_terms(self.store.fts, best, query, p.feedback_terms)
            if terms:
                again = self.store.fts.search(user_id, " ".join(terms), p.candidates)
                self._add_ranking(fused, info, again, p.feedback_weight, "feedback_rank")
                ranked = self._rank(fused, info, memories, factors, scoring, at)
        chosen = [Hit(mem, score, **info.get(mem.id, {})) for score, mem in ranked[:k]]
        if record and chosen:
            self.store.note_recall(user_id, [h.memory.id for h in chosen])
        return chosen

    def _add_ranking(
        self,
        fused: dict[str, float],
        info: dict[str, dict[str, Any]],
        ranking: Sequence[tuple[str, float]],
        weight: float,
        label: str,
    ) -> None:
        """Fold a keyword ranking (``(mem_id, score)``, best first) into ``fused``."""
        p = self.params
        for rank, (mem_id, _score) in enumerate(ranking, start=1):
            fused[mem_id] = fused.get(mem_id, 0.0) + weight / (p.rrf_k + rank)
            info.setdefault(mem_id, {})[label] = rank

    def _rank(
        self,
        fused: Mapping[str, float],
        info: Mapping[str, Mapping[str, Any]],
        memories: dict[str, Memory],
        factors: dict[str, float | None],
        s: _Scoring,
        at: float,
    ) -> list[tuple[float, Memory]]:
        """Fused scores as ``(score, memory)``, best first. Memories are fetched as needed,
        then each gets a factor once (kept in ``factors`` for a later pass): ``None`` when a
        rule excludes it (owner, active, type, time, gate), else type weight × recency ×
        boost × date prior."""
        missing = [i for i in fused if i not in memories]
        for fetched in self.store.get(s.user_id, missing):
            memories[fetched.id] = fetched
        ranked: list[tuple[float, Memory]] = []
        for mem_id, base in fused.items():
            if mem_id not in factors:
                factors[mem_id] = self._factor(memories.get(mem_id), info.get(mem_id, {}), s, at)
            factor = factors[mem_id]
            if factor is not None:
                ranked.append((base * factor, memories[mem_id]))
        ranked.sort(key=lambda x: (-x[0], -x[1].created_at, x[1].id))
        return ranked

    def _factor(
        self, found: Memory | None, evidence: Mapping[str, Any], s: _Scoring, at: float
    ) -> float | None:
        p = self.params
        if found is None or not found.active or found.user_id != s.user_id:
            return None
        if not _matches(found, s.types, s.since, s.until):
            return None
        weak = evidence.get("similarity", -1.0) < p.min_similarity
        if s.gate and "bm25_rank" not in evidence and weak:
            return None
        factor = p.type_weights.get(found.type, 1.0) * self._recency(found, at)
        if s.boost and all(found.extra.get(key) == val for key, val in s.boost.items()):
            factor *= s.boost_factor
        if s.windows and any(lo <= found.created_at < hi for lo, hi in s.windows):
            factor *= p.date_boost
        return factor

    def _recency(self, mem: Memory, now: float) -> float:
        p = self.params
        if p.recency_weight <= 0:
            return 1.0
        age_days = max(0.0, now - (mem.created_at or now)) / 86400.0
        decay = math.pow(0.5, age_days / p.recency_half_life_days)
        return (1.0 - p.recency_weight) + p.recency_weight * decay


def _filters(
    types: Sequence[str] | None, since: float | None, until: float | None
) -> dict[str, Any] | None:
    clauses: list[dict[str, Any]] = []
    if types:
        clauses.append({"type": {"$in": list(types)}})
    if since is not None:
        clauses.append({"created_at": {"$gte": float(since)}})
    if until is not None:
        clauses.append({"created_at": {"$lte": float(until)}})
    if not clauses:
        return None
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


def _matches(
    mem: Memory, types: Sequence[str] | None, since: float | None, until: float | None
) -> bool:
    if types and mem.type not in types:
        return False
    if since is not None and mem.created_at < since:
        return False
    return not (until is not None and mem.created_at > until)


FORMAT_HEADER = "Long-term memories recalled for this message (most relevant first):"


def format_block(
    hits: Sequence[Hit], query: str = "", *, max_tokens: int = DEFAULT_RECALL_TOKENS
) -> str:
    """Hits as a plain prompt block (unfenced; the host adds the fence) of at most
    ``max_tokens`` estimated tokens: a header line, then ``type: excerpt`` lines under the
    ``[day]`` they were stored, best first, packed by
    :func:`hermes_core.recall_pack.pack_recall` (the sentences that carry ``query``'s terms,
    a fair share of the budget per hit); ``""`` without hits or when nothing fits."""
    room = max_tokens - estimate_tokens(FORMAT_HEADER) - 1
    if not hits or room <= 0:
        return ""
    packed = pack_recall(
        [
            RecallHit(
                hit.memory.content,
                datetime.fromtimestamp(hit.memory.created_at or 0, tz=UTC).strftime("%Y-%m-%d"),
                hit.memory.type.replace("_", " "),
            )
            for hit in hits
        ],
        query,
        room,
    )
    return f"{FORMAT_HEADER}\n{packed}" if packed else ""


__all__ = ["Hit", "RecallParams", "Retriever", "format_block"]
