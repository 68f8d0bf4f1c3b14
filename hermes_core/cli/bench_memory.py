"""``hermes-memory bench memory``: add/replace/remove p50/p99 latency through the memory tool."""

from __future__ import annotations

from pathlib import Path

import click

from hermes_core.bench.memory import run_bench, total_ticks
from hermes_core.cli.bench_output import json_out_option, write_json
from hermes_core.cli.output import Table, console, progress_bar


@click.command(name="memory")
@click.option(
    "--ops",
    default=200,
    show_default=True,
    type=click.IntRange(5, 100_000),
    help="Calls per operation kind.",
)
@click.option(
    "--prefill",
    default=20,
    show_default=True,
    type=click.IntRange(0, 10_000),
    help="Entries in MEMORY.md before timing starts.",
)
@click.option(
    "--postgres-url",
    default=None,
    metavar="URL",
    envvar="HERMES_BENCH_POSTGRES_URL",
    help="Run on memory.store: postgresql at this server (throw-away users, deleted after).",
)
@json_out_option
def command(ops: int, prefill: int, postgres_url: str | None, json_out: Path | None) -> None:
    """Latency of memory writes (validation + scan + lock + re-read + atomic fsync write, or
    the PostgreSQL transaction with its advisory lock).

    Runs in a throw-away home: your own MEMORY.md / USER.md are never touched.
    """
    out = console()
    with progress_bar() as progress:
        bar = progress.add_task("memory writes", total=total_ticks(ops))
        result = run_bench(
            ops=ops,
            prefill=prefill,
            postgres_url=postgres_url,
            progress=lambda name: progress.update(bar, advance=1, description=name),
        )
    store = result.settings["store"]
    table = Table(
        title=f"hermes-memory bench memory ({store}; {ops} calls each, {prefill} entries prefilled)"
    )
    for column in ("operation", "n", "p50 ms", "p99 ms", "mean ms", "max ms"):
        table.add_column(column, justify="left" if column == "operation" else "right")
    for op in result.ops:
        s = op.summary()
        table.add_row(
            str(s["op"]),
            str(s["n"]),
            str(s.get("p50_ms", "")),
            str(s.get("p99_ms", "")),
            str(s.get("mean_ms", "")),
            str(s.get("max_ms", "")),
        )
    out.print(table)
    write_json(json_out, result.to_dict())


__all__ = ["command"]
