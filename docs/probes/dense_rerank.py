"""Probe, not product: how much would a dense signal add to the built-in archive ranking?

Per haystack (a LongMemEval-S question's sessions, or a LoCoMo conversation), every turn a
participant wrote (LongMemEval: ``user`` turns; LoCoMo: every turn) is embedded once with the
offline USE multilingual embedder of the ``embed`` extra, as a write-time store would. Per
question, the built-in ranking (``BuiltinRetriever``, i.e. ``session_search``) gives its
sessions and turns; the best ``--pool`` sessions are re-ranked by reciprocal-rank fusion
(k = 60) of the keyword rank and the rank by best turn cosine (weight ``--weight``), and the
turns likewise (keyword turn order fused with the cosine order of the pool's turns).

Prints session any@5 / all@5 / all@10 and turn recall@10, keyword alone vs fused, on all
scored questions and on the even / odd halves (abstention questions left out, as in the
bench). Used for docs/benchmarks.md, "A dense signal, measured"::

    python docs/probes/dense_rerank.py ../shared/data/longmemeval/longmemeval-s-dev.json.gz
    python docs/probes/dense_rerank.py ../shared/data/locomo/locomo-dev.json
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hermes_core.bench.locomo import load_any, recall_all, recall_any, recall_share
from hermes_core.bench.retrievers import BuiltinRetriever, session_ranking
from hermes_core.embedding import USEMultilingual

RRF_K = 60


def fuse(first: Sequence[str], second: Sequence[str], weight: float) -> list[str]:
    """Reciprocal-rank fusion of two rankings of the same items (``second`` × ``weight``)."""
    score: dict[str, float] = {}
    for i, item in enumerate(first):
        score[item] = score.get(item, 0.0) + 1.0 / (RRF_K + i + 1)
    for i, item in enumerate(second):
        score[item] = score.get(item, 0.0) + weight / (RRF_K + i + 1)
    return sorted(score, key=lambda item: -score[item])


def metrics(sessions: Sequence[str], turns: Sequence[str], q: Any) -> dict[str, float]:
    """Session any@5, all@5, all@10 and turn recall@10 of one question (the bench's own
    metrics, so the keyword column equals ``hermes-memory bench``)."""
    out = {
        "any@5": recall_any(sessions, q.gold_sessions, 5),
        "all@5": recall_all(sessions, q.gold_sessions, 5),
        "all@10": recall_all(sessions, q.gold_sessions, 10),
    }
    if q.gold_turns:
        out["turn@10"] = recall_share(turns, q.gold_turns, 10)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("--pool", type=int, default=20)
    parser.add_argument("--weight", type=float, default=0.75)
    args = parser.parse_args()
    embedder = USEMultilingual()
    retriever = BuiltinRetriever()
    rows: list[tuple[str, dict[str, float], dict[str, float]]] = []
    for conv in load_any(args.data):
        retriever.reset()
        retriever.index(conv.conversation_id, conv.sessions)
        lme = any(t.role == "assistant" for s in conv.sessions for t in s.turns)
        turns = [
            (s.session_id, t.turn_id, t.text[:400])
            for s in conv.sessions
            for t in s.turns
            if not lme or t.role == "user"
        ]
        vectors = embedder.rows([text for _, _, text in turns])
        for q in conv.questions:
            groups = list(q.groups) or ["1-4"]
            if any("abstention" in g for g in groups) or getattr(q, "category", 0) == 5:
                continue
            result = retriever.search(q.question, 200, asked_at=q.asked_at)
            keyword = session_ranking(result, args.pool)
            keyword_turns = [t.turn_id for t in result.turns]
            cosine = vectors @ embedder.rows([q.question])[0]
            pool = set(keyword)
            scored = [
                (float(c), sid, tid)
                for c, (sid, tid, _) in zip(cosine, turns, strict=True)
                if sid in pool
            ]
            scored.sort(reverse=True)
            best: dict[str, float] = {}
            for c, sid, _ in scored:
                best.setdefault(sid, c)
            dense = sorted(keyword, key=lambda sid: -best.get(sid, -1.0))
            fused = fuse(keyword, dense, args.weight)
            fused_turns = fuse(keyword_turns, [tid for _, _, tid in scored], args.weight)
            rows.append(
                (
                    q.qid,
                    metrics(keyword, keyword_turns, q),
                    metrics(fused, fused_turns, q),
                )
            )
    for name, side in (("keyword", 1), ("fused", 2)):
        parts = []
        for label, chosen in (
            ("all", rows),
            ("even", rows[0::2]),
            ("odd", rows[1::2]),
        ):
            figures = []
            for metric in ("any@5", "all@5", "all@10", "turn@10"):
                values = [r[side][metric] for r in chosen if metric in r[side]]
                figures.append(f"{metric} {sum(values) / max(len(values), 1):.3f}")
            parts.append(f"{label}: " + ", ".join(figures))
        print(f"{name:8s} n={len(rows)} | " + " | ".join(parts))


if __name__ == "__main__":
    main()
