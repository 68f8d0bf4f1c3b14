"""Shared CLI output helpers: one rich console, JSON for scripts, marks."""

from __future__ import annotations

import json
import os
import re
import sys
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.measure import Measurement
from rich.table import Table as _RichTable

if TYPE_CHECKING:  # rich.progress is imported by the commands that show a bar
    from rich.progress import Progress

OK = "[green]✓[/green]"
FAIL = "[red]✗[/red]"


PIPED_WIDTH = 100
"""Width of output that goes to a file or a pipe: prose cells wrap at words within it."""

PIPED_MAX_WIDTH = 4096
"""A piped table whose words (figures, paths) need more than :data:`PIPED_WIDTH` gets the
width they need, up to this."""

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def shown(value: object) -> str:
    """``value`` as literal text for rich: markup characters escaped (``[embed]`` in
    ``pip install 'hermes-memory-core[embed]'`` stays on screen instead of being read as a
    style) and control characters made visible (``\\x1b``). Every hint, command, path or
    user-supplied text interpolated into a string that rich prints goes through it."""
    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(value))
    return escape(text)


class _PipedConsole(Console):
    """A console writing to a file or a pipe: :data:`PIPED_WIDTH` columns, so prose wraps at
    words, but a table is never narrower than its longest words need (a figure or a command
    is never folded or cut)."""

    def print(self, *objects: Any, **kwargs: Any) -> None:
        options = self.options.update_width(PIPED_MAX_WIDTH)
        need = max(
            (
                Measurement.get(self, options, o).minimum
                for o in objects
                if isinstance(o, _RichTable)
            ),
            default=0,
        )
        if need <= self.width:
            super().print(*objects, **kwargs)
            return
        narrow = self.width
        self.width = min(need, PIPED_MAX_WIDTH)
        try:
            super().print(*objects, **kwargs)
        finally:
            self.width = narrow


def console(stderr: bool = False) -> Console:
    """A console bound to the *current* sys.stdout/stderr (CliRunner swaps them).

    On a terminal, rich uses the terminal's width. Piped or redirected (``hermes doctor |
    less``, ``hermes bench ... > out.txt``), rich would assume 80 columns and squeeze wide
    tables until figures read ``0.…``; there the console is :data:`PIPED_WIDTH` wide and a
    table that needs more (its longest words side by side) gets exactly that (``COLUMNS``
    still wins when set).
    """
    stream = sys.stderr if stderr else sys.stdout
    if not _is_terminal(stream) and not os.environ.get("COLUMNS"):
        return _PipedConsole(file=stream, soft_wrap=True, highlight=False, width=PIPED_WIDTH)
    return Console(file=stream, soft_wrap=True, highlight=False)


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


__all__ = [
    "FAIL",
    "OK",
    "PIPED_MAX_WIDTH",
    "PIPED_WIDTH",
    "Table",
    "console",
    "mark",
    "print_json",
    "progress_bar",
    "shown",
]
