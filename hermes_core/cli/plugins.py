"""``hermes-memory plugins`` (JSON listing), ``hermes-memory install`` / ``hermes-memory
uninstall`` (pip in the same
interpreter, so pipx and venv installs land in the right environment)."""

from __future__ import annotations

import subprocess
import sys

import click

from hermes_core.cli.output import print_json


@click.command()
def plugins() -> None:
    """Registered plugins and installed providers, as JSON (name, version, hooks, active)."""
    from hermes_core.plugins import plugin_rows

    print_json(plugin_rows())


def _pip(args: list[str]) -> None:
    command = [sys.executable, "-m", "pip", *args]
    click.echo("$ " + " ".join(command), err=True)
    result = subprocess.run(command, check=False)
    if result.returncode != 0:
        raise click.ClickException(f"pip exited with status {result.returncode}")


@click.command(context_settings={"ignore_unknown_options": True})
@click.argument("packages", nargs=-1)
@click.option("-e", "--editable", multiple=True, help="Install a local project in editable mode.")
@click.option("-U", "--upgrade", is_flag=True, help="Upgrade if already installed.")
@click.option(
    "--force-reinstall",
    is_flag=True,
    help="Reinstall the named packages even if up to date (never their dependencies: an "
    "editable core stays the checkout).",
)
def install(
    packages: tuple[str, ...], editable: tuple[str, ...], upgrade: bool, force_reinstall: bool
) -> None:
    """Install provider packages into the Python environment hermes runs in.

    Our providers (``chroma`` or ``hermes-memory-chroma``, …) come from this checkout's
    ``plugins/`` when hermes runs from one, from the registry otherwise; anything else (a
    path, a registry requirement) goes to pip unchanged. The installed core is never replaced:
    providers require ``hermes-memory-core>=0.1,<0.2``, which it already satisfies."""
    from hermes_core.providers.sources import resolve

    if not packages and not editable:
        raise click.UsageError("name a package, e.g. `hermes-memory install hermes-memory-chroma`")
    targets = resolve(list(packages))
    for item in targets:
        if item.origin == "checkout":
            click.echo(f"{item.requested}: from this checkout, {item.target}", err=True)
    wanted = [t.target for t in targets]
    extra = ["--upgrade"] if upgrade else []
    for path in editable:
        extra += ["-e", path]
    if force_reinstall:
        # Only the named packages are reinstalled; their dependencies (the core among them)
        # are left as they are, then any missing ones are filled in.
        _pip(["install", "--force-reinstall", "--no-deps", *extra, *wanted])
    _pip(["install", *extra, *wanted])
    click.echo("Installed. Next: `hermes-memory memory list`, then `hermes-memory memory setup`.")


@click.command()
@click.argument("packages", nargs=-1, required=True)
@click.option(
    "--off/--keep-config",
    "switch_off",
    default=None,
    help="If the active memory provider goes away: turn it off (built-in only) or keep "
    "memory.provider as it is. Asked on a terminal; kept (with a warning) otherwise.",
)
def uninstall(packages: tuple[str, ...], switch_off: bool | None) -> None:
    """Uninstall packages from the Python environment hermes runs in."""
    from hermes_core.providers.discovery import list_installed
    from hermes_core.settings.base import load_settings, resolve_home
    from hermes_core.settings.files import set_config_value

    home = resolve_home()
    try:
        active = load_settings(home).memory.provider
    except Exception:  # an unreadable config is doctor's business, not uninstall's
        active = ""
    _pip(["uninstall", "-y", *packages])
    if not active or any(p.name == active for p in list_installed()):
        return
    if switch_off is None and sys.stdin.isatty():
        switch_off = click.confirm(
            f"'{active}' was the active memory provider and is gone. "
            "Switch to built-in memory only (`hermes-memory memory off`)?",
            default=True,
        )
    if switch_off:
        set_config_value(home, "memory.provider", "")
        click.echo(f"✓ Memory provider '{active}' turned off; built-in memory stays active.")
    else:
        click.echo(
            f"⚠ memory.provider is still '{active}', which is no longer installed: sessions "
            "run with built-in memory only. Run `hermes-memory memory off` to make that explicit, "
            f"or reinstall the package and `hermes-memory memory use {active}`."
        )


__all__ = ["install", "plugins", "uninstall"]
