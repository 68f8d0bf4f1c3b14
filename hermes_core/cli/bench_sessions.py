"""``hermes-memory bench sessions``: insert throughput and search latency of the session archive."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from hermes_core.cli.bench_output import json_out_option, write_json
from hermes_core.cli.output import Table, console, progress_bar


def render(results: list[dict[str, Any]]) -> Table:
    """One column per size."""
    table = Table(title="Session archive performance (ms unless noted; p50 / p95)")
    table.add_column("measure", no_wrap=True)
    for r in results:
        table.add_column(f"{r.get('backend', 'sqlite')} {r['messages']:,} msgs", justify="right")

    def row(label: str, fn: Any) -> None:
        table.add_row(label, *[fn(r) for r in results])

    row("bulk insert (msgs/s)", lambda r: f"{r['bulk_insert_msgs_per_s']:,}")
    row("one turn append (2 msgs)", lambda r: _pp(r["turn_append"]))
    for kind in ("selective", "broad"):
        for q in results[0][kind]:
            row(
                f"{kind} discover {q!r} ({results[-1][kind][q]['hit_rate']:.1%})",
                lambda r, q=q, kind=kind: _pp(r[kind][q]["discover"]),
            )
    for q in results[0].get("needle", {}):
        row(
            f"needle in session 37 {q!r}: rank, discover",
            lambda r, q=q: _needle(r.get("needle", {}).get(q)),
        )
    row("selective discover p50 (median)", lambda r: f"{r['selective_p50_ms']:.1f}")
    row("broad discover p50 (median)", lambda r: f"{r['broad_p50_ms']:.1f}")
    row("selective discover CPU p50 (median)", lambda r: f"{r['selective_cpu_p50_ms']:.1f}")
    row("broad discover CPU p50 (median)", lambda r: f"{r['broad_cpu_p50_ms']:.1f}")
    row("rows ranked per query (max)", lambda r: f"{r['broad_rows_ranked']:,}")
    row("scroll", lambda r: _pp(r["scroll"]))
    row("browse", lambda r: _pp(r["browse"]))
    row("read", lambda r: _pp(r["read"]))
    row("db size (MB)", lambda r: f"{r['db_mb']:.1f}")
    row("bytes per message", lambda r: f"{r['bytes_per_message']:,}")
    return table


def _needle(found: dict[str, Any] | None) -> str:
    """``#rank · p50 / p95`` of a needle query (``missed`` when not in the top 10)."""
    if not found:
        return "-"
    where = f"#{found['rank']}" if found["rank"] else "missed"
    return f"{where} · {_pp(found['discover'])}"


def _pp(t: dict[str, Any]) -> str:
    return f"{t['p50_ms']:.1f} / {t['p95_ms']:.1f}"


def render_concurrent(rows: list[dict[str, Any]]) -> Table:
    """One row per backend: N writer processes at once."""
    table = Table(title="Concurrent writers (one durable commit per turn)")
    for col in ("backend", "writers × turns", "wall (s)", "turns/s", "lost messages"):
        table.add_column(col, justify="right")
    for r in rows:
        table.add_row(
            r["backend"],
            f"{r['writers']} × {r['turns_per_writer']}",
            f"{r['wall_s']:.1f}",
            f"{r['turns_per_s']:.0f}",
            str(r["lost"]),
        )
    return table


@click.command(name="sessions")
@click.option("--sizes", default="10k,100k", show_default=True, help="Message counts.")
@click.option("--repeat", default=20, show_default=True, help="Timed runs per query.")
@click.option(
    "--backend",
    "backend_list",
    default="sqlite",
    show_default=True,
    help="sqlite, postgresql or sqlite,postgresql (side by side in one run).",
)
@click.option(
    "--url",
    default=None,
    help="PostgreSQL URL for the postgresql backend (default: sessions.url); a scratch "
    "schema per archive is created and dropped.",
)
@click.option(
    "--writers",
    default=0,
    show_default=True,
    type=click.IntRange(0, 64),
    help="Also run this many processes writing turns at once into one archive (e.g. 8).",
)
@click.option(
    "--turns", default=500, show_default=True, type=click.IntRange(1), help="Turns per writer."
)
@json_out_option
def command(
    sizes: str,
    repeat: int,
    backend_list: str,
    url: str | None,
    writers: int,
    turns: int,
    json_out: Path | None,
) -> None:
    """Synthetic EN+ZH archives: insert throughput, discovery/scroll latency, DB size; on
    one backend or several side by side."""
    from hermes_core.bench.options import (
        BenchOptionError,
        BenchSetupError,
        archive_url,
        parse_backends,
        parse_message_counts,
    )
    from hermes_core.bench.sessions import run_concurrent, run_perf
    from hermes_core.layers.sessions import SessionStoreError
    from hermes_core.settings.base import resolve_home

    try:
        counts = parse_message_counts(sizes)
        backends = parse_backends(backend_list)
    except BenchOptionError as exc:
        raise click.BadParameter(str(exc)) from None
    try:
        url = archive_url(backends, url, resolve_home())
    except BenchSetupError as exc:
        raise click.ClickException(str(exc)) from exc
    try:
        with progress_bar() as progress:
            task = progress.add_task("writing messages", total=sum(counts) * len(backends))
            results = run_perf(
                counts,
                repeat=repeat,
                progress=lambda n: progress.advance(task, n),
                backends=backends,
                url=url,
            )
        concurrent: list[dict[str, Any]] = []
        if writers:
            import tempfile

            with tempfile.TemporaryDirectory(prefix="hermes-conc-") as tmp:
                concurrent = [
                    run_concurrent(b, Path(tmp), writers=writers, turns=turns, url=url)
                    for b in backends
                ]
    except (SessionStoreError, ValueError) as exc:
        raise click.ClickException(str(exc)) from exc
    console().print(render(results))
    if concurrent:
        console().print(render_concurrent(concurrent))
    write_json(json_out, {"sizes": results, "concurrent": concurrent} if writers else results)


__all__ = ["command", "render"]
