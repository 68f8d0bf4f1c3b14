"""Real processes: concurrent adds lose nothing (on each store); SIGKILL mid-write never tears
the file."""

from __future__ import annotations

import json
import os
import random
import signal
import time
from pathlib import Path

import pytest
from memkit import MemoryKit

from hermes_core.layers.memory.store import DELIMITER, Change, MemoryStore

pytestmark = pytest.mark.slow

PROCESSES = 8
ADDS = 50


def _fork(body: object) -> int:
    """Run ``body()`` in a forked child process; the child never returns to pytest."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        code = 0
        try:
            body()  # type: ignore[operator]
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    return pid


def _wait(pid: int) -> int:
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def test_eight_processes_adding_concurrently_lose_nothing(hermes_home: Path) -> None:
    start_at = time.time() + 1.0
    results = hermes_home / "results"
    results.mkdir()

    def writer(n: int) -> None:
        kit = MemoryKit(hermes_home, session_id=f"p{n}", memory_char_limit=100_000)
        while time.time() < start_at:
            time.sleep(0.001)
        failures = []
        for i in range(ADDS):
            content = f"process {n} fact {i:02d} — 进程 {n} 的第 {i} 条"
            result = kit.add(content)
            if result.get("success") is not True:
                failures.append(result)
        (results / f"{n}.json").write_text(json.dumps(failures), encoding="utf-8")

    pids = [_fork(lambda n=n: writer(n)) for n in range(PROCESSES)]
    assert [_wait(pid) for pid in pids] == [0] * PROCESSES
    for n in range(PROCESSES):
        assert json.loads((results / f"{n}.json").read_text(encoding="utf-8")) == []
    state = MemoryKit(hermes_home).store("memory").read()
    assert state.readable
    expected = {
        f"process {n} fact {i:02d} — 进程 {n} 的第 {i} 条"
        for n in range(PROCESSES)
        for i in range(ADDS)
    }
    assert len(state.entries) == PROCESSES * ADDS
    assert set(state.entries) == expected
    # each process's own adds stay in its order
    for n in range(PROCESSES):
        mine = [e for e in state.entries if e.startswith(f"process {n} ")]
        assert mine == sorted(mine)


ENTRIES_PER_GENERATION = 20


def _generation(gen: int) -> list[str]:
    return [
        f"gen {gen:06d} item {k:02d} " + ("x" * 200) + f" 第{k}条"
        for k in range(ENTRIES_PER_GENERATION)
    ]


def _assert_whole_generation(text: str) -> int:
    """The file is empty or exactly one complete generation; returns the generation."""
    if text == "":
        return -1
    entries = text.split(DELIMITER)
    gen = int(entries[0].split()[1])
    assert entries == _generation(gen), "torn or mixed memory file"
    return gen


@pytest.mark.files_only
def test_sigkill_mid_write_never_leaves_a_torn_file(hermes_home: Path) -> None:
    store = MemoryStore(hermes_home, "memory", 1_000_000)
    rng = random.Random(1234)
    generations_seen = set()

    def churn(base: int) -> None:
        gen = base
        while True:
            gen += 1
            store.transact(lambda _e, g=gen: Change(_generation(g)), drift_guard=True)

    for trial in range(50):
        pid = _fork(lambda t=trial: churn(t * 1000))
        time.sleep(rng.uniform(0.005, 0.05))
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
        raw = store.path.read_bytes() if store.path.exists() else b""
        generations_seen.add(_assert_whole_generation(raw.decode("utf-8")))
        # the lock died with the writer: the next write goes through at once
        store.transact(lambda e: Change(e), drift_guard=True)
    assert len(generations_seen - {-1}) >= 10  # the writer really was killed mid-stream
