"""Shared ``--json OUT`` handling of the ``hermes bench`` commands.

A benchmark can run for minutes; an unwritable ``--json`` path must be refused before it
starts, not with a traceback after the figures were computed.
"""

from __future__ import annotations

import os
from pathlib import Path

import click


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


__all__ = ["check_json_out"]
