"""``hermes bench locomo PATH``: retrieval recall/NDCG on LoCoMo (or LongMemEval) data."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from hermes_core.cli.output import console


def _parse_ks(text: str) -> tuple[int, ...]:
    try:
        ks = tuple(sorted({int(part) for part in text.split(",") if part.strip()}))
    except ValueError:
        raise click.BadParameter("use comma-separated integers, e.g. 5,10") from None
    if not ks or min(ks) < 1:
        raise click.BadParameter("use comma-separated positive integers, e.g. 5,10")
    return ks


def render_report(report: Any, level: str) -> Table:
    """A rich table for ``level`` (session or turn): one row per category group with
    recall_all@k, recall_any@k and NDCG@k (binary relevance)."""
    ks = report.ks
    table = Table(
        title=f"{level.capitalize()}-level retrieval on {report.dataset} "
        f"({report.retriever}); all = every evidence {level} in the top k"
    )
    table.add_column("group", no_wrap=True)
    table.add_column("n", justify="right")
    for name in ("all", "any", "ndcg"):
        for k in ks:
            table.add_column(f"{name}@{k}", justify="right")
    for group, levels in report.scores.items():
        metrics = levels.get(level, {})
        row = [group, str(report.questions[group])]
        for name in ("recall_all", "recall_any", "ndcg"):
            row += [f"{metrics.get(f'{name}@{k}', 0):.3f}" for k in ks]
        table.add_row(*row)
    return table


@click.command(name="locomo")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--retriever",
    type=click.Choice(["builtin", "provider"]),
    default="builtin",
    show_default=True,
    help="builtin = state.db + session_search ranking; provider = the active memory provider.",
)
@click.option("--provider", "provider_name", default=None, help="Provider name (provider mode).")
@click.option("--k", "ks", default="5,10", show_default=True, help="Cut-offs, e.g. 5,10,25.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["auto", "locomo", "longmemeval"]),
    default="auto",
    show_default=True,
)
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=Path), default=None)
def command(
    path: Path,
    retriever: str,
    provider_name: str | None,
    ks: str,
    fmt: str,
    json_out: Path | None,
) -> None:
    """Index each conversation as sessions and score every question's evidence retrieval."""
    from hermes_core.bench.locomo import BenchDataError, load_any, run_benchmark
    from hermes_core.bench.retrievers import BuiltinRetriever, load_provider_retriever
    from hermes_core.settings.base import resolve_home

    cutoffs = _parse_ks(ks)
    try:
        conversations = load_any(path, fmt)
    except BenchDataError as exc:
        raise click.ClickException(f"{exc} — pass a LoCoMo or LongMemEval JSON file") from exc
    total = sum(len(c.questions) for c in conversations)
    with tempfile.TemporaryDirectory(prefix="hermes-bench-") as tmp:
        if retriever == "builtin":
            impl: Any = BuiltinRetriever(Path(tmp))
        else:
            try:
                impl = load_provider_retriever(resolve_home(), Path(tmp), provider_name)
            except Exception as exc:
                raise click.ClickException(f"cannot build the provider retriever: {exc}") from exc
        try:
            with Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=console(stderr=True),
                transient=True,
            ) as progress:
                task = progress.add_task("questions", total=total)
                report = run_benchmark(
                    conversations,
                    impl,
                    ks=cutoffs,
                    dataset=path.name,
                    progress=lambda n: progress.advance(task, n),
                )
        finally:
            impl.close()
    console().print(render_report(report, "session"))
    console().print(render_report(report, "turn"))
    console().print(
        f"skipped evidence ids: {report.skipped_evidence}; questions without valid evidence: "
        f"{report.unscored_questions}"
    )
    if json_out is not None:
        json_out.write_text(
            json.dumps(report.to_dict(), ensure_ascii=False, indent=2), encoding="utf-8"
        )
        console().print(f"wrote {json_out}")


__all__ = ["command", "render_report"]
