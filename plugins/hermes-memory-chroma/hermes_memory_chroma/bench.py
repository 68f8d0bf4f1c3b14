"""The provider side of ``hermes-memory bench locomo --retriever provider``.

:class:`ChromaRetriever` satisfies ``hermes_core.bench.retrievers.Retriever``: each
conversation goes through the provider's real write path (:meth:`MemoryStore.add_many` into a
private ``$workdir/chroma``, one ``dialogue`` memory per turn, ``created_at`` = session start;
with ``mode: server`` a private database on the server, dropped when the run closes)
and every query through the provider's real hybrid :class:`Retriever` — the same code that
serves ``prefetch`` and ``chroma_search``. The session ranking is derived from the same
fused turn scores (see :func:`rank_sessions`).

Two choices are specific to turn-level conversation data, and both use only the
conversation itself (no labels): each turn is embedded and keyword-indexed *with its
neighbours* (up to two turns before and after it in the same session, the turn itself
counted twice; the stored content is the turn alone), because single utterances such as
"Yes, twice last month!" carry their meaning in context; and a query naming exactly one of
the conversation's speakers boosts that speaker's turns (``SPEAKER_BOOST``), a metadata
preference like the provider's type weights.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import uuid
from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_core.text import about_the_asker

from hermes_memory_chroma.embedders import get_embedder
from hermes_memory_chroma.retriever import Hit, RecallParams, Retriever
from hermes_memory_chroma.settings import ChromaSettings
from hermes_memory_chroma.store import MemoryStore, NewMemory

if TYPE_CHECKING:
    from hermes_core.bench.retrievers import BenchSession, RetrievalResult

BENCH_USER = "bench"
SPEAKER_BOOST = 1.5
BENCH_CANDIDATES = 100
ALL_CANDIDATES = 1000
"""Every fused candidate (three rankings of 100 at most): the session ranking re-fuses them
all before it takes its best ``BENCH_CANDIDATES``."""
CONTEXT_TURNS = 2
NEIGHBOUR_CHARS = 400
"""A neighbouring turn adds at most this many characters to a turn's indexed text: the
embedder's cost grows with the text, and LongMemEval's assistant turns run to thousands of
characters (a haystack took ~200 s to index with whole neighbours, ~80 s with 300). Nearly
every LoCoMo turn is shorter (99th percentile 337 characters)."""
LENGTH_NORM = 0.5
OWN_WORDS_FACTOR = 1.5
"""In the order of the returned *turns* only, the turns of the person the question is about
count ×this on top of the speaker boost: the user's (``user`` turns) for a first-person
question not about the assistant (:func:`hermes_core.text.about_the_asker`), else
the one participant the question names — the built-in ranking's "own words first"
(docs/benchmarks.md, chroma round 4). Sessions are ranked before it."""
SESSION_FEEDBACK_WEIGHT = 0.5
"""The session ranking re-fuses each turn's ranks with the feedback ranking at this weight,
while the turns keep the settings' ``feedback_weight`` (0.3): lowering it for the turns raised
turn recall@10 on both halves of LoCoMo dev and of three LongMemEval-S samples, but lowered
session all@5 when the sessions followed (docs/benchmarks.md, chroma round 4)."""


def context_text(
    lines: Sequence[str], i: int, window: int = CONTEXT_TURNS, cap: int = NEIGHBOUR_CHARS
) -> str:
    """What turn ``i`` is embedded and keyword-indexed as: up to ``window`` turns before and
    after it in the same session (each cut to its first ``cap`` characters), with the turn
    itself (whole) twice so it outweighs its context."""
    before = [line[:cap] for line in lines[max(0, i - window) : i]]
    after = [line[:cap] for line in lines[i + 1 : i + 1 + window]]
    return " ".join([*before, lines[i], lines[i], *after])


def reweighted(hits: Sequence[Hit], params: RecallParams, feedback_weight: float) -> list[Hit]:
    """``hits`` rescored as if the feedback ranking had been fused with ``feedback_weight``
    (each hit keeps its factor: type weight × recency × boosts, i.e. its score over its
    plain reciprocal-rank sum), best first."""
    p = params

    def plain(hit: Hit, feedback: float) -> float:
        total = 0.0
        for rank, weight in (
            (hit.dense_rank, p.dense_weight),
            (hit.bm25_rank, p.bm25_weight),
            (hit.feedback_rank, feedback),
        ):
            if rank is not None:
                total += weight / (p.rrf_k + rank)
        return total

    out = []
    for hit in hits:
        before = plain(hit, p.feedback_weight)
        score = hit.score / before * plain(hit, feedback_weight) if before > 0 else hit.score
        out.append(dataclasses.replace(hit, score=score))
    out.sort(key=lambda h: (-h.score, -h.memory.created_at, h.memory.id))
    return out


def asked_person(query: str, speakers: Sequence[str], named: Sequence[str]) -> str | None:
    """Whose words ``query`` is about (see :data:`OWN_WORDS_FACTOR`): ``"user"`` for a
    first-person question when ``speakers`` has a ``user``, else the one speaker of
    ``named`` (the speakers the query names); ``None`` otherwise."""
    if "user" in speakers and about_the_asker(query):
        return "user"
    return named[0] if len(named) == 1 else None


def own_words_first(hits: Sequence[Hit], speaker: str | None) -> list[Hit]:
    """``hits`` re-ordered with the scores of ``speaker``'s turns ×:data:`OWN_WORDS_FACTOR`
    (scores unchanged); as given when ``speaker`` is ``None``."""
    if speaker is None:
        return list(hits)

    def own(hit: Hit) -> float:
        return OWN_WORDS_FACTOR if hit.memory.extra.get("speaker") == speaker else 1.0

    return sorted(hits, key=lambda h: -h.score * own(h))


def rank_sessions(
    hits: Sequence[Hit],
    k: int,
    decay: float = 0.5,
    sizes: Mapping[str, int] | None = None,
    length_norm: float = LENGTH_NORM,
) -> list[str]:
    """Sessions ordered by a soft-max of their turns' scores: the best turn counts fully,
    the next ones with geometrically decaying weight (``decay``), so a session with several
    relevant turns beats one lucky turn without burying a single strong hit. With ``sizes``
    (turns per session) the sum is divided by ``size ** length_norm``: a long session has
    more chances of a lucky turn than a short one."""
    per: dict[str, list[float]] = defaultdict(list)
    for hit in hits:
        per[hit.memory.session_id].append(hit.score)
    scored = []
    for session, scores in per.items():
        scores.sort(reverse=True)
        total = sum(s * decay**i for i, s in enumerate(scores))
        if sizes:
            total /= max(1, sizes.get(session, 1)) ** length_norm
        scored.append((total, session))
    scored.sort(key=lambda x: (-x[0], x[1]))
    return [s for _, s in scored[:k]]


class ChromaRetriever:
    """LoCoMo/LongMemEval retriever over the chroma provider's store and hybrid search."""

    def __init__(self, settings: ChromaSettings, workdir: Path) -> None:
        self.settings = settings
        self.workdir = Path(workdir)
        self.name = f"chroma-hybrid ({settings.embedder})"
        self._store: MemoryStore | None = None
        self._retriever: Retriever | None = None
        self._speakers: list[str] = []
        self._sizes: dict[str, int] = {}
        self._counter = 0
        self._server: tuple[Any, Any] | None = None

    def reset(self) -> None:
        self.close()
        self._counter += 1
        root = self.workdir / f"chroma-{self._counter}"
        if root.exists():
            shutil.rmtree(root)
        s = self.settings
        client = None
        if s.mode == "server":
            from hermes_memory_chroma.server import ServerTarget, connect, new_breaker

            target = dataclasses.replace(
                ServerTarget.from_settings(s), database=f"hermes-bench-{uuid.uuid4().hex[:16]}"
            )
            client = connect(target, new_breaker())
            self._server = (target, client)
        self._store = MemoryStore(
            root,
            get_embedder(s.embedder),
            prefix=s.collection_prefix,
            dedup_cosine=s.dedup_cosine,
            supersede_threshold=s.supersede_threshold,
            client=client,
            location=None if client is None else s.url,
            shared=client is not None,
        )
        self._retriever = Retriever(
            self._store,
            RecallParams.from_settings(
                s,
                # ranking a whole conversation's sessions needs a deeper candidate pool
                candidates=max(s.candidates, BENCH_CANDIDATES),
                # a benchmark question has no "now": age must not reorder the evidence
                recency_weight=0.0,
            ),
        )
        self._speakers = []
        self._sizes = {}

    def index(self, conversation_id: str, sessions: Sequence[BenchSession]) -> None:
        if self._store is None:
            self.reset()
        assert self._store is not None
        items: list[NewMemory] = []
        speakers: set[str] = set()
        for session in sessions:
            lines = [f"{t.speaker}: {t.text}" if t.speaker else t.text for t in session.turns]
            for i, turn in enumerate(session.turns):
                if turn.speaker:
                    speakers.add(turn.speaker)
                items.append(
                    NewMemory(
                        content=lines[i],
                        type="dialogue",
                        source=f"bench:{conversation_id}",
                        session_id=session.session_id,
                        created_at=session.started_at + i,
                        id=turn.turn_id,
                        index_text=context_text(lines, i),
                        extra={"speaker": turn.speaker},
                    )
                )
        self._speakers = sorted(speakers)
        self._sizes = {session.session_id: len(session.turns) for session in sessions}
        self._store.add_many(BENCH_USER, items)
        # chromadb defers work on freshly added rows to the first read of the collection
        # (~55 ms for a 450-row LongMemEval haystack): do that read here, so it is counted
        # as indexing, not as the first question's search
        self._store.count(BENCH_USER)

    def search(self, query: str, k: int, *, asked_at: datetime | None = None) -> RetrievalResult:
        """The top ``k`` turns and sessions for ``query``. ``asked_at`` (the question's date,
        when the harness knows it) is accepted for the bench protocol and not used: a date
        prior relative to it did not help (see the README)."""
        from hermes_core.bench.retrievers import RetrievalResult, RetrievedTurn

        assert self._retriever is not None, "index() a conversation first"
        depth = max(k, self.settings.candidates, BENCH_CANDIDATES)
        named = [
            s for s in self._speakers if re.search(rf"\b{re.escape(s)}\b", query, re.IGNORECASE)
        ]
        boost = {"speaker": named[0]} if len(named) == 1 else None
        every = self._retriever.search(
            BENCH_USER,
            query,
            top_k=ALL_CANDIDATES,
            record=False,
            boost=boost,
            boost_factor=SPEAKER_BOOST,
        )
        first = own_words_first(every[:depth], asked_person(query, self._speakers, named))
        turns = tuple(
            RetrievedTurn(h.memory.session_id, h.memory.id, score=h.score) for h in first[:k]
        )
        params = self._retriever.params
        by_session = reweighted(every, params, SESSION_FEEDBACK_WEIGHT)[:depth]
        return RetrievalResult(turns, tuple(rank_sessions(by_session, k, sizes=self._sizes)))

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None
            self._retriever = None
        if self._server is not None:
            from hermes_memory_chroma.server import close_client, drop_database

            target, client = self._server
            self._server = None
            close_client(client)
            drop_database(target)


def make_retriever(settings: ChromaSettings, workdir: Path, **overrides: Any) -> ChromaRetriever:
    """A :class:`ChromaRetriever` with settings fields overridden (parameter sweeps)."""
    merged = settings.model_copy(update=overrides) if overrides else settings
    return ChromaRetriever(merged, workdir)


__all__ = [
    "BENCH_USER",
    "ChromaRetriever",
    "asked_person",
    "context_text",
    "make_retriever",
    "own_words_first",
    "rank_sessions",
    "reweighted",
]
