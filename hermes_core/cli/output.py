"""Shared CLI output helpers: one rich console, JSON for scripts, marks.

Everything a command prints goes through here, so two rules hold for every command at once:
every string rendered by :func:`console` (messages, table cells, titles) and every value
written by :func:`print_json` passes the one redaction
(:func:`hermes_core.security.redaction.redact_text`: URL passwords, API keys, the home's
secret-bearing settings), and so does every error message and log line (:func:`clean`).
Every control character in them is made visible
(:func:`hermes_core.security.terminal.visible`): no ANSI/OSC sequence from a plugin name,
title, user id or memory text reaches the terminal. User values placed inside a markup
string go through :func:`shown` (markup escaped, newlines visible too).
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from rich.console import Console, ConsoleOptions, RenderableType
from rich.markup import escape
from rich.measure import Measurement
from rich.segment import Segment
from rich.table import Table as _RichTable
from rich.text import Text

from hermes_core.security.redaction import redact_data, redact_text
from hermes_core.security.terminal import visible

if TYPE_CHECKING:  # rich.progress is imported by the commands that show a bar
    from rich.progress import Progress

OK = "[green]✓[/green]"
FAIL = "[red]✗[/red]"


PIPED_WIDTH = 100
"""Width of output that goes to a file or a pipe: prose cells wrap at words within it."""

PIPED_MAX_WIDTH = 4096
"""A piped table whose words (figures, paths) need more than :data:`PIPED_WIDTH` gets the
width they need, up to this."""


def clean(text: str) -> str:
    """A message as it may be shown: secrets masked (the one redaction), control characters
    other than newline and tab made visible."""
    return visible(redact_text(text))


def shown(value: object, width: int | None = None) -> str:
    """A user value (name, title, user id, memory text) for a markup string or a table
    cell: secrets masked, every control character (newlines too) visible, rich markup
    escaped so ``[bold]`` in a name is printed, not applied; with ``width``, cut to that
    many characters with an ellipsis."""
    text = visible(redact_text(str(value)), keep_newlines=False)
    if width is not None and len(text) > width:
        text = text[: width - 1] + "…"
    return escape(text)


class SafeConsole(Console):
    """A rich console that applies :func:`clean` to every string and Text it renders."""

    def render_str(self, text: str, **kwargs: Any) -> Text:
        return super().render_str(clean(text), **kwargs)

    def render(
        self, renderable: RenderableType, options: ConsoleOptions | None = None
    ) -> Iterable[Segment]:
        if isinstance(renderable, Text):
            renderable = _clean_text(renderable)
        return super().render(renderable, options)


class _PipedConsole(SafeConsole):
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


def _clean_text(text: Text) -> Text:
    plain = text.plain
    shown = clean(plain)
    if shown == plain:
        return text
    if len(shown) == len(plain):
        copy = text.copy()
        copy.plain = shown
        return copy
    return Text(shown, style=text.style, justify=text.justify, no_wrap=text.no_wrap)


def console(stderr: bool = False) -> Console:
    """A console bound to the *current* sys.stdout/stderr (CliRunner swaps them).

    On a terminal, rich uses the terminal's width. Piped or redirected (``hermes-memory doctor |
    less``, ``hermes-memory bench ... > out.txt``), rich would assume 80 columns and squeeze wide
    tables until figures read ``0.…``; there the console is :data:`PIPED_WIDTH` wide and a
    table that needs more (its longest words side by side) gets exactly that (``COLUMNS``
    still wins when set).
    """
    stream = sys.stderr if stderr else sys.stdout
    if not _is_terminal(stream) and not os.environ.get("COLUMNS"):
        return _PipedConsole(file=stream, soft_wrap=True, highlight=False, width=PIPED_WIDTH)
    return SafeConsole(file=stream, soft_wrap=True, highlight=False)


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
    """Machine-readable output: UTF-8 kept readable, stable key order, secrets masked."""
    text = json.dumps(value, ensure_ascii=False, indent=2, default=str)
    text = json.dumps(redact_data(json.loads(text)), ensure_ascii=False, indent=2)
    sys.stdout.write(_JSON_RAW_CONTROLS.sub(_json_escape, text) + "\n")


_JSON_RAW_CONTROLS = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""Characters ``json.dumps(ensure_ascii=False)`` leaves raw that a terminal acts on (DEL, C1
controls such as the one-byte CSI, bidi overrides); C0 controls it escapes itself."""


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group(0)):04x}"


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


class SecretFilter(logging.Filter):
    """Masks secrets in every log record (message and arguments) before a handler formats
    it; installed on the root handlers by ``hermes`` (see :func:`install_log_filter`)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: log it as given
            message = str(record.msg)
        record.msg = clean(message)
        record.args = None
        if record.exc_info and record.exc_info[1] is not None and not record.exc_text:
            record.exc_text = clean(logging.Formatter().formatException(record.exc_info))
        return True


def install_log_filter() -> None:
    """Add :class:`SecretFilter` to every root handler (once)."""
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, SecretFilter) for f in handler.filters):
            handler.addFilter(SecretFilter())


__all__ = [
    "FAIL",
    "OK",
    "PIPED_MAX_WIDTH",
    "PIPED_WIDTH",
    "SafeConsole",
    "SecretFilter",
    "Table",
    "clean",
    "console",
    "install_log_filter",
    "mark",
    "print_json",
    "progress_bar",
    "shown",
]
