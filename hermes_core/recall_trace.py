"""The recall trace: what ``Session.before_turn`` put in front of the model, per user.

The host records one :class:`TraceTurn` per non-trivial turn (``memory.recall_trace``, on by
default): which layer or provider each recalled block came from, how many memories, their
scores when the provider reports them, the text itself, the token estimate of the fenced
block and how long recall took. Kept per user in
``$HERMES_HOME/recall_trace/[users/<key>/]trace.json`` (0600, written atomically), bounded to
the last ``memory.recall_trace_turns`` turns. ``hermes-memory ui`` shows it; "forget a subject"
drops every traced turn that mentions the phrase (:func:`forget_phrase`).
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from hermes_core.fsutil import atomic_write_text, file_lock
from hermes_core.scope import ensure_scope_dir, known_user_ids, scope_dir

log = logging.getLogger(__name__)

TRACE_DIR = "recall_trace"
TRACE_FILE = "trace.json"
MAX_TRACE_BYTES = 8 * 1024 * 1024
"""A trace file larger than this is not read (it was not written by this module)."""


@dataclass(frozen=True)
class TraceSource:
    """One recalled block: who recalled it (``layer``: the plugin; ``label``: the name shown
    to the user), how many memories, their scores (empty when the source reports none)."""

    layer: str
    label: str
    count: int
    text: str
    scores: tuple[float, ...] = ()


@dataclass(frozen=True)
class TraceTurn:
    """One turn's recall: the query, each block, the token estimate of what went in front
    of the model (0 when nothing did) and the recall's duration in milliseconds."""

    session_id: str
    turn: int
    query: str
    at: float
    tokens: int
    latency_ms: float
    sources: tuple[TraceSource, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["sources"] = [asdict(s) | {"scores": list(s.scores)} for s in self.sources]
        return out


def item_scores(scores: Sequence[object]) -> tuple[float, ...]:
    """``MemoryContext.scores`` for recalled memories whose scores are ``scores`` (in the
    order of their ``- `` lines): all of them as floats, or ``()`` when any is missing or
    not a finite number (the trace then shows the block as it was)."""
    out: list[float] = []
    for value in scores:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return ()
        if not math.isfinite(float(value)):
            return ()
        out.append(float(value))
    return tuple(out)


def trace_root(home: Path) -> Path:
    return home / TRACE_DIR


def trace_path(home: Path, user_id: str | None) -> Path:
    """The trace file of ``user_id`` (the no-user scope for ``None``)."""
    return scope_dir(trace_root(home), user_id) / TRACE_FILE


def _turn(raw: Any) -> TraceTurn | None:
    if not isinstance(raw, dict):
        return None
    try:
        sources = tuple(
            TraceSource(
                layer=str(s.get("layer", "")),
                label=str(s.get("label", "")),
                count=int(s.get("count", 0)),
                text=str(s.get("text", "")),
                scores=tuple(float(x) for x in s.get("scores", ()) or ()),
            )
            for s in raw.get("sources", ())
            if isinstance(s, dict)
        )
        return TraceTurn(
            session_id=str(raw["session_id"]),
            turn=int(raw["turn"]),
            query=str(raw.get("query", "")),
            at=float(raw["at"]),
            tokens=int(raw.get("tokens", 0)),
            latency_ms=float(raw.get("latency_ms", 0.0)),
            sources=sources,
        )
    except (KeyError, TypeError, ValueError):
        return None


def load(home: Path, user_id: str | None) -> list[TraceTurn]:
    """``user_id``'s traced turns, oldest first; ``[]`` when there is no trace or the file
    is not a regular file within :data:`MAX_TRACE_BYTES` of JSON this module wrote."""
    path = trace_path(home, user_id)
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_TRACE_BYTES:
            return []
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    turns = [_turn(item) for item in data] if isinstance(data, list) else []
    return [t for t in turns if t is not None]


def _save(home: Path, user_id: str | None, turns: list[TraceTurn]) -> None:
    directory = ensure_scope_dir(trace_root(home), user_id)
    payload = json.dumps([t.to_dict() for t in turns], ensure_ascii=False)
    atomic_write_text(directory / TRACE_FILE, payload)


def record(home: Path, user_id: str | None, turn: TraceTurn, *, keep: int) -> None:
    """Append ``turn`` to ``user_id``'s trace, keeping the last ``keep`` turns. Never
    raises: a trace that cannot be written is logged and skipped."""
    try:
        path = trace_path(home, user_id)
        ensure_scope_dir(trace_root(home), user_id)
        with file_lock(path):
            turns = [*load(home, user_id), turn][-max(1, keep) :]
            _save(home, user_id, turns)
    except OSError as exc:
        log.warning("recall trace not recorded: %s", exc)


def mentions(turn: TraceTurn, needle: str) -> bool:
    """Whether ``needle`` (case-folded) occurs in the turn's query or recalled text."""
    texts = [turn.query, *(s.text for s in turn.sources)]
    return any(needle in text.casefold() for text in texts)


def find_phrase(home: Path, user_id: str | None, phrase: str) -> list[TraceTurn]:
    """``user_id``'s traced turns that mention ``phrase`` (case-insensitive)."""
    needle = phrase.casefold()
    return [t for t in load(home, user_id) if mentions(t, needle)]


def forget_phrase(home: Path, user_id: str | None, phrase: str) -> int:
    """Drop ``user_id``'s traced turns that mention ``phrase``; returns how many went."""
    path = trace_path(home, user_id)
    if not path.exists():
        return 0
    needle = phrase.casefold()
    with file_lock(path):
        turns = load(home, user_id)
        kept = [t for t in turns if not mentions(t, needle)]
        if len(kept) != len(turns):
            _save(home, user_id, kept)
    return len(turns) - len(kept)


def forget_user(home: Path, user_id: str | None) -> bool:
    """Delete ``user_id``'s whole trace file; True when there was one."""
    path = trace_path(home, user_id)
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    return True


def traced_users(home: Path) -> list[str]:
    """User ids that have a trace of their own."""
    return known_user_ids(trace_root(home))


__all__ = [
    "TRACE_DIR",
    "TraceSource",
    "TraceTurn",
    "find_phrase",
    "forget_phrase",
    "forget_user",
    "item_scores",
    "load",
    "record",
    "trace_path",
    "traced_users",
]
