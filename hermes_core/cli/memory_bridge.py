"""``hermes-memory memory export-to-hermes-agent NAME``: our provider as a Hermes Agent plugin.

Parses and prints only; the work is :func:`hermes_core.compat.bridge_install.export_provider`.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

import click

from hermes_core.cli.output import console, print_json, shown


def _default_python() -> str:
    """This interpreter when Hermes Agent is importable here (``python -m hermes_core`` run
    inside its environment); otherwise the user must name it."""
    if importlib.util.find_spec("hermes_cli") and importlib.util.find_spec("agent"):
        return sys.executable
    raise click.UsageError(
        "Hermes Agent is not installed in this Python environment. Pass the Python of its "
        "environment: --python ~/.hermes/hermes-agent/venv/bin/python (the interpreter named "
        "on the first line of its `hermes` script)."
    )


def _parse_sets(assignments: tuple[str, ...]) -> dict[str, Any]:
    import unicodedata

    import yaml

    from hermes_core.settings.files import LINE_SEPARATORS
    from hermes_core.yamlsafe import safe_yaml_load

    out: dict[str, Any] = {}
    for item in assignments:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"expected KEY=VALUE, got {item!r}", param_hint="--set")
        if any(ch in LINE_SEPARATORS or unicodedata.category(ch) == "Cc" for ch in item):
            raise click.BadParameter(
                f"{key.strip()[:40]!r}: a setting is given on one line, without control "
                "characters; nothing was written",
                param_hint="--set",
            )
        try:
            out[key.strip()] = safe_yaml_load(raw) if raw.strip() else ""
        except (ValueError, RecursionError, yaml.YAMLError) as exc:
            raise click.BadParameter(
                f"{key.strip()}: not a value ({str(exc)[:200]}); quote text, e.g. "
                f"--set '{key.strip()}=\"some text\"'",
                param_hint="--set",
            ) from exc
    return out


@click.command("export-to-hermes-agent")
@click.argument("name")
@click.option(
    "--hermes-home",
    type=click.Path(file_okay=False, path_type=Path),
    help="Hermes Agent's home (default: $HERMES_HOME or ~/.hermes).",
)
@click.option("--python", "python", help="The Python of Hermes Agent's environment.")
@click.option(
    "--from",
    "checkout",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="A hermes-core checkout to install from (default: this one, else the registry).",
)
@click.option("--plugin-name", help="Directory and provider name in Hermes Agent "
              "(default: hermes-core-NAME).")  # fmt: skip
@click.option("--set", "assignments", multiple=True, metavar="KEY=VALUE",
              help="Provider setting stored in $HERMES_HOME/hermes-core/config.yaml.")  # fmt: skip
@click.option("--no-requirements", is_flag=True,
              help="Do not pip-install the provider's third-party requirements.")  # fmt: skip
@click.option("--offline", is_flag=True,
              help="No package index, no build isolation (all already installed).")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def export_to_hermes_agent(
    name: str,
    hermes_home: Path | None,
    python: str | None,
    checkout: Path | None,
    plugin_name: str | None,
    assignments: tuple[str, ...],
    no_requirements: bool,
    offline: bool,
    as_json: bool,
) -> None:
    """Make our provider NAME usable by Hermes Agent ≥ 0.19 (a plugin directory in its home;
    its own `hermes` command is left untouched). Then, in Hermes Agent:
    `hermes config set memory.provider hermes-core-NAME`."""
    from hermes_core.compat.bridge_install import export_provider
    from hermes_core.errors import HermesError

    raw_home = os.environ.get("HERMES_HOME", "").strip()
    home = hermes_home or (Path(raw_home).expanduser() if raw_home else Path.home() / ".hermes")
    try:
        report = export_provider(
            name,
            hermes_home=home,
            python=python or _default_python(),
            plugin_name=plugin_name,
            settings=_parse_sets(assignments),
            install_requirements=not no_requirements,
            offline=offline,
            checkout=checkout,
        )
    except HermesError as exc:
        raise click.ClickException(str(exc)) from exc
    if as_json:
        print_json(report.as_dict())
        return
    out = console()
    out.print(f"✓ {shown(name)} exported to {shown(report.plugin_dir)}")
    out.print(f"  vendored: {shown(', '.join(report.vendored))}")
    if report.requirements:
        requirements = shown(", ".join(report.requirements))
        out.print(f"  requirements in Hermes Agent's environment: {requirements}")
    if report.hermes_script:
        out.print(f"  {shown(report.hermes_script)}: unchanged ✓")
    out.print(
        f"Activate it in Hermes Agent: hermes config set memory.provider "
        f"{shown(report.plugin_name)}"
    )


__all__ = ["export_to_hermes_agent"]
