"""Shared CLI output helpers: one rich console, JSON for scripts, marks."""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table as _RichTable

if TYPE_CHECKING:  # rich.progress is imported by the commands that show a bar
    from rich.progress import Progress

OK = "[green]✓[/green]"
FAIL = "[red]✗[/red]"


PIPED_WIDTH = 4096
"""Width of output that goes to a file or a pipe: wide enough that no table is squeezed."""


def console(stderr: bool = False) -> Console:
    """A console bound to the *current* sys.stdout/stderr (CliRunner swaps them).

    On a terminal, rich uses the terminal's width. Piped or redirected (``hermes-memory bench ... >
    out.txt``), rich would assume 80 columns and squeeze wide tables until figures read
    ``0.…``; there the console is :data:`PIPED_WIDTH` wide so every table keeps its natural
    width (``COLUMNS`` still wins when set).
    """
    stream = sys.stderr if stderr else sys.stdout
    width = None
    if not _is_terminal(stream) and not os.environ.get("COLUMNS"):
        width = PIPED_WIDTH
    return Console(file=stream, soft_wrap=True, highlight=False, width=width)


def _is_terminal(stream: Any) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if callable(isatty) else False
    except (OSError, ValueError):
        return False


class Table(_RichTable):
    """A rich table whose cells fold instead of ending in an ellipsis.

    On a terminal narrower than the table, rich shortens cells to ``0.…`` by default; every
    CLI table is built from this class so a figure is wrapped onto the next line, never cut.
    """

    def add_column(
        self,
        header: Any = "",
        footer: Any = "",
        *,
        overflow: Any = "fold",
        **kwargs: Any,
    ) -> None:
        super().add_column(header, footer, overflow=overflow, **kwargs)


def print_json(value: Any) -> None:
    """Machine-readable output: UTF-8 kept readable, stable key order."""
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2, default=str) + "\n")


def mark(ok: bool) -> str:
    return OK if ok else FAIL


def progress_bar() -> Progress:
    """The progress bar of long work (indexing, imports, re-embedding, benchmarks): on
    stderr, so ``--json`` output on stdout stays parseable, and gone when done."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console(stderr=True),
        transient=True,
    )


__all__ = ["FAIL", "OK", "PIPED_WIDTH", "Table", "console", "mark", "print_json", "progress_bar"]
