"""``hermes-memory doctor``: every layer's and the provider's ``health_check``, plus host checks.

SQLite/FTS5 is the sessions layer's own check (``sessions: full-text search (FTS5)``).

Each failed check prints the fix. Exit status 1 when anything failed.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import click

from hermes_core.cli.output import Table, console, mark, print_json, shown
from hermes_core.types import HealthCheck


def home_checks(home: Path) -> list[HealthCheck]:
    """HERMES_HOME exists, is a private directory, and is writable."""
    if not home.exists():
        return [
            HealthCheck(
                "hermes home",
                False,
                f"{home} does not exist",
                f"run `hermes-memory memory status` once or `mkdir -m 700 {home}`",
            )
        ]
    mode = stat.S_IMODE(home.stat().st_mode)
    checks = [
        HealthCheck(
            "hermes home permissions",
            not mode & 0o077,
            f"{home} has mode {mode:o}",
            f"chmod 700 {home}",
        ),
        HealthCheck(
            "hermes home writable",
            os.access(home, os.W_OK),
            str(home),
            f"check ownership of {home}",
        ),
    ]
    env_file = home / ".env"
    if env_file.exists():
        env_mode = stat.S_IMODE(env_file.stat().st_mode)
        checks.append(
            HealthCheck(
                ".env permissions",
                not env_mode & 0o077,
                f"mode {env_mode:o}",
                f"chmod 600 {env_file}",
            )
        )
    return checks


def provider_fix(name: str) -> str:
    """A fix for an inactive provider that names commands which work: setup only helps a
    provider that is installed; an uninstalled one is switched off (or reinstalled)."""
    from hermes_core.providers.discovery import list_installed

    if any(p.name == name for p in list_installed()):
        return f"hermes-memory memory setup {name}"
    return (
        f"hermes-memory memory off (the package that provided '{name}' is not installed; "
        f"reinstall it, then `hermes-memory memory use {name}`, to keep using it)"
    )


def run_checks(home: Path) -> list[HealthCheck]:
    from hermes_core.errors import HermesError
    from hermes_core.host import MemoryHost
    from hermes_core.settings.base import load_settings

    checks = home_checks(home)
    try:
        settings = load_settings(home)
    except HermesError as exc:
        checks.append(HealthCheck("config", False, str(exc), f"fix {home / 'config.yaml'}"))
        return checks
    config_file = home / "config.yaml"
    if config_file.exists():
        checks.append(HealthCheck("config", True, f"{config_file} is valid"))
    else:
        checks.append(
            HealthCheck("config", True, f"no {config_file}: the defaults are used (it is optional)")
        )
    host = MemoryHost.open(home, settings=settings)
    try:
        status = host.provider_status
        if status is not None:
            checks.append(
                HealthCheck(
                    f"provider {status.name}",
                    status.active,
                    "active" if status.active else status.reason,
                    "" if status.active else provider_fix(status.name),
                )
            )
        checks.extend(host.facade.health_check())
    finally:
        host.close()
    return checks


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


__all__ = ["doctor", "home_checks", "run_checks"]
