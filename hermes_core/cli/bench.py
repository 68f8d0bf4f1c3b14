"""``hermes-memory bench``: benchmarks (never run by the test suite's assertions).

Each benchmark is ``hermes_core.cli.bench_<name>:command``, loaded on demand.
"""

from __future__ import annotations

import importlib

import click

BENCHMARKS = ("memory", "sessions", "locomo", "longmemeval", "compression", "skills", "turn")


class BenchGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(BENCHMARKS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in BENCHMARKS:
            return None
        command = importlib.import_module(f"hermes_core.cli.bench_{cmd_name}").command
        assert isinstance(command, click.Command)
        return command


@click.group(cls=BenchGroup)
def bench() -> None:
    """Benchmarks: figures go to docs/benchmarks.md with the command that produced them."""


__all__ = ["BENCHMARKS", "bench"]
