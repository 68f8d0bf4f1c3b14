"""What ``hermes-memory doctor`` checks, as typed functions (the CLI only prints them).

Contract: :func:`run_checks` never raises for a broken home or config: every problem is a
failed :class:`~hermes_core.types.HealthCheck` whose ``fix`` names a command or setting that
works. Order: the home (:func:`home_checks`), the config, the provider's status, then every
layer's and the provider's own ``health_check``.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

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
    """Every check of ``home`` (see the module contract); opens and closes a host."""
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


__all__ = ["home_checks", "provider_fix", "run_checks"]
