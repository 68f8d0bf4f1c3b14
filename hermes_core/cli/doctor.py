"""``hermes-memory doctor``: every layer's and the provider's ``health_check``, plus host checks.

SQLite/FTS5 is the sessions layer's own check (``sessions: full-text search (FTS5)``).

Each failed check prints the fix. Exit status 1 when anything failed.
"""

from __future__ import annotations

import click

from hermes_core.cli.output import Table, console, mark, print_json, shown
from hermes_core.health import run_checks
from hermes_core.types import HealthCheck


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def doctor(as_json: bool) -> None:
    """Check the Hermes home, config, SQLite, every memory layer and the provider."""
    from hermes_core.fsutil import ensure_private_dir
    from hermes_core.settings.base import resolve_home

    home = resolve_home()
    if not home.exists():
        ensure_private_dir(home)
        console(stderr=True).print(f"Created {shown(home)} (mode 700).")
    checks = run_checks(home)
    failed = [check for check in checks if not check.ok]
    if as_json:
        print_json(
            [check.__dict__ if hasattr(check, "__dict__") else _row(check) for check in checks]
        )
    else:
        table = Table(title=f"hermes-memory doctor — {shown(home)}")
        for column in ("", "check", "detail"):
            table.add_column(column)
        for check in checks:
            table.add_row(mark(check.ok), shown(check.name), shown(check.detail))
        out = console()
        out.print(table)
        # each fix on a line of its own, outside the table: a command is never wrapped
        # inside a cell, so it can be copied and pasted as printed
        # (a passing check may carry advice, e.g. the extra that adds semantic matching)
        fixes = [check for check in checks if check.fix]
        if fixes:
            out.print("Fixes:")
        for check in fixes:
            flag = "·" if check.ok else mark(False)
            out.print(f"  {flag} {shown(check.name)}: {shown(check.fix)}")
        out.print(f"{len(checks) - len(failed)} ok, {len(failed)} failed")
    if failed:
        raise SystemExit(1)


def _row(check: HealthCheck) -> dict[str, object]:
    return {"name": check.name, "ok": check.ok, "detail": check.detail, "fix": check.fix}


__all__ = ["doctor"]
