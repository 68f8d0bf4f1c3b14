"""The first turn of a fresh process: ``hermes-memory chat -q "<question>"`` wall time, built-in
only against each provider, all against the loopback fake LLM (``llm/scripted_server.py``).

Run ``python -m hermes_core.bench.first_turn [--provider chroma] [--runs 3]
[--model-latency 0.0]``: for each variant a throw-away home is configured (``llm.base_url``
= the fake server, ``memory.provider``), ``hermes-memory chat -q`` runs ``runs`` times as a
subprocess (the first run creates the store, the others reopen it, as a user's later
questions do) and the median and every wall time are printed as JSON, with the recall
skips the runs recorded (``recall-skips.json``). ``--model-latency`` makes the fake model
take that many seconds per reply, so the overlap of warm-up and model call shows.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

QUESTION = "What did we decide about the Postgres migration last week? 我们上周怎么决定的？"


def run_variant(
    provider: str | None, runs: int, model_latency: float, workdir: Path
) -> dict[str, Any]:
    """Wall times of ``runs`` ``hermes-memory chat -q`` processes for one variant."""
    import yaml

    from hermes_core.llm.scripted_server import FakeLLMServer

    def slow(_body: Any) -> str:
        time.sleep(model_latency)
        return "We chose logical replication and a cut-over on Friday."

    home = workdir / f"home-{provider or 'builtin'}"
    home.mkdir(parents=True, exist_ok=True)
    os.chmod(home, 0o700)
    with FakeLLMServer(responder=slow) as llm:
        memory: dict[str, Any] = {"provider": provider} if provider else {}
        config = {"llm": {"base_url": llm.base_url, "model": llm.model}, "memory": memory}
        (home / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
        env = {**os.environ, "HERMES_HOME": str(home)}
        env.pop("HERMES_MEMORY__PROVIDER", None)
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "hermes_core", "chat", "-q", QUESTION],
                env=env,
                capture_output=True,
                text=True,
                timeout=600,
            )
            times.append(round(time.perf_counter() - start, 3))
            if done.returncode != 0:
                raise RuntimeError(f"hermes-memory chat -q failed: {done.stderr[-500:]}")
    return {
        "variant": provider or "builtin",
        "model_latency_s": model_latency,
        "median_s": round(statistics.median(times), 3),
        "runs_s": times,
        "recall_skips": _skips(home),
    }


def _skips(home: Path) -> dict[str, Any]:
    try:  # absent from builds older than the ledger (when measuring "before" figures)
        from hermes_core.providers.recall_skips import load
    except ImportError:
        return {}
    return load(home)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("--provider", action="append", default=[], help="repeatable")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--model-latency", type=float, default=0.0)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="hermes-bench-first-turn-") as tmp:
        results = [
            run_variant(name, args.runs, args.model_latency, Path(tmp))
            for name in [None, *args.provider]
        ]
    print(json.dumps(results, ensure_ascii=False, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["QUESTION", "main", "run_variant"]
