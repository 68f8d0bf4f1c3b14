"""Skills benchmark: tier-0 index size and skills_find top-1 accuracy on a task set.

``run_bench`` renders the index of a library (as the plugin would, with the given platform and
tools), measures its size in characters and estimated tokens, times a cold render and a
cached one, and ranks every task of a YAML list (``- task: ...; expected: <skill>``) with
:func:`rank_skills` (no recorded outcomes): lexically, and fused with the offline embedder
when one is passed (``hermes-memory bench skills`` runs both when the ``[embed]`` extra is
installed).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from hermes_core.embedding import Embedder
from hermes_core.layers.skills import (
    DEFAULT_AVAILABLE_TOOLS,
    DEFAULT_AVAILABLE_TOOLSETS,
    IndexCache,
    SkillRoot,
    SkillVectors,
    invalidate_index_cache,
    load_library,
    rank_skills,
    skill_roots,
    visible_skills,
)
from hermes_core.llm.tokens import estimate_tokens
from hermes_core.yamlsafe import read_yaml_file


@dataclass
class TaskResult:
    """One ranked task."""

    task: str
    expected: str
    ranked: list[str]
    kind: str = ""

    @property
    def top1(self) -> bool:
        """The expected skill came first."""
        return bool(self.ranked) and self.ranked[0] == self.expected


@dataclass
class SkillsBenchResult:
    """Figures of one run."""

    skills: int
    visible: int
    categories: int
    index_chars: int
    index_tokens: int
    cold_render_ms: float
    cached_render_ms: float
    tasks: int = 0
    top1: int = 0
    top3: int = 0
    mean_find_ms: float = 0.0
    matching: str = "lexical"
    by_kind: dict[str, list[int]] = field(default_factory=dict)
    """kind → [tasks, top-1, top-3]."""
    results: list[TaskResult] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready figures, with each task's outcome."""
        data = asdict(self)
        data["results"] = [
            {
                "task": r.task,
                "expected": r.expected,
                "kind": r.kind,
                "ranked": r.ranked,
                "top1": r.top1,
            }
            for r in self.results
        ]
        return data


def load_tasks(path: Path) -> list[dict[str, str]]:
    """Tasks from YAML: a list of ``{task, expected, kind?}`` mappings (``kind``: free label
    such as paraphrase / cross-language / direct). Raises ValueError if not."""
    data = read_yaml_file(path, max_bytes=16 << 20, what="task file")
    if not isinstance(data, list) or not all(
        isinstance(t, dict)
        and isinstance(t.get("task"), str)
        and isinstance(t.get("expected"), str)
        for t in data
    ):
        raise ValueError(f"{path} must be a YAML list of {{task: ..., expected: ...}} mappings")
    return [
        {"task": t["task"], "expected": t["expected"], "kind": str(t.get("kind") or "")}
        for t in data
    ]


def run_bench(
    roots: Sequence[SkillRoot],
    tasks: Sequence[dict[str, str]] = (),
    *,
    platform: str = "linux",
    available_tools: Collection[str] | None = None,
    available_toolsets: Collection[str] | None = None,
    progress: Callable[[], None] | None = None,
    embedder: Embedder | None = None,
) -> SkillsBenchResult:
    """Measure the index of ``roots`` and rank ``tasks``: lexically, or fused with
    ``embedder``'s ranking when one is given (vectors cached in memory only)."""
    library = load_library(roots)
    shown = visible_skills(
        library,
        platform=platform,
        available_tools=available_tools,
        available_toolsets=available_toolsets,
    )
    with tempfile.TemporaryDirectory(prefix="hermes-bench-skills-") as tmp:
        home = Path(tmp)
        cache = IndexCache(home, roots)
        invalidate_index_cache(home)
        start = time.perf_counter()
        text = cache.render(
            platform=platform,
            available_tools=available_tools,
            available_toolsets=available_toolsets,
        )
        cold = time.perf_counter() - start
        start = time.perf_counter()
        cache.render(
            platform=platform,
            available_tools=available_tools,
            available_toolsets=available_toolsets,
        )
        cached = time.perf_counter() - start
        invalidate_index_cache(home)
    result = SkillsBenchResult(
        skills=len(library.skills),
        visible=len(shown),
        categories=len({s.category for s in shown}),
        index_chars=len(text),
        index_tokens=estimate_tokens(text),
        cold_render_ms=round(cold * 1000, 2),
        cached_render_ms=round(cached * 1000, 2),
    )
    vectors = SkillVectors(None, embedder) if embedder is not None else None
    if vectors is not None:
        vectors.vectors(shown)  # embedding the library once is not part of a find
        result.matching = f"semantic+lexical ({embedder.name if embedder else ''})"
    total = 0.0
    for item in tasks:
        start = time.perf_counter()
        semantic = vectors.similarities(shown, item["task"]) if vectors is not None else None
        ranked = rank_skills(shown, item["task"], {}, limit=3, semantic=semantic)
        total += time.perf_counter() - start
        names = [r.skill.name for r in ranked]
        kind = item.get("kind", "")
        result.results.append(TaskResult(item["task"], item["expected"], names, kind))
        if progress is not None:
            progress()
    result.tasks = len(result.results)
    result.top1 = sum(r.top1 for r in result.results)
    result.top3 = sum(r.expected in r.ranked for r in result.results)
    for r in result.results:
        counts = result.by_kind.setdefault(r.kind or "-", [0, 0, 0])
        counts[0] += 1
        counts[1] += r.top1
        counts[2] += r.expected in r.ranked
    result.mean_find_ms = round(total * 1000 / max(1, result.tasks), 2)
    return result


def bench_roots(library: Path | None, home: Path) -> tuple[SkillRoot, ...]:
    """The roots to measure: ``library`` alone (read-only), else the skills roots of
    ``home`` (``$HERMES_HOME/skills`` and ``skills.external_dirs``)."""
    if library is not None:
        return (SkillRoot(library, read_only=True, label="bench"),)
    from hermes_core.settings.base import load_settings

    return skill_roots(home, load_settings(home).skills.external_dirs)


TaskSet = tuple[str, list[dict[str, str]]]
"""A task file's stem and its tasks."""


def load_task_sets(paths: Sequence[Path]) -> list[TaskSet]:
    """One :data:`TaskSet` per file (``[("", [])]`` for none: the index figures only).
    Raises ValueError naming the file and the expected form."""
    sets: list[TaskSet] = []
    for path in paths:
        try:
            sets.append((path.stem, load_tasks(path)))
        except (OSError, ValueError) as exc:
            raise ValueError(f"{exc} — see tests/layers/skills/data/tasks.yaml") from exc
    return sets or [("", [])]


@dataclass
class SuiteResult:
    """Every task set ranked in every mode: ``per_set[i][j]`` is set ``i`` in mode ``j``
    (``modes[0]`` is ``lexical``; ``semantic+lexical`` follows when an embedder was given)."""

    sets: list[TaskSet]
    modes: list[str]
    per_set: list[list[SkillsBenchResult]]

    def to_json(self) -> dict[str, Any]:
        """The first set's figures (the semantic run under ``semantic``), and each set with
        tasks under ``sets`` by stem."""

        def payload(results: list[SkillsBenchResult]) -> dict[str, Any]:
            out = results[0].as_dict()
            if len(results) > 1:
                out["semantic"] = results[1].as_dict()
            return out

        return {
            **payload(self.per_set[0]),
            "sets": {
                stem: payload(results)
                for (stem, tasks), results in zip(self.sets, self.per_set, strict=True)
                if tasks
            },
        }


def run_suite(
    roots: Sequence[SkillRoot],
    sets: list[TaskSet],
    *,
    platform: str,
    tools: Sequence[str] = (),
    embedder: Embedder | None = None,
    start: Callable[[str, int], Callable[[], None]] | None = None,
) -> SuiteResult:
    """:func:`run_bench` for every set, lexically and (with ``embedder``) fused with it; the
    agent has the default tools plus ``tools``. ``start(label, total)`` opens a progress
    counter for one run and returns its advance callback."""
    modes: list[tuple[str, Embedder | None]] = [("lexical", None)]
    if embedder is not None:
        modes.append(("semantic+lexical", embedder))
    per_set: list[list[SkillsBenchResult]] = []
    for stem, task_list in sets:
        runs = []
        for label, model in modes:
            advance = (
                start(f"ranking {stem or 'tasks'} ({label})", max(1, len(task_list)))
                if start is not None
                else None
            )
            runs.append(
                run_bench(
                    roots,
                    task_list,
                    platform=platform,
                    available_tools=[*DEFAULT_AVAILABLE_TOOLS, *tools],
                    available_toolsets=list(DEFAULT_AVAILABLE_TOOLSETS),
                    progress=advance,
                    embedder=model,
                )
            )
        per_set.append(runs)
    return SuiteResult(sets, [label for label, _model in modes], per_set)


__all__ = [
    "SkillsBenchResult",
    "SuiteResult",
    "TaskResult",
    "TaskSet",
    "bench_roots",
    "load_task_sets",
    "load_tasks",
    "run_bench",
    "run_suite",
]
