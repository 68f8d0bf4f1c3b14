"""Performance of the session archive on synthetic mixed English + Chinese history.

For each size N the benchmark builds a fresh ``state.db`` through
:meth:`~hermes_core.layers.sessions.db.SessionDB.append_messages` (the bulk path:
:data:`SESSIONS_PER_COMMIT` sessions of 40 messages per transaction; plus a sample of
single-turn appends, each committed durably, which is what ``sync`` does once per turn), then times

* discovery (``session_search`` discover mode, the whole tool call: ranking + hydration of
  the top result) for *selective* queries (≈0.5–2 % of messages match) and *broad* ones
  (12–33 %), p50 and p95 over repeated runs;
* the ranking alone for the same queries;
* scroll (``session_id`` + ``around_message_id``) and browse;
* the database size (db + WAL) and bytes per message;
* the rows each query ranked (:class:`~hermes_core.layers.sessions.ranking.Cost`).

``backend="postgresql"`` runs the same on a PostgreSQL server (a scratch schema per size in
the database at ``url``, dropped afterwards), so both backends can be compared in one run;
:func:`run_concurrent` measures N processes writing turns into one archive at once.

Messages are 2/3 English (8-40 words, Zipf-like vocabulary) and 1/3 Chinese (3-15 common
words), in sessions of 40 messages alternating user/assistant. The generator is seeded, so
runs are comparable.
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from hermes_core.layers.sessions import SessionDB, SessionSearch, rank
from hermes_core.scope import ALL_USERS

_EN_TEXT = (
    "the a to and of in is it you that for on with this we can be have will not are do "
    "build test deploy server client config error file update change code run data user "
    "model memory search index query cache token prompt session tool result review plan "
    "branch commit merge release version install package module function class method "
    "python rust docker image container network request response latency metric log "
    "plugin embedding vector store database schema table column migration backup restore"
)
_ZH_TEXT = (
    "我们 今天 讨论 向量 设计 用户 喜欢 明天 系统 记忆 检索 模型 配置 服务 部署 测试 代码 "
    "文件 错误 更新 问题 方案 需要 已经 完成 可以 这个 一下 性能 缓存"
)
_EN_WORDS = _EN_TEXT.split()
_ZH_WORDS = _ZH_TEXT.split()
SELECTIVE_QUERIES = ("dark mode", "开会讨论", "kubernetes helm", "flaky integration")
BROAD_QUERIES = ("coffee", "数据库", "plugin embedding", "deploy server error")
NEEDLE_SESSION = 37
"""The old session every needle is planted in (about message 1,500 of the archive)."""
NEEDLES = (
    ("en", "coffee grinder conical burr", "the new conical burr grinder makes the coffee sweeter"),
    ("zh", "数据库熔断演练", "周五下午我们做了数据库熔断演练，切换只用了八秒"),
    ("en", "xylophone tokenizer", "my xylophone tokenizer splits each melody into note tokens"),
    ("zh", "缓存雪崩预案", "缓存雪崩预案已经写好了，明天评审"),
)
"""``(language, query, text)``: a query mixing one common word (``coffee``, ``数据库``,
``token`` (the stem of "tokenizer"), ``缓存``) with words that occur only in the needle's
message of session :data:`NEEDLE_SESSION`; the exhaustive ranking puts that session first."""
SESSIONS_PER_COMMIT = 250
"""Sessions written per transaction while building an archive (the bulk path: a 1M-message
archive is 25,000 sessions; one durable commit each would dominate the build)."""


def _zipf_word(rng: random.Random) -> str:
    idx = min(int(rng.paretovariate(1.1)) - 1, len(_EN_WORDS) - 1)
    return _EN_WORDS[idx] if rng.random() < 0.6 else rng.choice(_EN_WORDS)


def synthetic_message(rng: random.Random, i: int) -> str:
    """One message; planted terms give known selectivities (see module docstring)."""
    if i % 3 == 2:
        words = [rng.choice(_ZH_WORDS) for _ in range(rng.randint(3, 15))]
        if rng.random() < 0.36:
            words.insert(rng.randrange(len(words)), "数据库")
        if rng.random() < 0.02:
            words.append("下午开会讨论")
        return "".join(words)
    words = [_zipf_word(rng) for _ in range(rng.randint(8, 40))]
    if rng.random() < 0.33:
        words.insert(rng.randrange(len(words)), "coffee")
    if rng.random() < 0.015:
        words += ["dark", "mode"]
    if rng.random() < 0.01:
        words += ["kubernetes", "helm", "chart"]
    if rng.random() < 0.01:
        words += ["flaky", "integration", "test"]
    return " ".join(words)


@dataclass(slots=True)
class Timing:
    """Latency samples in milliseconds."""

    samples: list[float] = field(default_factory=list)
    cpu_samples: list[float] = field(default_factory=list)
    """CPU time of this process per run (ms): the figure to read on a loaded machine."""

    def add(self, seconds: float, cpu_seconds: float | None = None) -> None:
        self.samples.append(seconds * 1000)
        if cpu_seconds is not None:
            self.cpu_samples.append(cpu_seconds * 1000)

    @property
    def p50(self) -> float:
        return statistics.median(self.samples) if self.samples else 0.0

    @property
    def p95(self) -> float:
        if not self.samples:
            return 0.0
        ordered = sorted(self.samples)
        return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]

    def to_dict(self) -> dict[str, float]:
        out = {"p50_ms": round(self.p50, 2), "p95_ms": round(self.p95, 2), "n": len(self.samples)}
        if self.cpu_samples:
            out["cpu_p50_ms"] = round(statistics.median(self.cpu_samples), 2)
        return out


def _time(fn: Callable[[], Any], repeat: int) -> Timing:
    timing = Timing()
    fn()  # warm the page cache and statement cache
    for _ in range(repeat):
        start, cpu = time.perf_counter(), time.process_time()
        fn()
        timing.add(time.perf_counter() - start, time.process_time() - cpu)
    return timing


def _open(backend: str, workdir: Path, name: str, url: str | None) -> Any:
    """A fresh archive: ``workdir/name/state.db`` or schema ``name`` in ``url``."""
    if backend == "postgresql":
        import os

        from hermes_core.layers.sessions import PostgresSessionDB

        if not url:
            raise ValueError("the postgresql backend needs a database URL")
        return PostgresSessionDB(url, schema=f"hermes_bench_{name}_{os.getpid()}")
    if backend != "sqlite":
        raise ValueError(f"unknown backend {backend!r}: use sqlite or postgresql")
    home = workdir / name
    home.mkdir(parents=True, exist_ok=True)
    return SessionDB.open(home)


def _discard(db: Any) -> None:
    if getattr(db, "backend", "") == "postgresql":
        db.drop_schema()
    else:
        db.close()


def run_size(
    n_messages: int,
    workdir: Path,
    *,
    repeat: int = 20,
    seed: int = 7,
    progress: Callable[[int], None] | None = None,
    backend: str = "sqlite",
    url: str | None = None,
) -> dict[str, Any]:
    """Build an archive of ``n_messages`` on ``backend`` and measure it. Returns a JSON-ready
    dict."""
    rng = random.Random(seed)
    db = _open(backend, workdir, f"n{n_messages}", url)
    per_session = 40
    base = time.time() - 365 * 86400
    start = time.perf_counter()
    written = 0
    batch: list[dict[str, Any]] = []
    sid_index = 0
    while written < n_messages:
        group = 0
        with db.transaction():  # the bulk path: many sessions per durable commit
            while written < n_messages and group < SESSIONS_PER_COMMIT:
                sid = f"s{sid_index:06d}"
                count = min(per_session, n_messages - written)
                started = base + sid_index * 600
                db.create_session(
                    sid, source="cron" if sid_index % 10 == 0 else "cli", started_at=started
                )
                batch = [
                    {
                        "role": "user" if j % 2 == 0 else "assistant",
                        "content": synthetic_message(rng, written + j),
                        "timestamp": started + j,
                    }
                    for j in range(count)
                ]
                if sid_index == NEEDLE_SESSION:
                    _plant_needles(batch)
                db.append_messages(sid, batch, user_id=ALL_USERS)
                written += count
                sid_index += 1
                group += 1
                if progress:
                    progress(count)
    bulk_s = time.perf_counter() - start

    turn_timing = Timing()
    for t in range(200):
        msgs = [
            {"role": "user", "content": synthetic_message(rng, t * 3)},
            {"role": "assistant", "content": synthetic_message(rng, t * 3 + 1)},
        ]
        t0 = time.perf_counter()
        db.append_messages("live-session", msgs, user_id=ALL_USERS)
        turn_timing.add(time.perf_counter() - t0)

    searcher = SessionSearch(db, hidden_sources=("kanban", "subagent", "tool"))
    results: dict[str, Any] = {
        "backend": backend,
        "messages": n_messages,
        "sessions": sid_index,
        "bulk_insert_s": round(bulk_s, 2),
        "bulk_insert_msgs_per_s": round(n_messages / bulk_s),
        "turn_append": turn_timing.to_dict(),
    }

    def measure(queries: Sequence[str]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for q in queries:
            matches = db.fts_count(_match_any(q))
            tool = _time(partial(searcher.run, {"query": q}, "live-session"), repeat)
            ranking = _time(partial(rank, db, q), repeat)
            out[q] = {
                "hit_rate": round(matches / max(1, n_messages), 4),
                "rows_ranked": rank(db, q).cost.rows_ranked,
                "discover": tool.to_dict(),
                "rank_only": ranking.to_dict(),
            }
        return out

    results["selective"] = measure(SELECTIVE_QUERIES)
    results["broad"] = measure(BROAD_QUERIES)
    if sid_index > NEEDLE_SESSION:
        results["needle"] = measure_needles(searcher, f"s{NEEDLE_SESSION:06d}", repeat)
    anchor_rows = db.read(
        "SELECT id, session_id FROM messages ORDER BY id LIMIT 1 OFFSET ?", (n_messages // 2,)
    )
    mid, msid = anchor_rows[0]
    results["scroll"] = _time(
        lambda: searcher.run({"session_id": msid, "around_message_id": mid}), repeat
    ).to_dict()
    results["browse"] = _time(lambda: searcher.run({}, "live-session"), repeat).to_dict()
    results["read"] = _time(lambda: searcher.run({"session_id": msid}), repeat).to_dict()
    if backend == "sqlite":
        db.read("PRAGMA wal_checkpoint(TRUNCATE)")
        size = sum(
            p.stat().st_size
            for p in db.path.parent.iterdir()
            if p.name.startswith("state.db") and p.is_file()
        )
    else:
        size = int(db.stats(user_id=ALL_USERS)["size_bytes"])
    results["db_mb"] = round(size / 1e6, 1)
    stored = int(db.read("SELECT COUNT(*) FROM messages")[0][0]) or 1
    results["bytes_per_message"] = round(size / stored)
    results["selective_p50_ms"] = round(
        statistics.median(v["discover"]["p50_ms"] for v in results["selective"].values()), 2
    )
    results["broad_p50_ms"] = round(
        statistics.median(v["discover"]["p50_ms"] for v in results["broad"].values()), 2
    )
    for kind in ("selective", "broad"):
        results[f"{kind}_cpu_p50_ms"] = round(
            statistics.median(v["discover"]["cpu_p50_ms"] for v in results[kind].values()), 2
        )
        results[f"{kind}_rows_ranked"] = max(v["rows_ranked"] for v in results[kind].values())
    _discard(db)
    return results


def _plant_needles(batch: list[dict[str, Any]]) -> None:
    """Replace messages of the needle session by the :data:`NEEDLES` texts (the generator's
    random stream is unchanged, so the rest of the archive is the same)."""
    for i, (_, _, text) in enumerate(NEEDLES):
        position = 4 + 6 * i
        if position < len(batch):
            batch[position]["content"] = text


def needle_rank(result: dict[str, Any], session_id: str) -> int | None:
    """1-based position of ``session_id`` in a discover result (``None``: not returned)."""
    for position, item in enumerate(result.get("results", []), start=1):
        if item.get("session_id") == session_id:
            return position
    return None


def measure_needles(searcher: SessionSearch, session_id: str, repeat: int) -> dict[str, Any]:
    """For each of :data:`NEEDLES`: where ``session_search`` (discover, top 10, called from a
    later session) puts the needle's session, and how long the call takes."""
    out: dict[str, Any] = {}
    for lang, query, _ in NEEDLES:
        args = {"query": query, "limit": 10}
        found = searcher.run(args, "live-session")
        position = needle_rank(found, session_id)
        out[query] = {
            "lang": lang,
            "rank": position,
            "top3": position is not None and position <= 3,
            "discover": _time(partial(searcher.run, args, "live-session"), repeat).to_dict(),
        }
    return out


def _concurrent_writer(backend: str, where: str, worker: int, turns: int) -> None:
    """One agent process of :func:`run_concurrent`: ``turns`` turns (2 messages each, one
    durable commit per turn, like ``sync``) into its own session."""
    if backend == "postgresql":
        from hermes_core.layers.sessions import PostgresSessionDB

        url, _, schema = where.rpartition("#")
        db: Any = PostgresSessionDB(url, schema=schema, pool_size=1)
    else:
        db = SessionDB.open(Path(where))
    rng = random.Random(worker)
    sid = f"writer-{worker}"
    db.create_session(sid, user_id=f"user-{worker}")
    for t in range(turns):
        db.append_messages(
            sid,
            [
                {"role": "user", "content": synthetic_message(rng, t * 2)},
                {"role": "assistant", "content": synthetic_message(rng, t * 2 + 1)},
            ],
            user_id=f"user-{worker}",
            turn_key=str(t),
        )
    db.close()


def run_concurrent(
    backend: str,
    workdir: Path,
    *,
    writers: int = 8,
    turns: int = 500,
    url: str | None = None,
) -> dict[str, Any]:
    """``writers`` processes × ``turns`` turns written at once into one archive; returns the
    wall time, turns per second and how many messages were lost (expected 0)."""
    import multiprocessing

    db = _open(backend, workdir, f"conc{writers}x{turns}", url)
    where = f"{url}#{db.schema}" if backend == "postgresql" else str(db.path.parent)
    ctx = multiprocessing.get_context("spawn")
    procs = [
        ctx.Process(target=_concurrent_writer, args=(backend, where, w, turns))
        for w in range(writers)
    ]
    start = time.perf_counter()
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join()
    wall = time.perf_counter() - start
    stored = int(db.read("SELECT COUNT(*) FROM messages")[0][0])
    expected = writers * turns * 2
    failed = sum(1 for p in procs if p.exitcode != 0)
    _discard(db)
    return {
        "backend": backend,
        "writers": writers,
        "turns_per_writer": turns,
        "wall_s": round(wall, 2),
        "turns_per_s": round(writers * turns / wall, 1),
        "messages_expected": expected,
        "messages_stored": stored,
        "lost": expected - stored,
        "failed_writers": failed,
    }


def _match_any(query: str) -> str:
    from hermes_core.layers.sessions import build_match

    return build_match(query) or '""'


def run_perf(
    sizes: Sequence[int] = (10_000, 100_000),
    *,
    repeat: int = 20,
    workdir: Path | None = None,
    progress: Callable[[int], None] | None = None,
    backends: Sequence[str] = ("sqlite",),
    url: str | None = None,
) -> list[dict[str, Any]]:
    """Run :func:`run_size` for every backend and size in a temporary directory (or
    ``workdir``); results are ordered by size, then backend."""
    with tempfile.TemporaryDirectory(prefix="hermes-sessions-bench-") as tmp:
        root = Path(workdir) if workdir is not None else Path(tmp)
        return [
            run_size(n, root, repeat=repeat, progress=progress, backend=b, url=url)
            for n in sizes
            for b in backends
        ]


__all__ = [
    "BROAD_QUERIES",
    "NEEDLES",
    "SELECTIVE_QUERIES",
    "Timing",
    "measure_needles",
    "needle_rank",
    "run_concurrent",
    "run_perf",
    "run_size",
]
