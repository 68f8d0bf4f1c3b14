"""``hermes bench skills``: tier-0 index size and skills_find accuracy."""

from __future__ import annotations

from pathlib import Path

import click
from rich.progress import TaskID

from hermes_core.bench.skills import load_tasks, run_bench
from hermes_core.cli.bench_output import json_out_option, write_json
from hermes_core.cli.output import Table, console, progress_bar
from hermes_core.embedding import INSTALL_HINT, Embedder, embedder_status, load_embedder
from hermes_core.layers.skills.library import SkillRoot, skill_roots
from hermes_core.layers.skills.tools import DEFAULT_AVAILABLE_TOOLS, DEFAULT_AVAILABLE_TOOLSETS
from hermes_core.settings.base import load_settings, resolve_home


@click.command(name="skills")
@click.option(
    "--library",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="A skills root to measure (default: $HERMES_HOME/skills + skills.external_dirs).",
)
@click.option(
    "--tasks",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="YAML list of {task, expected} for the skills_find accuracy run.",
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
    tasks: Path | None,
    platform: str,
    tools: tuple[str, ...],
    json_out: Path | None,
) -> None:
    """Index size (chars, estimated tokens) and skills_find top-1/top-3, lexical and (with
    the [embed] extra installed) semantic + lexical."""
    if library is not None:
        roots: tuple[SkillRoot, ...] = (SkillRoot(library, read_only=True, label="bench"),)
    else:
        home = resolve_home()
        roots = skill_roots(home, load_settings(home).skills.external_dirs)
    try:
        task_list = load_tasks(tasks) if tasks else []
    except (OSError, ValueError) as exc:
        raise click.ClickException(f"{exc} — see tests/layers/skills/data/tasks.yaml") from exc
    out = console()
    embedder = load_embedder() if task_list else None
    modes: list[tuple[str, Embedder | None]] = [("lexical", None)]
    if embedder is not None:
        modes.append(("semantic+lexical", embedder))
    results = []
    with progress_bar() as progress:
        for label, model in modes:
            bar = progress.add_task(f"ranking tasks ({label})", total=max(1, len(task_list)))

            def advance(bar: TaskID = bar) -> None:
                progress.advance(bar)

            results.append(
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
    result = results[0]
    table = Table(title="hermes bench skills")
    table.add_column("metric")
    for label, _model in modes:
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
    if result.tasks:
        table.add_row("tasks", *(str(r.tasks) for r in results))
        table.add_row("skills_find top-1", *(_share(r.top1, r.tasks) for r in results))
        table.add_row("skills_find top-3", *(_share(r.top3, r.tasks) for r in results))
        for kind in result.by_kind:
            table.add_row(
                f"  {kind}: top-1 / top-3",
                *(
                    f"{r.by_kind[kind][1]}/{r.by_kind[kind][2]} of {r.by_kind[kind][0]}"
                    for r in results
                ),
            )
        table.add_row("mean skills_find ms", *(f"{r.mean_find_ms}" for r in results))
    out.print(table)
    if task_list and embedder is None:
        out.print(
            f"semantic matching not measured: {embedder_status().detail} — {INSTALL_HINT}",
            markup=False,
        )
    for r in results:
        for miss in (x for x in r.results if not x.top1):
            out.print(
                f"miss ({r.matching}): {miss.task!r} expected {miss.expected}, got {miss.ranked}",
                markup=False,
            )
    payload = result.as_dict()
    if len(results) > 1:
        payload["semantic"] = results[1].as_dict()
    write_json(json_out, payload)


def _share(hits: int, total: int) -> str:
    return f"{hits}/{total} ({100 * hits / max(1, total):.1f} %)"


__all__ = ["command"]
