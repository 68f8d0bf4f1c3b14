"""Shared ``--json OUT`` handling of the ``hermes-memory bench`` commands.

A benchmark can run for minutes; an unwritable ``--json`` path must be refused before it
starts, not with a traceback after the figures were computed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import click

from hermes_core.cli.output import console


def check_json_out(ctx: click.Context, param: click.Parameter, value: Path | None) -> Path | None:
    """click callback: ``value``'s directory exists and is writable (or ``value`` is None)."""
    if value is None:
        return None
    parent = value.parent if str(value.parent) else Path(".")
    if not parent.is_dir():
        raise click.BadParameter(
            f"directory {parent} does not exist — create it first or pick another path",
            ctx=ctx,
            param=param,
        )
    if not os.access(parent, os.W_OK) or (value.exists() and not os.access(value, os.W_OK)):
        raise click.BadParameter(
            f"{value} is not writable — pick a path in a directory you can write to",
            ctx=ctx,
            param=param,
        )
    return value


json_out_option = click.option(
    "--json",
    "json_out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    callback=check_json_out,
    help="Also write the figures to this JSON file (checked before the run starts).",
)
"""The ``--json OUT`` option every benchmark takes (parameter name ``json_out``)."""


def write_json(path: Path | None, payload: Any) -> None:
    """Write ``payload`` as readable UTF-8 JSON to ``path`` (nothing when None) and say so."""
    if path is None:
        return
    path.write_text(json.dumps(payload, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    console().print(f"wrote {path}", markup=False)


__all__ = ["check_json_out", "json_out_option", "write_json"]
