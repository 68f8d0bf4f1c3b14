"""What ``hermes-memory memory status`` reports, as one typed :class:`MemoryStatus`.

:func:`memory_status` reads the settings, the built-in memory's state, the installed
providers and what the active provider still needs (its secrets, whether it is available
and its own status details). It imports only the configured provider and never raises for
a broken configuration or provider: the problem is part of the result.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, TypedDict

from hermes_core.errors import ConfigError, HermesError
from hermes_core.providers.base import (
    asked_when,
    env_var_for,
    field_url,
    is_secret,
    load_provider_settings,
)
from hermes_core.providers.discovery import list_installed
from hermes_core.providers.sources import install_hint
from hermes_core.settings.files import read_env_file


class BuiltinStatus(TypedDict):
    """The built-in memory (MEMORY.md / USER.md) as configured."""

    store: str
    store_location: str
    memory_injection: bool
    user_profile: bool
    memory_tool: bool
    memory_char_limit: int
    user_char_limit: int
    write_approval: Any


class InstalledStatus(TypedDict):
    name: str
    distribution: str
    version: str


class SecretStatus(TypedDict):
    """A secret the active provider reads: its env var, whether it is set, where to get it."""

    env_var: str
    set: bool
    url: str | None


class ProviderStatus(TypedDict, total=False):
    """The active provider: ``fix`` when not installed, ``error`` when it cannot be loaded,
    else its ``secrets``, ``available`` (with the ``reason`` when not) and ``details``."""

    name: str
    installed: bool
    fix: str
    error: str
    secrets: list[SecretStatus]
    available: bool
    reason: str
    details: dict[str, Any]


class MemoryStatus(TypedDict, total=False):
    """``home``; ``config_error`` alone when the settings do not parse; else the rest."""

    home: str
    config_error: str
    builtin: BuiltinStatus
    installed: list[InstalledStatus]
    recall_skips: Any
    provider: str | None
    provider_status: ProviderStatus


def memory_status(home: Path) -> MemoryStatus:
    """The state of memory under ``home`` (see :class:`MemoryStatus`)."""
    from hermes_core.layers.memory import describe
    from hermes_core.providers import recall_skips
    from hermes_core.settings.base import load_settings

    data: MemoryStatus = {"home": str(home)}
    try:
        settings = load_settings(home)
    except ConfigError as exc:
        data["config_error"] = str(exc)
        return data
    mem = settings.memory
    data["builtin"] = {
        "store": mem.store,
        "store_location": describe(home, mem),
        "memory_injection": mem.memory_enabled,
        "user_profile": mem.user_profile_enabled,
        "memory_tool": "memory" not in settings.agent.disabled_toolsets
        and (mem.memory_enabled or mem.user_profile_enabled),
        "memory_char_limit": mem.memory_char_limit,
        "user_char_limit": mem.user_char_limit,
        "write_approval": mem.write_approval,
    }
    installed = list_installed()
    data["installed"] = [
        {"name": p.name, "distribution": p.distribution, "version": p.version} for p in installed
    ]
    data["recall_skips"] = recall_skips.load(home)
    name = mem.provider
    data["provider"] = name or None
    if name:
        data["provider_status"] = provider_status(
            home, name, mem.providers.get(name), any(p.name == name for p in installed)
        )
    return data


def provider_status(
    home: Path, name: str, raw: dict[str, Any] | None, installed: bool
) -> ProviderStatus:
    """What provider ``name`` (configured with ``raw``) still needs, see
    :class:`ProviderStatus`."""
    from hermes_core.providers.registry import load_provider_class

    info: ProviderStatus = {"name": name, "installed": installed}
    if not installed:
        info["fix"] = install_hint(name)
        return info
    try:
        cls = load_provider_class(name)
    except HermesError as exc:
        info["error"] = str(exc)
        return info
    env = read_env_file(home)
    known: dict[str, Any] = dict(raw or {})
    try:  # the values in force (env included) decide which secrets apply
        known.update(load_provider_settings(cls.Settings, name, home, raw).model_dump())
    except Exception:
        pass  # reported below
    secrets: list[SecretStatus] = []
    for field_name, field_info in cls.Settings.model_fields.items():
        # a secret of another mode (a server's token while embedded) is not missing
        if not is_secret(field_info) or not asked_when(field_info, known):
            continue
        var = env_var_for(cls.Settings, name, field_name)
        present = bool(os.environ.get(var) or env.get(var))
        secrets.append({"env_var": var, "set": present, "url": field_url(field_info)})
    info["secrets"] = secrets
    try:
        provider = cls(load_provider_settings(cls.Settings, name, home, raw), home)
        info["available"] = provider.is_available()
        info["reason"] = "" if info["available"] else provider.unavailable_reason()
        if info["available"]:
            try:
                info["details"] = dict(provider.status_details())
            except Exception as exc:
                info["details"] = {"error": f"{type(exc).__name__}: {exc}"}
        provider.shutdown()
    except HermesError as exc:
        info["available"] = False
        info["reason"] = str(exc)
    except Exception as exc:
        info["available"] = False
        info["reason"] = f"{type(exc).__name__}: {exc}"
    return info


__all__ = [
    "BuiltinStatus",
    "InstalledStatus",
    "MemoryStatus",
    "ProviderStatus",
    "SecretStatus",
    "memory_status",
    "provider_status",
]
