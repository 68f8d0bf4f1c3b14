"""Shared CLI output helpers: one rich console, JSON for scripts, marks."""

from __future__ import annotations

import json
import sys
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

OK = "[green]✓[/green]"
FAIL = "[red]✗[/red]"


def console(stderr: bool = False) -> Console:
    """A console bound to the *current* sys.stdout/stderr (CliRunner swaps them)."""
    return Console(file=sys.stderr if stderr else sys.stdout, soft_wrap=True, highlight=False)


def print_json(value: Any) -> None:
    """Machine-readable output: UTF-8 kept readable, stable key order."""
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2, default=str) + "\n")


def mark(ok: bool) -> str:
    return OK if ok else FAIL


def progress_bar() -> Progress:
    """The progress bar of long work (indexing, imports, re-embedding, benchmarks): on
    stderr, so ``--json`` output on stdout stays parseable, and gone when done."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console(stderr=True),
        transient=True,
    )


__all__ = ["FAIL", "OK", "console", "mark", "print_json", "progress_bar"]
