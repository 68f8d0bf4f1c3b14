"""Retrieval benchmark on LoCoMo-format data (and LongMemEval-format data), no LLM needed.

Metrics (binary relevance, per question, averaged):

* ``recall_all@k``: 1 when *every* gold item is in the top k;
* ``recall_any@k``: 1 when *any* gold item is in the top k;
* ``ndcg@k``: DCG of the gold items in the top k over the ideal DCG (LongMemEval's
  ``ndcg_any``).

Session level uses distinct sessions (gold = the ``D<n>`` prefixes of the evidence ids),
turn level uses dialogue ids. LoCoMo categories: 1 multi-hop, 2 temporal, 3 open-domain,
4 single-hop (the headline, "1-4"), 5 adversarial (reported apart). Malformed evidence ids
(``"D8:6; D9:17"``, ``"D"``) and ids of turns that do not exist are skipped and counted; a
question left with no valid evidence is not scored.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from hermes_core.bench.retrievers import (
    BenchSession,
    BenchTurn,
    Retriever,
    session_ranking,
)
from hermes_core.fsutil import BENCH_FILE_MAX_BYTES, read_regular_text

CATEGORY_NAMES = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
HEADLINE_CATEGORIES = (1, 2, 3, 4)
_DIA_ID = re.compile(r"^D(\d+):(\d+)$")
_SESSION_KEY = re.compile(r"^session_(\d+)$")


class BenchDataError(ValueError):
    """The benchmark file is not in the expected format (message names the problem)."""


@dataclass(frozen=True, slots=True)
class BenchQuestion:
    """One question with its gold turn ids (already validated) and category."""

    question: str
    category: int
    gold_turns: tuple[str, ...]
    gold_sessions: tuple[str, ...]
    qid: str = ""


@dataclass(slots=True)
class BenchConversation:
    """One conversation: its sessions and questions."""

    conversation_id: str
    sessions: list[BenchSession]
    questions: list[BenchQuestion]
    skipped_evidence: list[str] = field(default_factory=list)
    unscored_questions: int = 0


def parse_locomo_date(text: str) -> float | None:
    """Epoch seconds of a LoCoMo ``session_<n>_date_time`` ("1:56 pm on 8 May, 2023")."""
    cleaned = " ".join(str(text).replace(",", " ").split())
    for fmt in ("%I:%M %p on %d %B %Y", "%I:%M %p on %d %b %Y", "%H:%M on %d %B %Y"):
        try:
            return datetime.strptime(cleaned, fmt).timestamp()
        except ValueError:
            continue
    return None


def _turn_text(turn: dict[str, Any]) -> str:
    text = str(turn.get("text") or "")
    caption = turn.get("blip_caption")
    if caption:
        text = f"{text} [shared an image: {caption}]"
    return text


def load_locomo(path: Path) -> list[BenchConversation]:
    """Parse a LoCoMo JSON file (a list of samples). Raises :class:`BenchDataError` with
    the offending sample when the shape is wrong."""
    try:
        data = json.loads(read_regular_text(path, max_bytes=BENCH_FILE_MAX_BYTES, what="data file"))
    except (OSError, ValueError) as exc:
        raise BenchDataError(f"cannot read LoCoMo file {path}: {exc}") from exc
    if not isinstance(data, list):
        raise BenchDataError(f"{path}: expected a JSON list of conversations")
    out: list[BenchConversation] = []
    for index, sample in enumerate(data):
        if not isinstance(sample, dict) or not isinstance(sample.get("conversation"), dict):
            raise BenchDataError(f"{path}: item {index} has no 'conversation' object")
        conv_id = str(sample.get("sample_id") or f"conv-{index}")
        conv = sample["conversation"]
        sessions: list[BenchSession] = []
        known_turns: set[str] = set()
        numbers = sorted(int(m.group(1)) for key in conv if (m := _SESSION_KEY.match(key)))
        fallback_time = 1_600_000_000.0
        for n in numbers:
            turns_raw = conv.get(f"session_{n}") or []
            started = parse_locomo_date(conv.get(f"session_{n}_date_time", ""))
            started = started if started is not None else fallback_time + n * 86400
            turns: list[BenchTurn] = []
            for turn in turns_raw:
                if not isinstance(turn, dict) or not turn.get("dia_id"):
                    continue
                dia = str(turn["dia_id"])
                known_turns.add(dia)
                turns.append(BenchTurn(dia, str(turn.get("speaker") or ""), _turn_text(turn)))
            sessions.append(
                BenchSession(
                    f"D{n}", started, tuple(turns), str(conv.get(f"session_{n}_date_time", ""))
                )
            )
        conversation = BenchConversation(conv_id, sessions, [])
        for qi, qa in enumerate(sample.get("qa") or []):
            if not isinstance(qa, dict):
                continue
            gold: list[str] = []
            for ev in qa.get("evidence") or []:
                ev_s = str(ev).strip()
                if _DIA_ID.match(ev_s) and ev_s in known_turns:
                    gold.append(ev_s)
                else:
                    conversation.skipped_evidence.append(f"{conv_id}:{ev_s}")
            gold = list(dict.fromkeys(gold))
            if not gold:
                conversation.unscored_questions += 1
                continue
            try:
                category = int(qa.get("category", 0))
            except (TypeError, ValueError):
                category = 0
            conversation.questions.append(
                BenchQuestion(
                    question=str(qa.get("question") or ""),
                    category=category,
                    gold_turns=tuple(gold),
                    gold_sessions=tuple(dict.fromkeys(g.split(":")[0] for g in gold)),
                    qid=f"{conv_id}#{qi}",
                )
            )
        out.append(conversation)
    return out


def load_longmemeval(path: Path) -> list[BenchConversation]:
    """Parse LongMemEval-format JSON (a list of instances; each instance is its own
    haystack). Turn ids are ``<session_id>:<turn index from 1>``; gold sessions are
    ``answer_session_ids`` and gold turns are those with ``has_answer: true``. Abstention
    questions (ids ending ``_abs``) are skipped, as in the official retrieval evaluation."""
    try:
        data = json.loads(read_regular_text(path, max_bytes=BENCH_FILE_MAX_BYTES, what="data file"))
    except (OSError, ValueError) as exc:
        raise BenchDataError(f"cannot read LongMemEval file {path}: {exc}") from exc
    if not isinstance(data, list):
        raise BenchDataError(f"{path}: expected a JSON list of instances")
    out: list[BenchConversation] = []
    for index, inst in enumerate(data):
        if not isinstance(inst, dict):
            raise BenchDataError(f"{path}: item {index} is not an object")
        qid = str(inst.get("question_id") or f"q{index}")
        if qid.endswith("_abs"):
            continue
        ids = inst.get("haystack_session_ids") or []
        dates = inst.get("haystack_dates") or []
        bodies = inst.get("haystack_sessions") or []
        if not (len(ids) == len(bodies)):
            raise BenchDataError(
                f"{path}: {qid} has {len(ids)} session ids but {len(bodies)} sessions"
            )
        sessions: list[BenchSession] = []
        gold_turns: list[str] = []
        for si, (sid, body) in enumerate(zip(ids, bodies, strict=True)):
            date_text = str(dates[si]) if si < len(dates) else ""
            started = _parse_lme_date(date_text) or 1_600_000_000.0 + si * 86400
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
        qtype = str(inst.get("question_type") or "")
        conv = BenchConversation(f"{qid} [{qtype}]" if qtype else qid, sessions, [])
        if gold_sessions:
            conv.questions.append(
                BenchQuestion(
                    question=str(inst.get("question") or ""),
                    category=0,
                    gold_turns=tuple(gold_turns),
                    gold_sessions=gold_sessions,
                    qid=qid,
                )
            )
        else:
            conv.unscored_questions += 1
        out.append(conv)
    return out


def _parse_lme_date(text: str) -> float | None:
    for fmt in ("%Y/%m/%d (%a) %H:%M", "%Y/%m/%d %H:%M", "%Y-%m-%d"):
        try:
            return datetime.strptime(text.strip(), fmt).timestamp()
        except ValueError:
            continue
    return None


# --------------------------------------------------------------------------- metrics


def recall_all(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """1.0 when every gold item is within the first ``k`` of ``ranked``."""
    top = set(ranked[:k])
    gold_set = set(gold)
    return 1.0 if gold_set and gold_set <= top else 0.0


def recall_any(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """1.0 when any gold item is within the first ``k`` of ``ranked``."""
    top = set(ranked[:k])
    return 1.0 if top & set(gold) else 0.0


def ndcg(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """Binary-relevance NDCG@k."""
    gold_set = set(gold)
    if not gold_set:
        return 0.0
    dcg = sum(1.0 / math.log2(i + 2) for i, item in enumerate(ranked[:k]) if item in gold_set)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(gold_set), k)))
    return dcg / ideal if ideal else 0.0


METRICS: dict[str, Callable[[Sequence[str], Iterable[str], int], float]] = {
    "recall_all": recall_all,
    "recall_any": recall_any,
    "ndcg": ndcg,
}


@dataclass(slots=True)
class BenchReport:
    """Aggregated scores: ``scores[group][level][metric@k]`` where group is ``"1-4"``,
    ``"5"`` or a category name and level is ``session`` or ``turn``."""

    retriever: str
    dataset: str
    ks: tuple[int, ...]
    questions: dict[str, int]
    scores: dict[str, dict[str, dict[str, float]]]
    skipped_evidence: int
    unscored_questions: int
    per_question: list[dict[str, Any]] = field(default_factory=list)
    search_ms: list[float] = field(default_factory=list)
    index_seconds: float = 0.0

    def latency(self, quantile: float) -> float:
        """Search latency in milliseconds at ``quantile`` (0.5 = p50), nearest rank."""
        if not self.search_ms:
            return 0.0
        ordered = sorted(self.search_ms)
        rank = min(len(ordered) - 1, max(0, round(quantile * (len(ordered) - 1))))
        return ordered[rank]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``per_question`` included)."""
        return {
            "retriever": self.retriever,
            "dataset": self.dataset,
            "ks": list(self.ks),
            "questions": self.questions,
            "scores": self.scores,
            "skipped_evidence": self.skipped_evidence,
            "unscored_questions": self.unscored_questions,
            "search_ms_p50": round(self.latency(0.5), 3),
            "search_ms_p95": round(self.latency(0.95), 3),
            "index_seconds": round(self.index_seconds, 3),
            "per_question": self.per_question,
        }


def group_of(category: int) -> list[str]:
    """Report groups a question belongs to."""
    name = CATEGORY_NAMES.get(category, f"cat-{category}")
    if category in HEADLINE_CATEGORIES:
        return ["1-4", f"{category} {name}"]
    if category == 5:
        return ["5 adversarial"]
    return ["all", f"{category} {name}"] if category else ["all"]


def run_benchmark(
    conversations: Sequence[BenchConversation],
    retriever: Retriever,
    *,
    ks: Sequence[int] = (5, 10),
    dataset: str = "",
    progress: Callable[[int], None] | None = None,
) -> BenchReport:
    """Index each conversation through ``retriever`` and score every question.
    ``progress(n)`` is called after each question."""
    ks = tuple(sorted(set(int(k) for k in ks if int(k) > 0))) or (5, 10)
    kmax = max(ks)
    sums: dict[str, dict[str, dict[str, float]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(float))
    )
    counts: dict[str, int] = defaultdict(int)
    per_question: list[dict[str, Any]] = []
    search_ms: list[float] = []
    index_seconds = 0.0
    for conv in conversations:
        started = time.perf_counter()
        retriever.reset()
        retriever.index(conv.conversation_id, conv.sessions)
        index_seconds += time.perf_counter() - started
        for q in conv.questions:
            started = time.perf_counter()
            result = retriever.search(q.question, kmax)
            search_ms.append((time.perf_counter() - started) * 1000)
            turn_ids = [t.turn_id for t in result.turns]
            sessions = session_ranking(result, kmax)
            groups = group_of(q.category)
            for g in groups:
                counts[g] += 1
            row: dict[str, Any] = {"qid": q.qid, "category": q.category}
            for k in ks:
                for mname, fn in METRICS.items():
                    s_val = fn(sessions, q.gold_sessions, k)
                    t_val = fn(turn_ids, q.gold_turns, k) if q.gold_turns else 0.0
                    for g in groups:
                        sums[g]["session"][f"{mname}@{k}"] += s_val
                        sums[g]["turn"][f"{mname}@{k}"] += t_val
                    row[f"session_{mname}@{k}"] = s_val
                    row[f"turn_{mname}@{k}"] = t_val
            per_question.append(row)
            if progress:
                progress(1)
    scores = {
        g: {
            level: {m: round(v / counts[g], 4) for m, v in metrics.items()}
            for level, metrics in levels.items()
        }
        for g, levels in sums.items()
    }
    order = ["1-4", *[f"{c} {CATEGORY_NAMES[c]}" for c in (1, 2, 3, 4)], "5 adversarial", "all"]
    ordered = {g: scores[g] for g in order if g in scores}
    ordered.update({g: v for g, v in scores.items() if g not in ordered})
    return BenchReport(
        retriever=getattr(retriever, "name", type(retriever).__name__),
        dataset=dataset,
        ks=ks,
        questions={g: counts[g] for g in ordered},
        scores=ordered,
        skipped_evidence=sum(len(c.skipped_evidence) for c in conversations),
        unscored_questions=sum(c.unscored_questions for c in conversations),
        per_question=per_question,
        search_ms=search_ms,
        index_seconds=index_seconds,
    )


def detect_format(path: Path) -> str:
    """``"locomo"`` or ``"longmemeval"`` from the first item's keys."""
    try:
        data = json.loads(read_regular_text(path, max_bytes=BENCH_FILE_MAX_BYTES, what="data file"))
    except (OSError, ValueError) as exc:
        raise BenchDataError(f"cannot read {path}: {exc}") from exc
    first = data[0] if isinstance(data, list) and data else {}
    if isinstance(first, dict) and "haystack_sessions" in first:
        return "longmemeval"
    return "locomo"


def load_any(path: Path, fmt: str = "auto") -> list[BenchConversation]:
    """Load ``path`` as LoCoMo or LongMemEval (``fmt="auto"`` detects)."""
    kind = detect_format(path) if fmt == "auto" else fmt
    return load_longmemeval(path) if kind == "longmemeval" else load_locomo(path)


__all__ = [
    "CATEGORY_NAMES",
    "BenchConversation",
    "BenchDataError",
    "BenchQuestion",
    "BenchReport",
    "detect_format",
    "load_any",
    "load_locomo",
    "load_longmemeval",
    "ndcg",
    "parse_locomo_date",
    "recall_all",
    "recall_any",
    "run_benchmark",
]
