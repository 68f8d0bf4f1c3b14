"""The retrieval-benchmark contract: what a retriever must do to be scored by
``hermes-memory bench locomo`` (and the LongMemEval harness).

A retriever indexes one conversation (a list of :class:`BenchSession`) at a time, answers
queries with ranked :class:`RetrievedTurn` s (and optionally its own session ranking), and is
closed afterwards. Two implementations exist:

* :class:`BuiltinRetriever` (``--retriever builtin``): writes every turn through the same
  :class:`~hermes_core.layers.sessions.db.SessionDB` code path the agent uses
  (``append_messages``) into a private ``state.db`` and ranks with
  :func:`hermes_core.layers.sessions.ranking.rank`, the ranking behind ``session_search``.
* ``--retriever provider``: the active external memory provider (``memory.provider`` or
  ``--provider NAME``) is loaded from its entry point, built with its validated settings
  and asked for a retriever::

      class MyProvider(MemoryProvider):
          def bench_retriever(self, workdir: Path) -> Retriever: ...

  ``workdir`` is an empty private directory the retriever may use for its storage. The
  returned object must satisfy :class:`Retriever` (a ``typing.Protocol``; no base class
  needed). ``index`` is called once per conversation, always after ``reset``; ``search``
  must return turns best first using the ``turn_id`` s it was given (``D3:7`` on LoCoMo);
  return ``sessions=()`` to have the session ranking derived from the turn order.
  ``search`` may take the keyword ``asked_at`` (when the question was asked: LongMemEval's
  ``question_date``; ``None`` on LoCoMo, whose questions carry no date) to resolve "two
  weeks ago" in the question; retrievers whose ``search`` does not accept it are called
  without it (:func:`accepts_asked_at`).
"""

from __future__ import annotations

import inspect
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from hermes_core.scope import ALL_USERS


@dataclass(frozen=True, slots=True)
class BenchTurn:
    """One dialogue turn: ``turn_id`` is the dataset's id (LoCoMo ``D<session>:<turn>``)."""

    turn_id: str
    speaker: str
    text: str
    role: str = "user"


@dataclass(frozen=True, slots=True)
class BenchSession:
    """One session of a conversation, turns in order, ``started_at`` in epoch seconds."""

    session_id: str
    started_at: float
    turns: tuple[BenchTurn, ...]
    date_text: str = ""


@dataclass(frozen=True, slots=True)
class RetrievedTurn:
    """A ranked hit: which session and turn, and the retriever's score (higher = better)."""

    session_id: str
    turn_id: str
    score: float = 0.0


@dataclass(frozen=True, slots=True)
class RetrievalResult:
    """Ranked turns (best first) and, optionally, the retriever's own session ranking."""

    turns: tuple[RetrievedTurn, ...]
    sessions: tuple[str, ...] = field(default=())


@runtime_checkable
class Retriever(Protocol):
    """What ``hermes-memory bench locomo`` drives. Implementations must not use the network except
    127.0.0.1 and must not download models at run time."""

    name: str

    def reset(self) -> None:
        """Forget the previous conversation (called before each ``index``)."""

    def index(self, conversation_id: str, sessions: Sequence[BenchSession]) -> None:
        """Store every turn of one conversation."""

    def search(self, query: str, k: int, *, asked_at: datetime | None = None) -> RetrievalResult:
        """The top ``k`` turns for ``query`` (and up to ``k`` sessions, optional).
        ``asked_at``: when the question was asked (optional keyword: implementations without
        it are called without it)."""

    def close(self) -> None:
        """Release files and connections."""


def accepts_asked_at(retriever: object) -> bool:
    """Whether ``retriever.search`` takes the ``asked_at`` keyword (or ``**kwargs``);
    checked once per run so older provider retrievers keep working."""
    method = getattr(retriever, "search", None)
    if method is None:
        return False
    try:
        params = inspect.signature(method).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(
        (p.name == "asked_at" and p.kind is not inspect.Parameter.POSITIONAL_ONLY)
        or p.kind is inspect.Parameter.VAR_KEYWORD
        for p in params
    )


def session_ranking(result: RetrievalResult, k: int) -> list[str]:
    """The retriever's own session order, or distinct sessions in turn order."""
    if result.sessions:
        return list(dict.fromkeys(result.sessions))[:k]
    out: list[str] = []
    for turn in result.turns:
        if turn.session_id not in out:
            out.append(turn.session_id)
            if len(out) == k:
                break
    return out


class BuiltinRetriever:
    """The session archive + ``session_search`` ranking, via the user-facing write path."""

    name = "builtin"

    def __init__(
        self, workdir: Path | None = None, *, backend: str = "sqlite", url: str | None = None
    ) -> None:
        """``backend="postgresql"`` indexes each conversation into its own schema of the
        database at ``url`` (dropped afterwards); ``sqlite`` into a ``state.db`` per
        conversation under ``workdir``."""
        if backend not in ("sqlite", "postgresql"):
            raise ValueError(f"unknown backend {backend!r}: use sqlite or postgresql")
        if backend == "postgresql" and not url:
            raise ValueError("the postgresql backend needs a database URL (--url)")
        self.backend = backend
        self.url = url
        if backend == "postgresql":
            self.name = "builtin:postgresql"
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        if workdir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="hermes-bench-")
            workdir = Path(self._tmp.name)
        self.workdir = Path(workdir)
        self._db: Any = None
        self._turn_of: dict[int, tuple[str, str]] = {}
        self._counter = 0

    def _release(self) -> None:
        if self._db is None:
            return
        if self.backend == "postgresql":
            self._db.drop_schema()
        else:
            self._db.close()
        self._db = None

    def reset(self) -> None:
        self._release()
        self._counter += 1
        self._turn_of = {}
        if self.backend == "postgresql":
            import os

            from hermes_core.layers.sessions import PostgresSessionDB

            schema = f"hermes_bench_{os.getpid()}_{self._counter}"
            self._db = PostgresSessionDB(str(self.url), schema=schema)
            return
        from hermes_core.layers.sessions import SessionDB

        home = self.workdir / f"conv-{self._counter}"
        home.mkdir(parents=True, exist_ok=True)
        self._db = SessionDB.open(home)

    def index(self, conversation_id: str, sessions: Sequence[BenchSession]) -> None:
        if self._db is None:
            self.reset()
        for session in sessions:
            self._db.create_session(
                session.session_id,
                source="bench",
                started_at=session.started_at,
                title=f"{conversation_id} {session.session_id}",
            )
            messages = [
                {
                    "role": turn.role,
                    "name": turn.speaker,
                    "content": turn.text,
                    "timestamp": session.started_at + i,
                }
                for i, turn in enumerate(session.turns)
            ]
            ids = self._db.append_messages(session.session_id, messages, user_id=ALL_USERS)
            for mid, turn in zip(ids, session.turns, strict=True):
                self._turn_of[mid] = (session.session_id, turn.turn_id)

    def search(self, query: str, k: int, *, asked_at: datetime | None = None) -> RetrievalResult:
        """Ranked as ``session_search`` ranks, with ``asked_at`` as its "now"."""
        from hermes_core.layers.sessions import rank

        now = asked_at.timestamp() if asked_at is not None else None
        ranking = rank(self._db, query, now=now)
        turns = tuple(
            RetrievedTurn(*self._turn_of[h.message_id], score=h.score)
            for h in ranking.turns[:k]
            if h.message_id in self._turn_of
        )
        sessions = tuple(s.session_id for s in ranking.sessions[:k])
        return RetrievalResult(turns, sessions)

    def close(self) -> None:
        self._release()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None


def load_provider_retriever(home: Path, workdir: Path, provider: str | None = None) -> Retriever:
    """Build the retriever of the active (or named) external provider.

    Raises ``click``-free ``RuntimeError`` s whose message names the fix.
    """
    from hermes_core.providers.base import load_provider_settings
    from hermes_core.providers.registry import load_provider_class
    from hermes_core.settings.base import load_settings

    settings = load_settings(home)
    name = provider or settings.memory.provider
    if not name:
        raise RuntimeError(
            "no external memory provider is active; pass --provider NAME or set "
            "memory.provider (`hermes-memory memory setup`)."
        )
    cls = load_provider_class(name)
    factory = getattr(cls, "bench_retriever", None)
    if factory is None:
        raise RuntimeError(
            f"memory provider '{name}' does not implement bench_retriever(workdir); see "
            "hermes_core/bench/retrievers.py for the protocol."
        )
    raw = settings.memory.providers.get(name, {})
    provider_settings = load_provider_settings(cls.Settings, name, home, raw)
    instance = cls(provider_settings, home)
    retriever = getattr(instance, "bench_retriever")(workdir)  # noqa: B009
    if not isinstance(retriever, Retriever):
        raise RuntimeError(
            f"{type(retriever).__name__} returned by '{name}'.bench_retriever does not "
            "implement reset/index/search/close (hermes_core.bench.retrievers.Retriever)."
        )
    return retriever


__all__ = [
    "BenchSession",
    "BenchTurn",
    "BuiltinRetriever",
    "RetrievalResult",
    "RetrievedTurn",
    "Retriever",
    "accepts_asked_at",
    "load_provider_retriever",
    "session_ranking",
]
