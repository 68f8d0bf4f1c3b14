"""``hermes-memory memory``: list, status, setup, use, off (+ the memory layer's own commands).

``list`` and the cold path of ``status`` never import an inactive provider; ``status``
imports only the configured one (providers keep heavy imports such as chromadb inside
methods, so even that stays light).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from hermes_core.cli.forget import register_forget_command
from hermes_core.cli.memory_store import register_memory_commands
from hermes_core.cli.output import Table, console, mark, print_json, shown
from hermes_core.cli.provider_memories import register_provider_memory_commands
from hermes_core.errors import ConfigError, HermesError
from hermes_core.providers.base import MemoryProvider, load_provider_settings
from hermes_core.providers.discovery import InstalledProvider, list_installed
from hermes_core.providers.sources import OUR_PROVIDERS, install_hint
from hermes_core.providers.status import memory_status
from hermes_core.settings.base import read_config_file, resolve_home
from hermes_core.settings.files import read_env_file, set_config_value, write_env_values
from hermes_core.yamlsafe import safe_yaml_load

BUILTIN_ONLY = "Built-in only — MEMORY.md / USER.md (default)"


def _home() -> Path:
    return resolve_home()


def _configured_provider(home: Path) -> str:
    """``memory.provider`` with the usual precedence (env > .env > config.yaml); ``""`` when
    the settings do not parse (``status`` and ``doctor`` report that)."""
    from hermes_core.settings.base import load_settings

    try:
        return load_settings(home).memory.provider
    except ConfigError:
        return ""


def _provider_config(home: Path, name: str) -> dict[str, Any]:
    memory = read_config_file(home).get("memory") or {}
    providers = memory.get("providers") if isinstance(memory, dict) else None
    block = providers.get(name) if isinstance(providers, dict) else None
    return dict(block) if isinstance(block, dict) else {}


def _load_class(name: str) -> type[MemoryProvider]:
    from hermes_core.providers.registry import load_provider_class

    try:
        return load_provider_class(name)
    except HermesError as exc:
        raise click.ClickException(str(exc)) from exc


@click.group()
def memory() -> None:
    """Built-in memory and the one external memory provider."""


@memory.command("list")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def list_providers(as_json: bool) -> None:
    """Installed memory providers: ours (entry points) and those written for Hermes Agent
    (its plugin dirs and entry points), with their origin; nothing is imported."""
    home = _home()
    active = _configured_provider(home)
    installed = list_installed()
    if as_json:
        print_json(
            [
                {
                    "name": p.name,
                    "distribution": p.distribution,
                    "version": p.version,
                    "origin": p.origin,
                    "active": p.name == active,
                }
                for p in installed
            ]
        )
        return
    out = console()
    if not installed:
        out.print(
            "No memory provider plugins installed. Install one, e.g. "
            "`hermes-memory install hermes-memory-chroma` (ours: "
            "" + ", ".join(OUR_PROVIDERS) + "), "
            "then `hermes-memory memory setup`."
        )
        return
    table = Table(title="Memory providers")
    for column in ("name", "distribution", "version", "origin", "active"):
        table.add_column(column)
    for p in installed:
        mark_active = "← active" if p.name == active else ""
        table.add_row(*map(shown, (p.name, p.distribution, p.version, p.origin)), mark_active)
    out.print(table)


@memory.command("status")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def status(as_json: bool) -> None:
    """Built-in memory state, the active provider and what it still needs."""
    home = _home()
    data = memory_status(home)
    if as_json:
        print_json(data)
        return
    out = console()
    out.print("[bold]Memory status[/bold]")
    out.print("─" * 40)
    out.print(f"Home: {shown(home)}")
    if "config_error" in data:
        out.print(f"{mark(False)} {shown(data['config_error'])}")
        raise SystemExit(1)
    builtin = data["builtin"]

    def flag(value: bool) -> str:
        return "enabled [green]✓[/green]" if value else "disabled [red]✗[/red]"

    out.print("Built-in (MEMORY.md / USER.md):")
    out.print(f"  Store: {shown(builtin['store_location'])}")
    out.print(f"  Memory injection: {flag(builtin['memory_injection'])}")
    out.print(f"  User profile: {flag(builtin['user_profile'])}")
    out.print(f"  Memory tool: {flag(builtin['memory_tool'])}")
    name = data["provider"]
    out.print(f"Provider: {shown(name)}" if name else "Provider: (none — built-in only)")
    info = data.get("provider_status")
    if info:
        if not info["installed"]:
            out.print(f"  Plugin: NOT installed {mark(False)} — {shown(info['fix'])}")
        else:
            out.print(f"  Plugin: installed {mark(True)}")
            if "error" in info:
                out.print(f"  {mark(False)} {shown(info['error'])}")
            else:
                ok = bool(info.get("available"))
                word = "available" if ok else "not available"
                out.print(f"  Status: {word} {mark(ok)}")
                if info.get("reason"):
                    out.print(f"  Reason: {shown(info['reason'])}")
                for label, value in (info.get("details") or {}).items():
                    out.print(f"  {shown(label.capitalize())}: {shown(value)}")
                if info.get("secrets"):
                    out.print("  Secrets:")
                    for secret in info["secrets"]:
                        # an unset key of an available provider is optional here (a server
                        # that checks none): "–", not a ✗ under "available ✓"
                        sign = mark(secret["set"]) if secret["set"] or not ok else "–"
                        line = f"    {sign} {shown(secret['env_var'])}"
                        if not secret["set"] and ok:
                            line += " (not set; optional here)"
                        if not secret["set"] and secret["url"]:
                            line += f" → {shown(secret['url'])}"
                        out.print(line)
                    out.print(
                        "  Secrets live in "
                        f"{shown(home / '.env')}; services started by systemd do not read it."
                    )
    if data.get("recall_skips"):
        from hermes_core.providers.recall_skips import describe

        out.print("Skipped recalls (the turn went on without the provider's memories):")
        for provider_name, entry in sorted(data["recall_skips"].items()):
            out.print(f"  {mark(False)} {shown(provider_name)}: {shown(describe(entry))}")
    out.print("Installed plugins:")
    if not data["installed"]:
        out.print(
            "  (none) — e.g. `hermes-memory install hermes-memory-chroma` (ours: "
            + ", ".join(OUR_PROVIDERS)
            + ")"
        )
    for p in data["installed"]:
        suffix = " ← active" if p["name"] == name else ""
        out.print(shown(f"  • {p['name']} ({p['distribution']} {p['version']}){suffix}"))


def _pick_provider(installed: list[InstalledProvider], active: str) -> str | None:
    """The setup picker; returns a provider name, or None for built-in only.

    The cursor starts on what is active now (marked "(active)"), so pressing Enter on a
    re-run keeps the current choice instead of switching the provider off.
    """
    import questionary

    from hermes_core.cli.prompts import ask, setup_hint

    choices = []
    default: Any = None
    for p in installed:
        try:
            hint = setup_hint(_load_class(p.name).Settings)
        except click.ClickException:
            hint = "fails to load — see `hermes-memory memory status`"
        label = f"{p.name} (active) — {hint}" if p.name == active else f"{p.name} — {hint}"
        choice = questionary.Choice(label, value=p.name)
        if p.name == active:
            default = choice
        choices.append(choice)
    builtin = questionary.Choice(BUILTIN_ONLY + (" (active)" if not active else ""), value="")
    choices.append(builtin)
    picked = ask(
        questionary.select("Memory provider setup", choices=choices, default=default or builtin)
    )
    return str(picked) or None


def _require_terminal() -> None:
    """Interactive setup needs a terminal; without one it would pick defaults silently."""
    from hermes_core.cli.prompts import interactive_input_available

    if not interactive_input_available():
        raise click.ClickException(
            "`hermes-memory memory setup` is interactive and needs a terminal. In scripts use "
            "`hermes-memory memory use NAME --set KEY=VALUE` (or `hermes-memory memory off`)."
        )


@memory.command("setup")
@click.argument("name", required=False)
@click.option(
    "--advanced", is_flag=True, help="Also ask the settings that normally keep their defaults."
)
def setup(name: str | None, advanced: bool) -> None:
    """Pick a provider and answer what a first-time user must (key, URL, scope); the rest keeps
    its defaults and is not written. Esc cancels; nothing is written then."""
    from hermes_core.cli.prompts import SetupCancelled, prompt_settings

    home = _home()
    out = console()
    installed = list_installed()
    try:
        if name is None:
            if not installed:
                out.print(
                    "No memory provider plugins detected. Install one, e.g. "
                    "`hermes-memory install hermes-memory-chroma` (ours: "
                    + ", ".join(OUR_PROVIDERS)
                    + "), and try again."
                )
                return
            _require_terminal()
            name = _pick_provider(installed, _configured_provider(home))
            if name is None:
                set_config_value(home, "memory.provider", "")
                out.print("✓ Memory provider: built-in only")
                return
        elif not any(p.name == name for p in installed):
            known = ", ".join(p.name for p in installed) or "none"
            raise click.ClickException(
                f"Memory provider '{name}' not found. Installed: {known}. {install_hint(name)}"
            )
        _require_terminal()
        cls = _load_class(name)
        current = _provider_config(home, name)
        answers = prompt_settings(
            cls.Settings,
            name,
            current_config=current,
            current_env=read_env_file(home),
            say=out.print,
            advanced=advanced,
        )
    except SetupCancelled:
        out.print("Cancelled. No changes saved.")
        raise SystemExit(1) from None
    _validate_and_save(home, cls, name, answers.merged_into(current), answers.secrets)


def _validate_and_save(
    home: Path,
    cls: type[MemoryProvider],
    name: str,
    config: dict[str, Any],
    secrets: dict[str, str],
) -> None:
    """Validate the provider's settings, probe availability, then write config and .env."""
    import os

    out = console()
    saved_env = {key: os.environ.get(key) for key in secrets}
    from hermes_core.fsutil import ensure_private_dir

    ensure_private_dir(home)  # probe the provider against the home it will run in
    os.environ.update(secrets)  # so validation sees the new secrets
    try:
        provider_settings = load_provider_settings(cls.Settings, name, home, config)
        provider = cls(provider_settings, home)
        available = provider.is_available()
        reason = "" if available else provider.unavailable_reason()
    except HermesError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    try:
        if secrets:
            write_env_values(home, secrets)
        set_config_value(home, f"memory.providers.{name}", _plain(config))
        set_config_value(home, "memory.provider", name)
        provider.save_setup(_plain(config))  # e.g. a Hermes Agent provider's save_config
    except HermesError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        provider.shutdown()
    out.print(f"Memory provider: {shown(name)}")
    out.print("Activation saved to config.yaml")
    if config:
        out.print("Provider config saved")
    if secrets:
        out.print("API keys saved to .env")
    out.print(f"Status: {'available ✓' if available else 'not available ✗ — ' + reason}")
    out.print("Start a new session to activate.")


def _plain(config: dict[str, Any]) -> dict[str, Any]:
    """YAML-safe values (enums and paths as strings)."""
    import enum

    out: dict[str, Any] = {}
    for key, value in config.items():
        if isinstance(value, enum.Enum):
            value = value.value
        elif isinstance(value, Path):
            value = str(value)
        out[key] = value
    return out


@memory.command("use")
@click.argument("name")
@click.option(
    "--set",
    "assignments",
    multiple=True,
    metavar="KEY=VALUE",
    help="Provider setting to store (repeatable), e.g. --set top_k=8.",
)
def use(name: str, assignments: tuple[str, ...]) -> None:
    """Activate provider NAME without prompts (for scripts and CI)."""

    home = _home()
    if name in {"builtin", "none", ""}:
        set_config_value(home, "memory.provider", "")
        console().print("✓ Memory provider: built-in only")
        return
    cls = _load_class(name)
    config = _provider_config(home, name)
    for item in assignments:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"expected KEY=VALUE, got {item!r}", param_hint="--set")
        if key.strip() not in cls.Settings.model_fields:
            known = ", ".join(cls.Settings.model_fields)
            raise click.BadParameter(
                f"'{key}' is not a setting of {name}. Known: {known}", param_hint="--set"
            )
        text_only = _is_text(cls.Settings.model_fields[key.strip()].annotation)
        # a text field keeps the text as typed ("off" stays "off", "0123" stays "0123")
        config[key.strip()] = raw if text_only or not raw.strip() else safe_yaml_load(raw)
    _validate_and_save(home, cls, name, config, {})


def _is_text(annotation: Any) -> bool:
    """``str``, or a Literal of strings, optionally ``| None``: ``--set`` keeps it as typed."""
    import types
    import typing

    args = [annotation]
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
    return all(
        a is str
        or (
            typing.get_origin(a) is typing.Literal
            and all(isinstance(v, str) for v in typing.get_args(a))
        )
        for a in args
    )


@memory.command("off")
def off() -> None:
    """Disable the external provider; built-in memory stays on."""
    home = _home()
    previous = _configured_provider(home)
    set_config_value(home, "memory.provider", "")
    message = f"✓ External memory provider '{previous}' disabled" if previous else "✓ Already off"
    console().print(shown(f"{message}; built-in memory (MEMORY.md / USER.md) stays active."))


register_memory_commands(memory)  # show, edit, pending, approve, reject, restore, archive, users
register_forget_command(memory)  # forget PHRASE / --everything
register_provider_memory_commands(memory)  # provider-list, provider-expire

from hermes_core.cli.memory_bridge import export_to_hermes_agent  # noqa: E402

memory.add_command(export_to_hermes_agent)

__all__ = ["memory"]
