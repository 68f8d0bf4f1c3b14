"""``hermes-memory bench turn``: per-turn cost (recall, storing, background sync, RSS) as the store
grows, for the built-in layers and each installed provider."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from hermes_core.cli.bench_output import json_out_option, write_json
from hermes_core.cli.output import console, progress_bar


@click.command(name="turn")
@click.option(
    "--turns",
    "sizes_text",
    default="0,1k",
    show_default=True,
    help="Store sizes in turns to measure at, e.g. 0,1k,10k.",
)
@click.option(
    "--provider",
    "providers",
    multiple=True,
    help="builtin or a provider name; repeat for several (default: built-in and every "
    "installed provider).",
)
@click.option(
    "--samples",
    default=30,
    show_default=True,
    type=click.IntRange(1, 10_000),
    help="Measured turns at each size.",
)
@click.option("--seed", default=7, show_default=True, type=int, help="Seed of the turns.")
@click.option(
    "--session-turns",
    default=20,
    show_default=True,
    type=click.IntRange(1, 100_000),
    help="Turns per session (sessions are closed like real ones).",
)
@json_out_option
def command(
    sizes_text: str,
    providers: tuple[str, ...],
    samples: int,
    seed: int,
    session_turns: int,
    json_out: Path | None,
) -> None:
    """Fill a throw-away home through the Session API with seeded EN/ZH turns and time
    before_turn, after_turn and the background sync at each size.

    Each variant runs in its own process; your own home is never touched.
    """
    from hermes_core.bench.turn import Spec, default_variants, parse_sizes, run_bench, total_steps

    try:
        sizes = parse_sizes(sizes_text)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--turns") from None
    variants = list(dict.fromkeys(providers)) or default_variants()
    with progress_bar() as progress:
        tasks = {
            v: progress.add_task(f"{v}: waiting", total=total_steps(Spec(v, tuple(sizes), samples)))
            for v in variants
        }
        base: dict[str, int] = dict.fromkeys(variants, 0)
        last: dict[str, tuple[str, int]] = {}

        def on_event(variant: str, event: dict[str, Any]) -> None:
            phase, done = str(event.get("phase", "")), int(event.get("done", 0))
            previous = last.get(variant)
            if previous is not None and previous[0] != phase:
                base[variant] += previous[1]
            last[variant] = (phase, done)
            progress.update(
                tasks[variant], completed=base[variant] + done, description=f"{variant}: {phase}"
            )

        results = run_bench(
            variants,
            sizes,
            samples=samples,
            seed=seed,
            session_turns=session_turns,
            on_event=on_event,
        )
    table = Table(
        title=f"hermes-memory bench turn (ms; {samples} measured turns per size, seed {seed})"
    )
    for col in (
        "variant",
        "turns",
        "before p50",
        "p95",
        "after p50",
        "p95",
        "sync p50",
        "p95",
        "ingest turns/s",
        "RSS MB",
    ):
        table.add_column(col, justify="left" if col == "variant" else "right", no_wrap=True)
    out = console()
    for result in results:
        if result.status != "ok":
            table.add_row(result.variant, "—", f"[yellow]{result.status}[/yellow]: {result.reason}")
            continue
        for p in result.points:
            table.add_row(
                result.variant,
                f"{p.turns:,}",
                f"{p.before_p50:.2f}",
                f"{p.before_p95:.2f}",
                f"{p.after_p50:.2f}",
                f"{p.after_p95:.2f}",
                f"{p.sync_p50:.2f}",
                f"{p.sync_p95:.2f}",
                "—" if p.ingest_turns_per_s is None else f"{p.ingest_turns_per_s:.1f}",
                f"{p.rss_mb:.0f}",
            )
    if not out.is_terminal:  # piped: every figure whole, never cut to 80 columns
        out = Console(file=sys.stdout, width=200, soft_wrap=True, highlight=False)
    out.print(table)
    write_json(
        json_out,
        {
            "sizes": sizes,
            "samples": samples,
            "seed": seed,
            "session_turns": session_turns,
            "variants": [r.to_dict() for r in results],
        },
    )


__all__ = ["command"]
