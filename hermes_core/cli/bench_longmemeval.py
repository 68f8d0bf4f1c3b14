"""``hermes-memory bench longmemeval``: session/turn recall, NDCG and answer in context on
LongMemEval data, per question type (abstention apart)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from hermes_core.bench.answer_context import DEFAULT_BUDGET
from hermes_core.cli.bench_locomo import (
    _build_retriever,
    _parse_ks,
    budget_option,
    render_answers,
    retriever_options,
    run_each,
)
from hermes_core.cli.bench_output import json_out_option, write_json
from hermes_core.cli.output import Table, console

DATA_ENV = "HERMES_LONGMEMEVAL_DATA"
DEFAULT_DATA = Path("..") / "shared" / "data" / "longmemeval" / "longmemeval-s-dev.json.gz"


def default_data() -> Path:
    """``../shared/data/longmemeval/longmemeval-s-dev.json.gz`` beside the checkout this
    package runs from (an editable install), else relative to the working directory."""
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "pyproject.toml").is_file():
        return checkout / DEFAULT_DATA
    return DEFAULT_DATA


def render_headline(report: Any) -> Table:
    """The figures the literature reports, one row per group: session any/all@k, NDCG@5,
    Hit@1, turn recall@k (share of ``has_answer`` turns in the top k)."""
    ks = report.ks
    table = Table(
        title=f"LongMemEval retrieval on {report.dataset} ({report.retriever}); any/all = "
        "at least one / every evidence session in the top k"
    )
    table.add_column("group", no_wrap=True)
    table.add_column("n", justify="right")
    for k in ks:
        table.add_column(f"any@{k}", justify="right")
        table.add_column(f"all@{k}", justify="right")
    table.add_column(f"ndcg@{ks[0]}", justify="right")
    table.add_column("hit@1", justify="right")
    for k in ks:
        table.add_column(f"turn recall@{k}", justify="right")
    for group, levels in report.scores.items():
        session = levels.get("session", {})
        turn = levels.get("turn", {})
        row = [group, str(report.questions.get(group, 0))]
        for k in ks:
            row += [f"{session.get(f'recall_any@{k}', 0):.3f}"]
            row += [f"{session.get(f'recall_all@{k}', 0):.3f}"]
        row += [f"{session.get(f'ndcg@{ks[0]}', 0):.3f}", f"{session.get('hit@1', 0):.3f}"]
        row += [f"{turn[f'recall@{k}']:.3f}" if turn else "-" for k in ks]
        table.add_row(*row)
    return table


@click.command(name="longmemeval")
@click.option(
    "--data",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    envvar=DATA_ENV,
    help="LongMemEval JSON (.json or .json.gz; read, never copied). Default: "
    f"{DEFAULT_DATA} beside the checkout (also ${DATA_ENV}).",
)
@retriever_options
@click.option("--limit", type=click.IntRange(1), default=None, help="Only the first N questions.")
@click.option("--k", "ks", default="5,10", show_default=True, help="Cut-offs, e.g. 5,10.")
@budget_option
@json_out_option
def command(
    data: Path | None,
    retrievers: tuple[str, ...],
    provider_name: str | None,
    limit: int | None,
    ks: str,
    budgets: tuple[int, ...],
    json_out: Path | None,
) -> None:
    """Per question: reset, index its haystack through the retriever's write path, ask, score."""
    from hermes_core.bench.locomo import BenchDataError
    from hermes_core.bench.longmemeval import load_longmemeval_file, run_longmemeval

    cutoffs = _parse_ks(ks)
    path = data if data is not None else default_data()
    if not path.exists():
        raise click.ClickException(
            f"LongMemEval data not found at {path} — pass --data PATH or set {DATA_ENV}"
        )
    try:
        conversations = load_longmemeval_file(path, limit=limit)
    except BenchDataError as exc:
        raise click.ClickException(str(exc)) from exc
    total = sum(len(c.questions) for c in conversations)
    if total == 0:
        raise click.ClickException(
            f"{path} holds no scorable question (each needs answer_session_ids) — pass a "
            "LongMemEval file"
        )
    reports = run_each(
        retrievers,
        total,
        lambda spec, workdir: _build_retriever(spec, workdir, provider_name),
        lambda impl, advance: run_longmemeval(
            conversations,
            impl,
            ks=cutoffs,
            budgets=budgets or (DEFAULT_BUDGET,),
            dataset=path.name,
            progress=advance,
        ),
    )
    for report in reports:
        console().print(render_headline(report))
        console().print(render_answers(report))
        console().print(
            f"{report.retriever}: search p50 {report.latency(0.5):.1f} ms, "
            f"p95 {report.latency(0.95):.1f} ms, indexing {report.index_seconds:.1f} s "
            f"({total} questions); questions without evidence sessions: "
            f"{report.unscored_questions}"
        )
    payload: Any = reports[0].to_dict() if len(reports) == 1 else [r.to_dict() for r in reports]
    write_json(json_out, payload)


__all__ = ["DATA_ENV", "command", "default_data", "render_headline"]
