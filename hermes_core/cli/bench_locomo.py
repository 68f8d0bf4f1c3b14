"""``hermes-memory bench locomo PATH``: retrieval recall/NDCG on LoCoMo (or LongMemEval) data."""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path
from typing import Any

import click

from hermes_core.cli.bench_output import json_out_option, write_json
from hermes_core.cli.output import Table, console, progress_bar


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


def render_comparison(reports: list[Any], group: str = "1-4") -> Table:
    """One row per retriever: recall_all@k at both levels, search latency and index time."""
    ks = reports[0].ks
    table = Table(title=f"Side by side on {reports[0].dataset}, categories {group}")
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
    """``builtin``, ``provider`` (the active one, or --provider) or ``provider:NAME``."""
    from hermes_core.bench.retrievers import BuiltinRetriever, load_provider_retriever
    from hermes_core.settings.base import resolve_home

    if spec == "builtin":
        if backend == "postgresql" and not url:
            url = _settings_url()
        try:
            return BuiltinRetriever(workdir, backend=backend, url=url)
        except Exception as exc:
            raise click.ClickException(f"cannot build the builtin retriever: {exc}") from exc
    kind, _, name = spec.partition(":")
    if kind != "provider":
        raise click.BadParameter(
            f"{spec!r}: use builtin, provider or provider:NAME", param_hint="--retriever"
        )
    try:
        return load_provider_retriever(resolve_home(), workdir, name or default_provider)
    except Exception as exc:
        raise click.ClickException(f"cannot build the retriever {spec!r}: {exc}") from exc


def _settings_url() -> str:
    """``sessions.url`` of the current home (``--backend postgresql`` without ``--url``)."""
    from hermes_core.settings.base import load_settings, resolve_home

    url = load_settings(resolve_home()).sessions.url
    if url is None:
        raise click.ClickException(
            "--backend postgresql needs a database: pass --url postgresql://… or set "
            "HERMES_SESSIONS__URL in $HERMES_HOME/.env"
        )
    return url.get_secret_value()


@click.command(name="locomo")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--retriever",
    "retrievers",
    multiple=True,
    default=("builtin",),
    show_default=True,
    help="builtin (state.db + session_search ranking), provider (the active provider) or "
    "provider:NAME; repeat to compare several side by side in one run.",
)
@click.option("--provider", "provider_name", default=None, help="Provider for bare `provider`.")
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
    reports = []
    for spec in retrievers:
        with tempfile.TemporaryDirectory(prefix="hermes-bench-") as tmp:
            impl = _build_retriever(spec, Path(tmp), provider_name, backend, url)
            try:
                with progress_bar() as progress:
                    task = progress.add_task(f"{spec}: questions", total=total)
                    report = run_benchmark(
                        conversations,
                        impl,
                        ks=cutoffs,
                        dataset=path.name,
                        progress=functools.partial(progress.advance, task),
                    )
            finally:
                impl.close()
        reports.append(report)
        console().print(render_report(report, "session"))
        console().print(render_report(report, "turn"))
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


__all__ = ["command", "render_comparison", "render_report"]
