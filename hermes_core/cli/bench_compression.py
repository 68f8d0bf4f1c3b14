"""``hermes-memory bench compression``: fact retention of the handoff sheet.

By default: the built-in scenarios (EN + ZH; coding, ops, research, chat) at 3×, 5× and 10×
for the deterministic fallback and the LLM path (against the loopback fake server's scripted
summaries). With ``--data``: the older needle test on LoCoMo conversations."""

from __future__ import annotations

from pathlib import Path

import click

from hermes_core.bench.compression import load_conversations, run_bench
from hermes_core.bench.compression_retention import PATHS, RATIOS, RetentionResult, run_retention
from hermes_core.bench.compression_scenarios import load_scenarios
from hermes_core.cli.bench_output import json_out_option, write_json
from hermes_core.cli.output import Table, console, progress_bar

DATA_ENV = "HERMES_LOCOMO_DATA"


@click.command(name="compression")
@click.option(
    "--data",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    envvar=DATA_ENV,
    help="Run the LoCoMo needle test on this LoCoMo JSON file instead of the scenarios "
    f"(read, never copied; also ${DATA_ENV}).",
)
@click.option(
    "--scenario",
    "scenario_ids",
    multiple=True,
    help="Only this scenario (repeatable); default: all of them.",
)
@click.option(
    "--ratio",
    "ratios",
    type=click.IntRange(2, 50),
    multiple=True,
    help="Compression ratio (middle tokens / sheet budget; repeatable). Default: 3, 5, 10.",
)
@click.option(
    "--path",
    "paths",
    type=click.Choice(PATHS),
    multiple=True,
    help="fallback (no model) and/or llm (fake server, scripted summaries). Default: both.",
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
    data: Path | None,
    scenario_ids: tuple[str, ...],
    ratios: tuple[int, ...],
    paths: tuple[str, ...],
    seed: int,
    rounds: int,
    limit: int | None,
    json_out: Path | None,
) -> None:
    """Share of facts the handoff sheet keeps at 3×, 5× and 10× compression."""
    if data is None:
        _scenarios(list(scenario_ids), ratios or RATIOS, paths or PATHS, json_out)
        return
    _locomo(data, seed, rounds, limit, json_out)


def _scenarios(
    ids: list[str], ratios: tuple[int, ...], paths: tuple[str, ...], json_out: Path | None
) -> None:
    try:
        scenarios = load_scenarios(ids or None)
    except ValueError as exc:
        raise click.ClickException(f"{exc} — pass --scenario with a known id") from exc
    out = console()
    with progress_bar() as progress:
        bar = progress.add_task(
            "compacting scenarios", total=len(scenarios) * len(ratios) * len(paths)
        )
        result = run_retention(
            scenarios,
            ratios=ratios,
            paths=[p for p in PATHS if p in paths],
            progress=lambda: progress.advance(bar),
        )
    for path in (p for p in PATHS if p in paths):
        out.print(_scenario_table(result, path, ratios))
    for path in (p for p in PATHS if p in paths):
        out.print(_totals_table(result, path, ratios))
    summary = result.summary()
    for key, row in summary.items():
        where = row["by_where"]
        parts = ", ".join(
            f"{w} {where[w][0]}/{where[w][1]}" for w in ("user", "assistant", "tool") if w in where
        )
        out.print(f"{key.replace('@', ' ')} by source: {parts}")
    out.print(
        "kept = facts whose every needle is in the sheet; held-out = the scenarios written "
        "after the fallback was tuned; distractors = share found in the sheet; achieved = "
        "middle tokens / sheet tokens (the fallback is also capped at 8,000 chars)"
    )
    for cell in result.cells:
        if cell.lost or cell.error:
            detail = f"lost {', '.join(cell.lost)}" if cell.lost else ""
            if cell.error:
                detail = f"{detail}; error: {cell.error}".lstrip("; ")
            out.print(f"{cell.scenario} {cell.path} {cell.ratio}×: {detail}", markup=False)
    write_json(json_out, {"ratios": list(ratios), "paths": list(paths), **result.to_json()})


def _scenario_table(result: RetentionResult, path: str, ratios: tuple[int, ...]) -> Table:
    table = Table(title=f"facts kept per scenario — {path}")
    table.add_column("scenario", no_wrap=True)
    table.add_column("lang", overflow="fold")
    table.add_column("middle tokens", justify="right", overflow="fold")
    for ratio in ratios:
        table.add_column(f"{ratio}×", justify="right", overflow="fold")
    cells = {(c.scenario, c.ratio): c for c in result.cells if c.path == path}
    for scenario in dict.fromkeys(c.scenario for c in result.cells if c.path == path):
        first = cells[(scenario, ratios[0])]
        row = [scenario, first.language, f"{first.middle_tokens:,}"]
        for ratio in ratios:
            cell = cells.get((scenario, ratio))
            row.append(f"{cell.kept}/{cell.facts}" if cell else "")
        table.add_row(*row)
    return table


def _totals_table(result: RetentionResult, path: str, ratios: tuple[int, ...]) -> Table:
    table = Table(title=f"{path} — all scenarios")
    headers = ("ratio", "kept", "EN", "ZH", "held-out", "distractors", "achieved")
    for name in headers:
        table.add_column(name, justify="right", overflow="fold")
    summary = result.summary()
    for ratio in ratios:
        row = summary.get(f"{path}@{ratio}x")
        if row is None:
            continue
        table.add_row(
            f"{ratio}×",
            f"[bold]{row['retention']:.1%}[/bold]",
            f"{row['retention_en']:.1%}",
            f"{row['retention_zh']:.1%}",
            f"{row['retention_held_out']:.1%}",
            f"{row['distractors_kept']:.0%}",
            f"{row['mean_achieved_ratio']:.1f}×",
        )
    return table


def _locomo(path: Path, seed: int, rounds: int, limit: int | None, json_out: Path | None) -> None:
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
    table = Table(title=f"hermes-memory bench compression (deterministic fallback, seed {seed})")
    for name, justify in (
        ("conversation", "left"),
        ("messages", "right"),
        ("tokens before → after", "right"),
        ("ratio", "right"),
        ("summary tokens", "right"),
        ("critical kept", "right"),
        ("all facts kept", "right"),
    ):
        table.add_column(name, justify=justify)
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
        out.print(f"lost: {', '.join(lost)}", markup=False)
    write_json(json_out, {"seed": seed, "rounds": rounds, **result.to_json()})
