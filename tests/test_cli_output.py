"""CLI tables never cut a figure short: piped output keeps its width, narrow terminals fold."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest
from rich.console import Console

from hermes_core.cli import output
from hermes_core.cli.output import Table

FIGURES = [f"0.{n:04d}{n:03d}" for n in range(1, 13)]


def wide_table() -> Table:
    table = Table(title="Side by side 并排")
    for n in range(len(FIGURES)):
        table.add_column(f"recall_all@{n}")
    table.add_row(*FIGURES)
    return table


def test_piped_console_is_wide_and_keeps_every_digit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    buffer = io.StringIO()  # not a terminal, like `hermes-memory bench … > out.txt`
    monkeypatch.setattr(sys, "stdout", buffer)
    output.console().print(wide_table())
    text = buffer.getvalue()
    assert "…" not in text
    for figure in FIGURES:
        assert figure in text


def test_a_narrow_terminal_folds_figures_instead_of_cutting_them() -> None:
    buffer = io.StringIO()
    Console(file=buffer, width=60, force_terminal=True, color_system=None).print(wide_table())
    text = buffer.getvalue()
    assert "…" not in text
    body = text.split("┡", 1)[1]  # the rows, below the header
    # every digit of every figure is there, folded over lines rather than cut
    assert sum(ch.isdigit() for ch in body) == sum(ch.isdigit() for ch in "".join(FIGURES))


def test_a_piped_cli_listing_is_not_squeezed_to_80_columns(tmp_path: object) -> None:
    code = (
        "from hermes_core.cli.output import console, Table\n"
        "t = Table()\n"
        "[t.add_column(f'column number {i}') for i in range(10)]\n"
        "t.add_row(*[f'0.{i}{i}{i}{i}{i}{i}' for i in range(10)])\n"
        "console().print(t)\n"
    )
    env = {"PATH": "/usr/bin:/bin", "PYTHONIOENCODING": "utf-8"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert "…" not in done.stdout
    assert max(len(line) for line in done.stdout.splitlines()) > 80
    for i in range(10):
        assert f"0.{str(i) * 6}" in done.stdout
