"""LongMemEval retrieval benchmark (``hermes-memory bench longmemeval``), no LLM needed.

Every LongMemEval question has its own haystack (~48 sessions, ~500 turns on
LongMemEval-S): per question the retriever is reset, the haystack indexed through the
retriever's write path (``builtin``: the agent's ``SessionDB.append_messages``), the question
asked and the answer scored (:func:`hermes_core.bench.locomo.run_benchmark` does the
scoring). Turn ids are ``<session_id>:<turn index from 1>``; gold sessions are
``answer_session_ids``, gold turns those marked ``has_answer``; the question's
``question_date`` is passed to the retriever as ``asked_at`` ("two weeks ago" is relative
to it).

Groups: ``all`` (every non-abstention question), one per ``question_type``, and
``abstention`` (ids ending ``_abs``: the answer is not in the history; reported apart and
not part of ``all``; their turn level is empty, they have no ``has_answer`` turns).
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from hermes_core.bench.answer_context import DEFAULT_BUDGET
from hermes_core.bench.locomo import (
    BenchConversation,
    BenchDataError,
    BenchQuestion,
    BenchReport,
    run_benchmark,
)
from hermes_core.bench.retrievers import BenchSession, BenchTurn, Retriever
from hermes_core.statedb import special_file_reason

MAX_FILE_BYTES = 1 << 30
"""Largest LongMemEval file read, uncompressed (LongMemEval-M is ~2.7 GB: pass a split)."""
QUESTION_TYPES = (
    "single-session-user",
    "single-session-assistant",
    "single-session-preference",
    "multi-session",
    "knowledge-update",
    "temporal-reasoning",
)
ABSTENTION = "abstention"
DATE_FORMATS = ("%Y/%m/%d (%a) %H:%M", "%Y/%m/%d %H:%M", "%Y-%m-%d")


def parse_lme_date(text: str) -> float | None:
    """Epoch seconds of a LongMemEval date (``2023/05/30 (Tue) 23:40``) or ``None``."""
    for fmt in DATE_FORMATS:
        try:
            return datetime.strptime(text.strip(), fmt).timestamp()
        except ValueError:
            continue
    return None


def read_json_file(path: Path, max_bytes: int = MAX_FILE_BYTES) -> Any:
    """The JSON in ``path``, gzip-compressed or not (detected by its magic bytes).

    Raises :class:`BenchDataError` naming the fix for a missing or special file, a file (or
    its decompressed content) above ``max_bytes``, bad gzip or bad JSON."""
    path = Path(path)
    if not path.is_file():
        reason = special_file_reason(path) if path.exists() else None
        raise BenchDataError(
            f"{path} is not a regular file{f' ({reason})' if reason else ''} — pass a "
            "LongMemEval JSON file (.json or .json.gz) with --data"
        )
    if path.stat().st_size > max_bytes:
        raise BenchDataError(
            f"{path} is {path.stat().st_size} bytes, above the {max_bytes}-byte cap — pass "
            "one split (LongMemEval-S) or a smaller file"
        )
    try:
        with path.open("rb") as handle:
            raw = handle.read(max_bytes + 1)
    except OSError as exc:
        raise BenchDataError(f"cannot read {path}: {exc}") from exc
    if raw[:2] == b"\x1f\x8b":
        raw = _gunzip(path, raw, max_bytes)
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise BenchDataError(f"{path} is not UTF-8 JSON: {exc}") from exc


def _gunzip(path: Path, raw: bytes, max_bytes: int) -> bytes:
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(raw, max_bytes + 1)
    except zlib.error as exc:
        raise BenchDataError(f"{path} is not valid gzip: {exc}") from exc
    if len(out) > max_bytes or inflater.unconsumed_tail:
        raise BenchDataError(
            f"{path} decompresses to more than {max_bytes} bytes — pass one split "
            "(LongMemEval-S) or a smaller file"
        )
    return out


def _instance(path: Path, index: int, inst: Any) -> BenchConversation:
    if not isinstance(inst, dict):
        raise BenchDataError(f"{path}: item {index} is not an object")
    qid = str(inst.get("question_id") or f"q{index}")
    ids = inst.get("haystack_session_ids") or []
    dates = inst.get("haystack_dates") or []
    bodies = inst.get("haystack_sessions")
    if not isinstance(bodies, list) or len(ids) != len(bodies):
        raise BenchDataError(
            f"{path}: {qid} needs haystack_sessions and as many haystack_session_ids "
            f"(got {len(ids)} ids)"
        )
    sessions: list[BenchSession] = []
    gold_turns: list[str] = []
    for si, (sid, body) in enumerate(zip(ids, bodies, strict=True)):
        date_text = str(dates[si]) if si < len(dates) else ""
        started = parse_lme_date(date_text) or 1_600_000_000.0 + si * 86400
        turns: list[BenchTurn] = []
        for ti, turn in enumerate(body or [], start=1):
            if not isinstance(turn, dict):
                continue
            tid = f"{sid}:{ti}"
            role = str(turn.get("role") or "user")
            turns.append(BenchTurn(tid, role, str(turn.get("content") or ""), role=role))
            if turn.get("has_answer"):
                gold_turns.append(tid)
        sessions.append(BenchSession(str(sid), started, tuple(turns), date_text))
    gold_sessions = tuple(str(s) for s in inst.get("answer_session_ids") or [])
    qtype = str(inst.get("question_type") or "unknown")
    abstention = qid.endswith("_abs")
    conv = BenchConversation(f"{qid} [{qtype}]", sessions, [])
    if not gold_sessions:
        conv.unscored_questions += 1
        return conv
    answer = inst.get("answer")
    asked = parse_lme_date(str(inst.get("question_date") or ""))
    conv.questions.append(
        BenchQuestion(
            question=str(inst.get("question") or ""),
            category=0,
            gold_turns=tuple(gold_turns),
            gold_sessions=gold_sessions,
            qid=qid,
            answer="" if answer is None else str(answer),
            groups=(ABSTENTION, f"{ABSTENTION} {qtype}") if abstention else ("all", qtype),
            asked_at=datetime.fromtimestamp(asked) if asked is not None else None,
        )
    )
    return conv


def load_longmemeval_file(
    path: Path, *, limit: int | None = None, abstention: bool = True
) -> list[BenchConversation]:
    """One :class:`BenchConversation` (its haystack, one question) per LongMemEval instance
    of ``path`` (``.json`` or ``.json.gz``), the first ``limit`` only when given;
    ``abstention=False`` leaves ``_abs`` questions out. Raises :class:`BenchDataError`."""
    data = read_json_file(Path(path))
    if not isinstance(data, list):
        raise BenchDataError(f"{path}: expected a JSON list of LongMemEval instances")
    if data and not (isinstance(data[0], dict) and "haystack_sessions" in data[0]):
        raise BenchDataError(
            f"{path}: the first item has no 'haystack_sessions' — not a LongMemEval file"
        )
    out: list[BenchConversation] = []
    for index, inst in enumerate(data):
        if limit is not None and len(out) >= limit:
            break
        if not abstention and str((inst or {}).get("question_id", "")).endswith("_abs"):
            continue
        out.append(_instance(Path(path), index, inst))
    return out


def group_order(groups: Sequence[str]) -> list[str]:
    """``all``, the question types in the paper's order, unknown types, then abstention."""
    wanted = ["all", *QUESTION_TYPES]
    head = [g for g in wanted if g in groups]
    rest = sorted(g for g in groups if g not in wanted and not g.startswith(ABSTENTION))
    tail = sorted(g for g in groups if g.startswith(ABSTENTION))
    return [*head, *rest, *tail]


def run_longmemeval(
    conversations: Sequence[BenchConversation],
    retriever: Retriever,
    *,
    ks: Sequence[int] = (5, 10),
    budgets: Sequence[int] = (DEFAULT_BUDGET,),
    dataset: str = "",
    progress: Callable[[int], None] | None = None,
) -> BenchReport:
    """Per question: reset, index its haystack, ask, score (groups in :func:`group_order`)."""
    report = run_benchmark(
        conversations, retriever, ks=ks, dataset=dataset, progress=progress, budgets=budgets
    )
    order = group_order(list(report.scores))
    report.scores = {g: report.scores[g] for g in order}
    report.questions = {g: report.questions.get(g, 0) for g in order}
    report.turn_questions = {g: report.turn_questions.get(g, 0) for g in order}
    return report


__all__ = [
    "ABSTENTION",
    "MAX_FILE_BYTES",
    "QUESTION_TYPES",
    "group_order",
    "load_longmemeval_file",
    "parse_lme_date",
    "read_json_file",
    "run_longmemeval",
]
