"""``hermes-memory bench memory``: latency of memory writes through the real ``memory`` tool.

Every measured call goes the whole way a model's call goes: argument validation, the strict
threat scan, the per-file lock, the re-read under the lock, and the atomic write with fsync.
The run uses a throw-away home (never the user's memory) unless one is given.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from hermes_core.layers.memory import MemoryLayer
from hermes_core.security.scan import scan
from hermes_core.settings.base import load_settings
from hermes_core.types import SessionInfo, ToolContext

EN_FACTS = (
    "User prefers concise answers with the command first",
    "Project {n} uses PostgreSQL 15 on port {port} in Docker",
    "CI for service {n} runs on GitHub Actions; main workflow is ci.yml",
    "User's editor is Neovim; plugin set number {n}",
)
ZH_FACTS = (
    "用户偏好简洁的回答，项目 {n} 先给结论",
    "服务 {n} 的测试数据库在本地 {port} 端口",
    "用户每周五发送第 {n} 份周报",
)


def fact(n: int) -> str:
    """A realistic, unique entry (English and Chinese alternate)."""
    templates = EN_FACTS + ZH_FACTS
    return templates[n % len(templates)].format(n=n, port=5000 + n % 1000) + f" [#{n}]"


@dataclass
class OpStats:
    """Latency figures of one operation kind, in milliseconds."""

    name: str
    samples: list[float] = field(default_factory=list)

    def summary(self) -> dict[str, float | int | str]:
        data = sorted(self.samples)
        if not data:
            return {"op": self.name, "n": 0}
        return {
            "op": self.name,
            "n": len(data),
            "p50_ms": round(_pct(data, 50), 3),
            "p99_ms": round(_pct(data, 99), 3),
            "mean_ms": round(statistics.fmean(data), 3),
            "max_ms": round(data[-1], 3),
        }


def _pct(sorted_data: list[float], pct: float) -> float:
    """Nearest-rank percentile."""
    rank = max(1, min(len(sorted_data), round(pct / 100 * len(sorted_data) + 0.5)))
    return sorted_data[rank - 1]


@dataclass
class BenchResult:
    ops: list[OpStats]
    settings: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"settings": self.settings, "ops": [op.summary() for op in self.ops]}


class _Runner:
    def __init__(self, home: Path, user_id: str | None = None, **memory: Any) -> None:
        base = load_settings(home)
        settings = base.model_copy(update={"memory": base.memory.model_copy(update=memory)})
        self.settings = settings
        self.user_id = user_id
        self.layer = MemoryLayer()
        self.layer.configure(settings, home)
        self.session = SessionInfo(
            id=f"bench-{time.time_ns()}", home=home, settings=settings, user_id=user_id
        )
        self.layer.on_session_start(self.session)
        spec = {s.name: s for s in self.layer.register_tools(self.session)}["memory"]
        self.handler = spec.handler
        self.ctx = ToolContext(session=self.session)

    def call(self, args: dict[str, Any]) -> tuple[float, dict[str, Any]]:
        start = time.perf_counter()
        raw = self.handler(args, self.ctx)
        elapsed = (time.perf_counter() - start) * 1000
        result = json.loads(raw)
        if result.get("success") is not True:
            raise RuntimeError(f"benchmark call failed: {args} -> {result}")
        return elapsed, result


def run_bench(
    *,
    ops: int = 200,
    prefill: int = 20,
    home: Path | None = None,
    progress: Callable[[str], None] | None = None,
    postgres_url: str | None = None,
) -> BenchResult:
    """Time ``ops`` adds, replaces, removes, ``ops // 5`` five-op batches, ``ops`` adds that
    overflow into the archive (the store is filled to its 2,200-char budget first) and ``ops``
    strict scans. Raises RuntimeError if any call fails.

    ``postgres_url``: run on ``memory.store: postgresql`` at that server instead of files,
    as throw-away users (``bench-<ns>-…``) whose rows are deleted afterwards."""
    tick = progress or (lambda _name: None)
    store: dict[str, Any] = {}
    users: tuple[str | None, str | None] = (None, None)
    if postgres_url:
        store = {"store": "postgresql", "url": SecretStr(postgres_url)}
        stamp = time.time_ns()
        users = (f"bench-{stamp}-plain", f"bench-{stamp}-archive")
    with tempfile.TemporaryDirectory(prefix="hermes-bench-memory-") as tmp:
        root = home or Path(tmp)
        try:
            return _run(root, ops, prefill, tick, store, users)
        finally:
            if postgres_url:
                _drop_users(root, store, users)


def _drop_users(root: Path, store: dict[str, Any], users: tuple[str | None, str | None]) -> None:
    from hermes_core.layers.memory import delete_owner, postgres_target

    settings = load_settings(root).memory.model_copy(update=store)
    for user in users:
        delete_owner(postgres_target(settings), user)


def _run(
    root: Path,
    ops: int,
    prefill: int,
    tick: Callable[[str], None],
    store: dict[str, Any],
    users: tuple[str | None, str | None],
) -> BenchResult:
    runner = _Runner(root / "plain", users[0], memory_char_limit=10_000_000, **store)
    for i in range(prefill):
        runner.call({"action": "add", "content": fact(1_000_000 + i)})
    stats = {name: OpStats(name) for name in ("add", "replace", "remove", "batch(5)")}
    for i in range(ops):
        stats["add"].samples.append(runner.call({"action": "add", "content": fact(i)})[0])
        tick("add")
    for i in range(ops):
        args = {"action": "replace", "old_text": f"[#{i}]", "content": fact(i) + " (updated)"}
        stats["replace"].samples.append(runner.call(args)[0])
        tick("replace")
    for i in range(ops):
        elapsed, _ = runner.call({"action": "remove", "old_text": f"[#{i}]"})
        stats["remove"].samples.append(elapsed)
        tick("remove")
    for b in range(ops // 5):
        base = 500_000 + b * 10
        batch = [
            {"action": "add", "content": fact(base)},
            {"action": "add", "content": fact(base + 1)},
            {"action": "add", "content": fact(base + 2)},
            {"action": "replace", "old_text": f"[#{base + 2}]", "content": fact(base + 3)},
            {"action": "remove", "old_text": f"[#{base + 1}]"},
        ]
        stats["batch(5)"].samples.append(runner.call({"operations": batch})[0])
        tick("batch")
    archive = OpStats("add (overflow → archive)")
    overflow = _Runner(
        root / "archive", users[1], memory_char_limit=2200, overflow="archive", **store
    )
    filler = 2_000_000
    while True:  # fill to the budget so that every measured add archives something
        _, result = overflow.call({"action": "add", "content": fact(filler)})
        filler += 1
        if "archived" in result:
            break
    for i in range(ops):
        archive.samples.append(overflow.call({"action": "add", "content": fact(i)})[0])
        tick("archive")
    scans = OpStats("strict scan only")
    for i in range(ops):
        text = fact(i)
        start = time.perf_counter()
        scan(text, "strict")
        scans.samples.append((time.perf_counter() - start) * 1000)
        tick("scan")
    return BenchResult(
        ops=[*stats.values(), archive, scans],
        settings={
            "ops": ops,
            "prefill": prefill,
            "entry_chars": "≈45–70, EN/ZH mixed",
            "store": store.get("store", "files"),
        },
    )


def total_ticks(ops: int) -> int:
    """Progress steps of :func:`run_bench` for ``ops``."""
    return ops * 5 + ops // 5


__all__ = ["BenchResult", "OpStats", "fact", "run_bench", "total_ticks"]
