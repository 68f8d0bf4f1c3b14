"""``hermes-memory bench skills``: tier-0 index size and skills_find accuracy."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click

from hermes_core.bench.skills import bench_roots, load_task_sets, run_suite
from hermes_core.cli.bench_output import json_out_option, write_json
from hermes_core.cli.output import Table, console, progress_bar
from hermes_core.embedding import INSTALL_HINT, embedder_status, load_embedder
from hermes_core.settings.base import resolve_home


@click.command(name="skills")
@click.option(
    "--library",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="A skills root to measure (default: $HERMES_HOME/skills + skills.external_dirs).",
)
@click.option(
    "--tasks",
    "task_files",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    multiple=True,
    help="YAML list of {task, expected, kind?} for the skills_find accuracy run "
    "(repeatable: one set of rows per file).",
)
@click.option("--platform", default="linux", show_default=True, help="Platform for filtering.")
@click.option(
    "--tool",
    "tools",
    multiple=True,
    help="A tool the agent has, besides the memory/skill tools (repeatable), e.g. terminal.",
)
@json_out_option
def command(
    library: Path | None,
    task_files: tuple[Path, ...],
    platform: str,
    tools: tuple[str, ...],
    json_out: Path | None,
) -> None:
    """Index size (chars, estimated tokens) and skills_find top-1/top-3 per task set, lexical
    and (with the [embed] extra installed) semantic + lexical."""
    home = resolve_home()
    roots = bench_roots(library, home)
    try:
        sets = load_task_sets(task_files)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from exc
    any_tasks = any(tasks for _stem, tasks in sets)
    out = console()
    embedder = load_embedder() if any_tasks else None
    with progress_bar() as progress:

        def start(label: str, total: int) -> Callable[[], None]:
            bar = progress.add_task(label, total=total)
            return lambda: progress.advance(bar)

        suite = run_suite(
            roots, sets, platform=platform, tools=tools, embedder=embedder, start=start
        )
    per_set, modes = suite.per_set, suite.modes
    result = per_set[0][0]
    table = Table(title="hermes-memory bench skills")
    table.add_column("metric")
    for label in modes:
        table.add_column(label, justify="right")
    rows = [
        ("skills (valid)", str(result.skills)),
        ("skills shown in index", str(result.visible)),
        ("categories shown", str(result.categories)),
        ("tier-0 index chars", f"{result.index_chars:,}"),
        ("tier-0 index est. tokens", f"{result.index_tokens:,}"),
        ("cold render ms", f"{result.cold_render_ms}"),
        ("cached render ms", f"{result.cached_render_ms}"),
    ]
    for name, value in rows:
        table.add_row(name, value, *([""] * (len(modes) - 1)))
    if embedder is not None:
        table.add_row("embedder", "", embedder.name)
    for (stem, _tasks), results in zip(sets, per_set, strict=True):
        first = results[0]
        if not first.tasks:
            continue
        prefix = f"{stem}: " if len(sets) > 1 else ""
        table.add_row(f"{prefix}tasks", *(str(r.tasks) for r in results))
        table.add_row(f"{prefix}skills_find top-1", *(_share(r.top1, r.tasks) for r in results))
        table.add_row(f"{prefix}skills_find top-3", *(_share(r.top3, r.tasks) for r in results))
        for kind in first.by_kind:
            table.add_row(
                f"  {kind}: top-1 / top-3",
                *(
                    f"{r.by_kind[kind][1]}/{r.by_kind[kind][2]} of {r.by_kind[kind][0]}"
                    for r in results
                ),
            )
        table.add_row(f"{prefix}mean skills_find ms", *(f"{r.mean_find_ms}" for r in results))
    out.print(table)
    if any_tasks and embedder is None:
        out.print(
            f"semantic matching not measured: {embedder_status().detail} — {INSTALL_HINT}",
            markup=False,
        )
    for (stem, _tasks), results in zip(sets, per_set, strict=True):
        for r in results:
            for miss in (x for x in r.results if not x.top1):
                out.print(
                    f"miss ({stem + ', ' if len(sets) > 1 else ''}{r.matching}): "
                    f"{miss.task!r} expected {miss.expected}, got {miss.ranked}",
                    markup=False,
                )
    write_json(json_out, suite.to_json())


def _share(hits: int, total: int) -> str:
    return f"{hits}/{total} ({100 * hits / max(1, total):.1f} %)"


__all__ = ["command"]
