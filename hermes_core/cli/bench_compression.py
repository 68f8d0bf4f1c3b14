"""``hermes bench compression``: planted-fact retention and compression ratio of the
deterministic handoff sheet on LoCoMo conversations."""

from __future__ import annotations

import os
from pathlib import Path

import click
from rich.table import Table

from hermes_core.bench.compression import load_conversations, run_bench
from hermes_core.cli.bench_output import json_out_option, write_json
from hermes_core.cli.output import console, progress_bar

DEFAULT_DATA = "../shared/data/locomo/locomo-dev.json"  # beside a checkout of this repo
DATA_ENV = "HERMES_LOCOMO_DATA"


def _default_data() -> Path:
    return Path(os.environ.get(DATA_ENV) or DEFAULT_DATA)


@click.command(name="compression")
@click.option(
    "--data",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help=f"LoCoMo JSON file (default: ${DATA_ENV} or {DEFAULT_DATA}). Read, never copied.",
)
@click.option("--seed", default=7, show_default=True, help="Seed of the planted facts.")
@click.option(
    "--rounds",
    default=1,
    show_default=True,
    type=click.IntRange(1, 10),
    help="Rounds of planted facts per conversation (12 facts each).",
)
@click.option(
    "--limit", type=click.IntRange(1), default=None, help="Only the first N conversations."
)
@json_out_option
def command(
    data: Path | None, seed: int, rounds: int, limit: int | None, json_out: Path | None
) -> None:
    """Share of planted facts kept after one compaction, and the compression ratio."""
    path = data or _default_data()
    if not path.is_file():
        raise click.ClickException(
            f"LoCoMo data not found at {path} — pass --data PATH or set {DATA_ENV}"
        )
    try:
        total = len(load_conversations(path)[: limit or None])
    except ValueError as exc:
        raise click.ClickException(f"{exc} — pass a LoCoMo-format JSON file with --data") from exc
    out = console()
    with progress_bar() as progress:
        bar = progress.add_task("compacting conversations", total=max(1, total))
        result = run_bench(
            path, seed=seed, rounds=rounds, limit=limit, progress=lambda: progress.advance(bar)
        )
    table = Table(title=f"hermes bench compression (deterministic fallback, seed {seed})")
    for name, justify in (
        ("conversation", "left"),
        ("messages", "right"),
        ("tokens before → after", "right"),
        ("ratio", "right"),
        ("summary tokens", "right"),
        ("critical kept", "right"),
        ("all facts kept", "right"),
    ):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for c in result.conversations:
        table.add_row(
            c.sample_id,
            f"{c.messages_before} → {c.messages_after}",
            f"{c.tokens_before:,} → {c.tokens_after:,}",
            f"{c.ratio:.2f}×",
            f"{c.summary_tokens:,}",
            f"{c.critical_kept}/{c.critical}",
            f"{c.facts_kept}/{c.facts}",
        )
    table.add_row(
        "[bold]total[/bold]",
        "",
        f"{result.tokens_before:,} → {result.tokens_after:,}",
        f"[bold]{result.ratio:.2f}×[/bold] (min {result.min_ratio:.2f}×)",
        "",
        f"[bold]{result.critical_share:.1%}[/bold]",
        f"{result.fact_share:.1%}",
    )
    out.print(table)
    kinds = ", ".join(f"{k} {v[0]}/{v[1]}" for k, v in sorted(result.by_kind.items()))
    langs = ", ".join(f"{k} {v[0]}/{v[1]}" for k, v in sorted(result.by_language.items()))
    out.print(f"by kind: {kinds}")
    out.print(f"by language: {langs}")
    lost = [needle for c in result.conversations for needle in c.lost]
    if lost:
        out.print(f"lost: {', '.join(lost)}")
    write_json(json_out, {"seed": seed, "rounds": rounds, **result.to_json()})
