"""``hermes-memory bench turn``: what one turn costs as a user's store grows.

For each variant (built-in only, or built-in plus one provider) a fresh home is filled
**through the public API** — ``MemoryHost.open``, ``host.session(...)``, ``before_turn``,
``after_turn`` — with seeded synthetic English and Chinese turns, up to each requested size.
At every size ``samples`` real turns are measured:

* ``before_turn`` — recall (the provider's bounded prefetch) and fencing, in the foreground;
* ``after_turn`` — the foreground part (built-in persistence, nudges);
* ``sync`` — from the start of ``after_turn`` until the provider's background work for the
  turn has drained (``host.flush()``): when the turn is durable everywhere.

Filling ("ingest") runs real turns too, except that each turn opens with a trivial prompt
(``before_turn("ok")`` skips recall as it does for any "ok" a user types) so the fill
measures what storing costs, not recall; ``ingest turns/s`` is turns stored per second of
wall time including the drained background sync. Sessions hold ``session_turns`` turns and
are closed (``on_session_end``) like real ones. No LLM is configured: compaction and review
use their deterministic fallbacks.

Each variant runs in its own subprocess (``python -m hermes_core.bench.turn``), so its
resident memory (RSS) is its own and no variant warms another's caches. The worker speaks
JSON lines on stdout: ``{"event": "progress", ...}`` while filling and one
``{"event": "result", ...}`` at the end.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

BUILTIN = "builtin"
BENCH_USER = "bench-user"

PROVIDER_CONFIG: dict[str, dict[str, Any]] = {
    # holographic stores no turns (its facts are curated); with auto_extract it keeps the
    # preferences stated in a closed session, so the fill gives it one fact per turn.
    "holographic": {"auto_extract": True},
}
"""Settings a provider needs so that filling through turns stores something."""

_EN_TOPICS = (
    "the billing service",
    "our Postgres migration",
    "the mobile app release",
    "the data pipeline",
    "the onboarding flow",
    "the search ranking",
    "the staging cluster",
    "the weekly report",
)
_EN_THINGS = (
    "Neovim",
    "green tea",
    "hiking in the Alps",
    "Rust",
    "jazz records",
    "morning runs",
    "Kubernetes",
    "sourdough bread",
    "chess openings",
    "Python type hints",
)
_EN_PEOPLE = ("Alice", "Bob", "Priya", "Chen", "Maria", "Tom", "Yuki", "Omar")
_ZH_TOPICS = (
    "支付服务",
    "数据库迁移",
    "移动端发布",
    "数据管道",
    "新用户引导",
    "搜索排序",
    "测试集群",
)
_ZH_THINGS = ("绿茶", "爬山", "跑步", "围棋", "爵士乐", "烤面包", "摄影", "骑自行车")
_ZH_PEOPLE = ("小王", "李明", "张伟", "陈静", "刘洋", "赵敏")


def synthetic_turn(seed: int, index: int) -> tuple[str, str]:
    """Turn ``index`` of stream ``seed``: ``(user_text, reply)``, deterministic. Even turns
    are English, odd ones Chinese; every user text states a numbered preference (so each is
    unique) and asks about a project."""
    rng = random.Random(seed * 1_000_003 + index)
    if index % 2 == 0:
        topic, thing, person = (
            rng.choice(_EN_TOPICS),
            rng.choice(_EN_THINGS),
            rng.choice(_EN_PEOPLE),
        )
        user = (
            f"I really like {thing} (note {index}). Can you remind me what {person} said "
            f"about {topic} and what the next step is?"
        )
        reply = (
            f"{person} said {topic} is blocked on review #{rng.randint(100, 999)}; the next "
            f"step is to run the tests on build {rng.randint(1000, 9999)} and ship on "
            f"{rng.choice(('Monday', 'Wednesday', 'Friday'))}."
        )
    else:
        topic, thing, person = (
            rng.choice(_ZH_TOPICS),
            rng.choice(_ZH_THINGS),
            rng.choice(_ZH_PEOPLE),
        )
        user = f"我喜欢{thing}（第{index}条）。{person}关于{topic}说了什么？下一步是什么？"
        reply = (
            f"{person}说{topic}在等第{rng.randint(100, 999)}号评审；下一步是在"
            f"{rng.randint(1000, 9999)}号构建上跑测试，然后周{rng.choice('一三五')}发布。"
        )
    return user, reply


def synthetic_query(seed: int, index: int) -> str:
    """A measured turn's message: a question about earlier turns (EN/ZH alternating)."""
    rng = random.Random(seed * 7_919 + index)
    if index % 2 == 0:
        return (
            f"What did {rng.choice(_EN_PEOPLE)} say about {rng.choice(_EN_TOPICS)}, "
            f"and do I still like {rng.choice(_EN_THINGS)}?"
        )
    person, topic, thing = rng.choice(_ZH_PEOPLE), rng.choice(_ZH_TOPICS), rng.choice(_ZH_THINGS)
    return f"{person}关于{topic}说了什么？我还喜欢{thing}吗？"


def parse_sizes(text: str) -> list[int]:
    """``"0,1k,10k"`` → ``[0, 1000, 10000]`` (sorted, unique; ``k``/``m`` suffixes)."""
    sizes: set[int] = set()
    for part in text.split(","):
        raw = part.strip().lower()
        if not raw:
            continue
        scale = 1
        if raw[-1] in "km":
            scale = 1_000 if raw[-1] == "k" else 1_000_000
            raw = raw[:-1]
        try:
            value = float(raw) * scale
        except ValueError:
            raise ValueError(f"{part.strip()!r} is not a size: use e.g. 0,1k,10k") from None
        if value < 0 or value != int(value):
            raise ValueError(f"{part.strip()!r} is not a whole number of turns >= 0")
        sizes.add(int(value))
    if not sizes:
        raise ValueError("no sizes given: use e.g. --turns 0,1k,10k")
    return sorted(sizes)


def percentile(samples: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile (0 for no samples)."""
    data = sorted(samples)
    if not data:
        return 0.0
    rank = max(1, min(len(data), round(pct / 100 * len(data) + 0.5)))
    return data[rank - 1]


def rss_mb() -> float:
    """Resident memory of this process in MB (Linux /proc; peak RSS elsewhere)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


@dataclass
class SizePoint:
    """Figures of one variant at one store size (times in ms)."""

    turns: int
    samples: int
    before_p50: float
    before_p95: float
    after_p50: float
    after_p95: float
    sync_p50: float
    sync_p95: float
    ingest_turns_per_s: float | None
    rss_mb: float


@dataclass
class VariantResult:
    """One variant's run: ``status`` is ``ok``, ``unavailable`` or ``failed``."""

    variant: str
    status: str
    reason: str = ""
    points: list[SizePoint] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "status": self.status,
            "reason": self.reason,
            "points": [asdict(p) for p in self.points],
        }


@dataclass(frozen=True)
class Spec:
    """What one worker runs."""

    variant: str
    sizes: tuple[int, ...]
    samples: int = 30
    seed: int = 7
    session_turns: int = 20


def _write_config(home: Path, variant: str) -> None:
    import yaml

    memory: dict[str, Any] = {}
    if variant != BUILTIN:
        memory["provider"] = variant
        if variant in PROVIDER_CONFIG:
            memory["providers"] = {variant: PROVIDER_CONFIG[variant]}
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(yaml.safe_dump({"memory": memory}), encoding="utf-8")


def run_variant(
    spec: Spec, home: Path, emit: Callable[[dict[str, Any]], None] | None = None
) -> VariantResult:
    """Fill ``home`` through the Session API and measure ``spec.sizes`` (see module doc)."""
    from hermes_core.host import MemoryHost

    say = emit or (lambda _event: None)
    _write_config(home, spec.variant)
    host = MemoryHost.open(home)
    try:
        status = host.provider_status
        if spec.variant != BUILTIN and (status is None or not status.active):
            reason = status.reason if status is not None else "not activated"
            return VariantResult(spec.variant, "unavailable", reason)
        result = VariantResult(spec.variant, "ok")
        stored = 0
        counter = iter(range(10**9))
        session = host.session(source="bench", user_id=BENCH_USER)
        in_session = 0

        def next_session() -> None:
            nonlocal session, in_session
            if in_session >= spec.session_turns:
                session.close()
                session = host.session(source="bench", user_id=BENCH_USER)
                in_session = 0

        for size in spec.sizes:
            fill = max(0, size - stored)
            start = time.perf_counter()
            for done in range(fill):
                next_session()
                user, reply = synthetic_turn(spec.seed, next(counter))
                session.before_turn("ok")
                session.after_turn(user, reply)
                in_session += 1
                if done % 50 == 49 or done == fill - 1:
                    say({"event": "progress", "phase": f"fill {size}", "done": done + 1})
            host.flush(600)
            elapsed = time.perf_counter() - start
            stored += fill
            befores, afters, syncs = [], [], []
            for i in range(spec.samples):
                next_session()
                query = synthetic_query(spec.seed, stored + i)
                t0 = time.perf_counter()
                session.before_turn(query)
                t1 = time.perf_counter()
                _, reply = synthetic_turn(spec.seed, next(counter))
                session.after_turn(query, reply)
                t2 = time.perf_counter()
                host.flush(600)
                t3 = time.perf_counter()
                in_session += 1
                befores.append((t1 - t0) * 1000)
                afters.append((t2 - t1) * 1000)
                syncs.append((t3 - t1) * 1000)
                say({"event": "progress", "phase": f"measure {size}", "done": i + 1})
            stored += spec.samples
            result.points.append(
                SizePoint(
                    turns=size,
                    samples=spec.samples,
                    before_p50=round(percentile(befores, 50), 2),
                    before_p95=round(percentile(befores, 95), 2),
                    after_p50=round(percentile(afters, 50), 2),
                    after_p95=round(percentile(afters, 95), 2),
                    sync_p50=round(percentile(syncs, 50), 2),
                    sync_p95=round(percentile(syncs, 95), 2),
                    ingest_turns_per_s=round(fill / elapsed, 1) if fill else None,
                    rss_mb=round(rss_mb(), 1),
                )
            )
        session.close()
        return result
    finally:
        host.close(timeout=600)


def total_steps(spec: Spec) -> int:
    """Progress steps of one variant: one per filled or measured turn."""
    return max(spec.sizes) + spec.samples * len(spec.sizes)


def run_in_subprocess(
    spec: Spec, workdir: Path, on_event: Callable[[dict[str, Any]], None] | None = None
) -> VariantResult:
    """Run :func:`run_variant` in a fresh interpreter; returns its result (``failed`` with the
    worker's last error lines when it dies)."""
    home = workdir / f"home-{spec.variant}"
    env = dict(os.environ)
    env["HERMES_HOME"] = str(home)
    env.pop("HERMES_MEMORY__PROVIDER", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "hermes_core.bench.turn", json.dumps(asdict(spec))],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        env=env,
    )
    assert proc.stdout is not None and proc.stderr is not None
    outcome: VariantResult | None = None
    for line in proc.stdout:
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if event.get("event") == "result":
            data = event["result"]
            outcome = VariantResult(
                data["variant"],
                data["status"],
                data.get("reason", ""),
                [SizePoint(**p) for p in data.get("points", [])],
            )
        elif on_event is not None:
            on_event(event)
    err = proc.stderr.read()
    code = proc.wait()
    if outcome is None:
        tail = " | ".join(err.strip().splitlines()[-3:]) or f"exit status {code}"
        return VariantResult(spec.variant, "failed", tail)
    return outcome


def default_variants() -> list[str]:
    """Built-in plus every installed provider (availability is checked by each worker)."""
    from hermes_core.providers.discovery import list_installed

    return [BUILTIN, *dict.fromkeys(p.name for p in list_installed())]


def run_bench(
    variants: Sequence[str],
    sizes: Sequence[int],
    *,
    samples: int = 30,
    seed: int = 7,
    session_turns: int = 20,
    workdir: Path | None = None,
    on_event: Callable[[str, dict[str, Any]], None] | None = None,
) -> list[VariantResult]:
    """Every variant, one subprocess each, in a throw-away directory (or ``workdir``)."""
    results = []
    with tempfile.TemporaryDirectory(prefix="hermes-bench-turn-") as tmp:
        root = workdir or Path(tmp)
        for variant in variants:
            spec = Spec(variant, tuple(sizes), samples, seed, session_turns)
            hook = (lambda e, v=variant: on_event(v, e)) if on_event else None
            results.append(run_in_subprocess(spec, root, hook))
    return results


def _worker(argv: Sequence[str]) -> int:
    raw = json.loads(argv[0])
    spec = Spec(**{**raw, "sizes": tuple(raw["sizes"])})
    home = Path(os.environ["HERMES_HOME"])

    def emit(event: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(event) + "\n")
        sys.stdout.flush()

    try:
        result = run_variant(spec, home, emit)
    except Exception as exc:  # reported to the parent, which prints it
        result = VariantResult(spec.variant, "failed", f"{type(exc).__name__}: {exc}")
    emit({"event": "result", "result": result.to_dict()})
    return 0


if __name__ == "__main__":
    raise SystemExit(_worker(sys.argv[1:]))


__all__ = [
    "BUILTIN",
    "SizePoint",
    "Spec",
    "VariantResult",
    "default_variants",
    "parse_sizes",
    "percentile",
    "rss_mb",
    "run_bench",
    "run_in_subprocess",
    "run_variant",
    "synthetic_query",
    "synthetic_turn",
    "total_steps",
]
