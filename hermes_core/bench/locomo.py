"""Retrieval benchmark on LoCoMo-format data (and LongMemEval-format data), no LLM needed.

Metrics (binary relevance, per question, averaged):

* ``recall_all@k``: 1 when *every* gold item is in the top k;
* ``recall_any@k``: 1 when *any* gold item is in the top k;
* ``ndcg@k``: DCG of the gold items in the top k over the ideal DCG (LongMemEval's
  ``ndcg_any``);
* ``recall@k``: the share of the gold items in the top k (turn recall@10 in the reports);
* ``hit@1``: the best-ranked item is gold;
* ``answer in context`` (:mod:`hermes_core.bench.answer_context`): the recall block cut to a
  token budget holds the gold answer, scored on span questions only.

Session level uses distinct sessions (gold = the ``D<n>`` prefixes of the evidence ids),
turn level uses dialogue ids. LoCoMo categories: 1 multi-hop, 2 temporal, 3 open-domain,
4 single-hop (the headline, "1-4"), 5 adversarial (reported apart). Malformed evidence ids
(``"D8:6; D9:17"``, ``"D"``) and ids of turns that do not exist are skipped and counted; a
question left with no valid evidence is not scored.
"""

from __future__ import annotations

import math
import re
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from hermes_core.bench.answer_context import (
    DEFAULT_BUDGET,
    ContextLine,
    contains_answer,
    is_span,
    recall_block,
)
from hermes_core.bench.retrievers import (
    BenchSession,
    BenchTurn,
    Retriever,
    accepts_asked_at,
    session_ranking,
)

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
    answer: str = ""
    groups: tuple[str, ...] = ()
    """Report groups; empty: derived from ``category`` (:func:`group_of`)."""
    asked_at: datetime | None = None
    """When the question was asked (LongMemEval ``question_date``); ``None`` on LoCoMo,
    whose questions carry no date (the last session's date would be a guess)."""


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
    from hermes_core.bench.longmemeval import read_json_file

    data = read_json_file(Path(path))
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
                    answer=str(qa.get("answer") if qa.get("answer") is not None else ""),
                )
            )
        out.append(conversation)
    return out


def load_longmemeval(path: Path) -> list[BenchConversation]:
    """Parse LongMemEval-format JSON (``.json`` or ``.json.gz``; each instance is its own
    haystack) as :func:`hermes_core.bench.longmemeval.load_longmemeval_file` does, leaving
    out abstention questions (ids ending ``_abs``) as the official retrieval evaluation does.
    """
    from hermes_core.bench.longmemeval import load_longmemeval_file

    return load_longmemeval_file(path, abstention=False)


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


def recall_share(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """The share of the gold items within the first ``k`` of ``ranked`` (0.0 without gold)."""
    gold_set = set(gold)
    if not gold_set:
        return 0.0
    return len(gold_set & set(ranked[:k])) / len(gold_set)


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
    "recall": recall_share,
    "ndcg": ndcg,
}
CONTEXT_TURNS = 60
"""Turns asked for per question: enough to fill the answer-in-context budget."""


@dataclass(slots=True)
class BenchReport:
    """Aggregated scores: ``scores[group][level][metric@k]`` where group is ``"1-4"``,
    ``"5"`` or a category name (LongMemEval: ``all``, ``abstention`` or a question type)
    and level is ``session``, ``turn`` or ``answer`` (``in_context@<budget>`` and
    ``span_questions``). ``questions[group]`` counts the questions scored at session level,
    ``turn_questions[group]`` those with gold turns."""

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
    budgets: tuple[int, ...] = ()
    turn_questions: dict[str, int] = field(default_factory=dict)

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
            "budgets": list(self.budgets),
            "questions": self.questions,
            "turn_questions": self.turn_questions,
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


def _context_lines(conv: BenchConversation) -> dict[str, ContextLine]:
    return {
        turn.turn_id: ContextLine(session.date_text, turn.speaker, turn.text)
        for session in conv.sessions
        for turn in session.turns
    }


def _evidence_text(q: BenchQuestion, conv: BenchConversation) -> list[str]:
    """The gold turns' text, or the gold sessions' when the question names no turns."""
    if q.gold_turns:
        wanted = set(q.gold_turns)
        return [t.text for s in conv.sessions for t in s.turns if t.turn_id in wanted]
    sessions = set(q.gold_sessions)
    return [t.text for s in conv.sessions if s.session_id in sessions for t in s.turns]


class _Tally:
    """Running sums per group and level, with their own question counts."""

    def __init__(self) -> None:
        self.sums: dict[str, dict[str, dict[str, float]]] = defaultdict(
            lambda: defaultdict(lambda: defaultdict(float))
        )
        self.counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))

    def add(self, groups: Sequence[str], level: str, values: dict[str, float]) -> None:
        for g in groups:
            self.counts[g][level] += 1
            for name, value in values.items():
                self.sums[g][level][name] += value

    def scores(self) -> dict[str, dict[str, dict[str, float]]]:
        out: dict[str, dict[str, dict[str, float]]] = {}
        for g, levels in self.sums.items():
            out[g] = {}
            for level, metrics in levels.items():
                n = self.counts[g][level]
                out[g][level] = {m: round(v / n, 4) for m, v in metrics.items()}
                if level == "answer":
                    out[g][level]["span_questions"] = n
        return out


def _level_scores(
    ranked: Sequence[str], gold: Sequence[str], ks: Sequence[int]
) -> dict[str, float]:
    values = {f"{m}@{k}": fn(ranked, gold, k) for k in ks for m, fn in METRICS.items()}
    values["hit@1"] = recall_any(ranked, gold, 1)
    return values


def run_benchmark(
    conversations: Sequence[BenchConversation],
    retriever: Retriever,
    *,
    ks: Sequence[int] = (5, 10),
    dataset: str = "",
    progress: Callable[[int], None] | None = None,
    budgets: Sequence[int] = (DEFAULT_BUDGET,),
) -> BenchReport:
    """Index each conversation through ``retriever`` (reset first) and score every question.
    ``progress(n)`` is called after each question. A question's ``asked_at`` is passed to
    retrievers whose ``search`` accepts it (:func:`accepts_asked_at`). Turn-level scores
    count only questions with gold turns; answer in context (one figure per token budget in
    ``budgets``) only span questions (:func:`~hermes_core.bench.answer_context.is_span`)."""
    ks = tuple(sorted(set(int(k) for k in ks if int(k) > 0))) or (5, 10)
    budgets = tuple(sorted(set(int(b) for b in budgets if int(b) > 0)))
    kmax = max(ks)
    tally = _Tally()
    per_question: list[dict[str, Any]] = []
    search_ms: list[float] = []
    index_seconds = 0.0
    dated = accepts_asked_at(retriever)
    for conv in conversations:
        started = time.perf_counter()
        retriever.reset()
        retriever.index(conv.conversation_id, conv.sessions)
        index_seconds += time.perf_counter() - started
        lines = _context_lines(conv) if budgets else {}
        for q in conv.questions:
            started = time.perf_counter()
            want = max(kmax, CONTEXT_TURNS if budgets else 0)
            if dated:
                result = retriever.search(q.question, want, asked_at=q.asked_at)
            else:
                result = retriever.search(q.question, want)
            search_ms.append((time.perf_counter() - started) * 1000)
            turn_ids = [t.turn_id for t in result.turns]
            sessions = session_ranking(result, kmax)
            groups = list(q.groups) or group_of(q.category)
            row: dict[str, Any] = {"qid": q.qid, "category": q.category, "groups": groups}
            session_values = _level_scores(sessions, q.gold_sessions, ks)
            tally.add(groups, "session", session_values)
            row.update({f"session_{m}": v for m, v in session_values.items()})
            if q.gold_turns:
                turn_values = _level_scores(turn_ids[:kmax], q.gold_turns, ks)
                tally.add(groups, "turn", turn_values)
                row.update({f"turn_{m}": v for m, v in turn_values.items()})
            if budgets and is_span(q.answer, _evidence_text(q, conv)):
                shown = [lines[t] for t in turn_ids if t in lines]
                found = {
                    f"in_context@{b}": float(
                        contains_answer(recall_block(shown, b, q.question), q.answer)
                    )
                    for b in budgets
                }
                tally.add(groups, "answer", found)
                row.update(found)
            per_question.append(row)
            if progress:
                progress(1)
    scores = tally.scores()
    order = ["1-4", *[f"{c} {CATEGORY_NAMES[c]}" for c in (1, 2, 3, 4)], "5 adversarial", "all"]
    ordered = {g: scores[g] for g in order if g in scores}
    ordered.update({g: v for g, v in scores.items() if g not in ordered})
    return BenchReport(
        retriever=getattr(retriever, "name", type(retriever).__name__),
        dataset=dataset,
        ks=ks,
        questions={g: tally.counts[g]["session"] for g in ordered},
        scores=ordered,
        skipped_evidence=sum(len(c.skipped_evidence) for c in conversations),
        unscored_questions=sum(c.unscored_questions for c in conversations),
        per_question=per_question,
        search_ms=search_ms,
        index_seconds=index_seconds,
        budgets=budgets,
        turn_questions={g: tally.counts[g]["turn"] for g in ordered},
    )


def detect_format(path: Path) -> str:
    """``"locomo"`` or ``"longmemeval"`` from the first item's keys (``.json.gz`` read too)."""
    from hermes_core.bench.longmemeval import read_json_file

    data = read_json_file(Path(path))
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
    "recall_share",
    "run_benchmark",
]
