"""``hermes-memory bench locomo PATH``: retrieval recall/NDCG on LoCoMo (or LongMemEval) data."""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path
from typing import Any

import click

from hermes_core.bench.answer_context import DEFAULT_BUDGET
from hermes_core.cli.bench_output import json_out_option, write_json
from hermes_core.cli.output import Table, console, progress_bar, shown

budget_option = click.option(
    "--budget",
    "budgets",
    type=click.IntRange(50, 100_000),
    multiple=True,
    help=f"Token budget of the recall block for answer in context (repeatable; default "
    f"{DEFAULT_BUDGET}).",
)
"""``--budget N`` (repeatable), parameter name ``budgets``."""


def _parse_ks(text: str) -> tuple[int, ...]:
    """``--k`` (:func:`hermes_core.bench.options.parse_cutoffs`); BadParameter naming the form."""
    from hermes_core.bench.options import BenchOptionError, parse_cutoffs

    try:
        return parse_cutoffs(text)
    except BenchOptionError as exc:
        raise click.BadParameter(str(exc)) from None


def render_report(report: Any, level: str) -> Table:
    """A rich table for ``level`` (session or turn): one row per category group with
    recall_all@k, recall_any@k, NDCG@k (binary relevance), Hit@1 and (turn level) the share
    of evidence turns in the top k."""
    ks = report.ks
    table = Table(
        title=f"{level.capitalize()}-level retrieval on {shown(report.dataset)} "
        f"({shown(report.retriever)}); all = every evidence {level} in the top k, "
        "any = at least one"
    )
    table.add_column("group", no_wrap=True)
    table.add_column("n", justify="right")
    names = ["recall_all", "recall_any", "ndcg"] + (["recall"] if level == "turn" else [])
    labels = {"recall_all": "all", "recall_any": "any", "ndcg": "ndcg", "recall": "recall"}
    for name in names:
        for k in ks:
            table.add_column(f"{labels[name]}@{k}", justify="right")
    table.add_column("hit@1", justify="right")
    counts = report.turn_questions if level == "turn" else report.questions
    for group, levels in report.scores.items():
        metrics = levels.get(level)
        if not metrics:
            continue
        row = [group, str(counts.get(group, 0))]
        for name in names:
            row += [f"{metrics.get(f'{name}@{k}', 0):.3f}" for k in ks]
        row.append(f"{metrics.get('hit@1', 0):.3f}")
        table.add_row(*row)
    return table


def render_answers(report: Any) -> Table:
    """Answer in context per group: span questions and the share whose recall block (cut to
    each token budget) holds the normalised gold answer."""
    table = Table(
        title=f"Answer in context on {report.dataset} ({report.retriever}): the gold answer "
        "inside the recall block, span questions only"
    )
    table.add_column("group", no_wrap=True)
    table.add_column("questions", justify="right")
    table.add_column("span", justify="right")
    for budget in report.budgets:
        table.add_column(f"@{budget} tok", justify="right")
    for group, levels in report.scores.items():
        answers = levels.get("answer", {})
        row = [
            group,
            str(report.questions.get(group, 0)),
            str(int(answers.get("span_questions", 0))),
        ]
        row += [
            f"{answers[f'in_context@{b}']:.3f}" if f"in_context@{b}" in answers else "-"
            for b in report.budgets
        ]
        table.add_row(*row)
    return table


def render_comparison(reports: list[Any], group: str = "1-4") -> Table:
    """One row per retriever: recall_all@k at both levels, search latency and index time."""
    ks = reports[0].ks
    table = Table(title=f"Side by side on {shown(reports[0].dataset)}, categories {group}")
    table.add_column("retriever", no_wrap=True)
    for level in ("session", "turn"):
        for k in ks:
            table.add_column(f"{level} all@{k}", justify="right")
    for column in ("search p50 ms", "p95 ms", "index s"):
        table.add_column(column, justify="right")
    for report in reports:
        levels = report.scores.get(group, {})
        row = [report.retriever]
        for level in ("session", "turn"):
            row += [f"{levels.get(level, {}).get(f'recall_all@{k}', 0):.3f}" for k in ks]
        row += [
            f"{report.latency(0.5):.1f}",
            f"{report.latency(0.95):.1f}",
            f"{report.index_seconds:.1f}",
        ]
        table.add_row(*row)
    return table


def _build_retriever(
    spec: str,
    workdir: Path,
    default_provider: str | None,
    backend: str = "sqlite",
    url: str | None = None,
) -> Any:
    """``builtin``, ``provider`` (the active one, or --provider) or ``provider:NAME``
    (:func:`hermes_core.bench.options.build_retriever`)."""
    from hermes_core.bench.options import BenchOptionError, BenchSetupError, build_retriever
    from hermes_core.settings.base import resolve_home

    try:
        return build_retriever(
            spec,
            workdir,
            home=resolve_home(),
            default_provider=default_provider,
            backend=backend,
            url=url,
        )
    except BenchOptionError as exc:
        raise click.BadParameter(str(exc), param_hint="--retriever") from exc
    except BenchSetupError as exc:
        raise click.ClickException(str(exc)) from exc


def retriever_options(func: Any) -> Any:
    """``--retriever`` (repeatable: ``retrievers``) and ``--provider`` (``provider_name``)."""
    return click.option(
        "--retriever",
        "retrievers",
        multiple=True,
        default=("builtin",),
        show_default=True,
        help="builtin (state.db + session_search ranking), provider (the active provider) or "
        "provider:NAME; repeat to compare several side by side in one run.",
    )(
        click.option(
            "--provider", "provider_name", default=None, help="Provider for bare `provider`."
        )(func)
    )


def run_each(
    specs: tuple[str, ...],
    total: int,
    build: Any,
    run: Any,
) -> list[Any]:
    """For each retriever spec: ``build(spec, workdir)`` it in a scratch directory, ``run(
    retriever, progress)`` under a progress bar of ``total`` questions, close it; the
    reports in order."""
    reports = []
    for spec in specs:
        with tempfile.TemporaryDirectory(prefix="hermes-bench-") as tmp:
            impl = build(spec, Path(tmp))
            try:
                with progress_bar() as progress:
                    task = progress.add_task(f"{spec}: questions", total=total)
                    reports.append(run(impl, functools.partial(progress.advance, task)))
            finally:
                impl.close()
    return reports


@click.command(name="locomo")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@retriever_options
@click.option(
    "--backend",
    type=click.Choice(["sqlite", "postgresql"]),
    default="sqlite",
    show_default=True,
    help="Archive backend of the builtin retriever (postgresql: a scratch schema per "
    "conversation in --url, dropped afterwards).",
)
@click.option(
    "--url",
    default=None,
    help="PostgreSQL URL for --backend postgresql (default: sessions.url).",
)
@click.option("--k", "ks", default="5,10", show_default=True, help="Cut-offs, e.g. 5,10,25.")
@budget_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["auto", "locomo", "longmemeval"]),
    default="auto",
    show_default=True,
)
@json_out_option
def command(
    path: Path,
    retrievers: tuple[str, ...],
    provider_name: str | None,
    backend: str,
    url: str | None,
    ks: str,
    budgets: tuple[int, ...],
    fmt: str,
    json_out: Path | None,
) -> None:
    """Index each conversation as sessions and score every question's evidence retrieval."""
    from hermes_core.bench.locomo import BenchDataError, load_any, run_benchmark

    cutoffs = _parse_ks(ks)
    try:
        conversations = load_any(path, fmt)
    except BenchDataError as exc:
        raise click.ClickException(f"{exc} — pass a LoCoMo or LongMemEval JSON file") from exc
    total = sum(len(c.questions) for c in conversations)
    if total == 0:
        raise click.ClickException(
            f"{path} holds {len(conversations)} conversation(s) and no questions — pass a "
            "LoCoMo file (a list of samples with 'conversation' and 'qa') or a LongMemEval file"
        )
    reports = run_each(
        retrievers,
        total,
        lambda spec, workdir: _build_retriever(spec, workdir, provider_name, backend, url),
        lambda impl, advance: run_benchmark(
            conversations,
            impl,
            ks=cutoffs,
            dataset=path.name,
            progress=advance,
            budgets=budgets or (DEFAULT_BUDGET,),
        ),
    )
    for report in reports:
        console().print(render_report(report, "session"))
        console().print(render_report(report, "turn"))
        console().print(render_answers(report))
        console().print(
            f"{report.retriever}: search p50 {report.latency(0.5):.1f} ms, "
            f"p95 {report.latency(0.95):.1f} ms, indexing {report.index_seconds:.1f} s; "
            f"skipped evidence ids: {report.skipped_evidence}; questions without valid "
            f"evidence: {report.unscored_questions}"
        )
    if len(reports) > 1:
        console().print(render_comparison(reports))
    payload: Any = reports[0].to_dict() if len(reports) == 1 else [r.to_dict() for r in reports]
    write_json(json_out, payload)


__all__ = [
    "budget_option",
    "command",
    "render_answers",
    "render_comparison",
    "render_report",
    "retriever_options",
    "run_each",
]
