"""``hermes bench skills``: tier-0 index size and skills_find accuracy."""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table

from hermes_core.bench.skills import load_tasks, run_bench
from hermes_core.cli.bench_output import json_out_option, write_json
from hermes_core.cli.output import console, progress_bar
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
    """Index size (chars, estimated tokens) and top-1 accuracy of skills_find."""
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
    with progress_bar() as progress:
        bar = progress.add_task("ranking tasks", total=max(1, len(task_list)))
        result = run_bench(
            roots,
            task_list,
            platform=platform,
            available_tools=[*DEFAULT_AVAILABLE_TOOLS, *tools],
            available_toolsets=list(DEFAULT_AVAILABLE_TOOLSETS),
            progress=lambda: progress.advance(bar),
        )
    table = Table(title="hermes bench skills")
    table.add_column("metric")
    table.add_column("value", justify="right")
    rows = [
        ("skills (valid)", str(result.skills)),
        ("skills shown in index", str(result.visible)),
        ("categories shown", str(result.categories)),
        ("tier-0 index chars", f"{result.index_chars:,}"),
        ("tier-0 index est. tokens", f"{result.index_tokens:,}"),
        ("cold render ms", f"{result.cold_render_ms}"),
        ("cached render ms", f"{result.cached_render_ms}"),
    ]
    if result.tasks:
        rows += [
            ("tasks", str(result.tasks)),
            ("skills_find top-1", f"{result.top1}/{result.tasks}"),
            ("skills_find top-3", f"{result.top3}/{result.tasks}"),
            ("mean skills_find ms", f"{result.mean_find_ms}"),
        ]
    for name, value in rows:
        table.add_row(name, value)
    out.print(table)
    for miss in (r for r in result.results if not r.top1):
        out.print(f"miss: {miss.task!r} expected {miss.expected}, got {miss.ranked}", markup=False)
    write_json(json_out, result.as_dict())


__all__ = ["command"]
