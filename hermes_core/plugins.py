"""Building the plugin manager: specs, built-in layers, general plugins.

Order (nothing happens at import time): add specs → load ``hermes`` entry points (each
isolated, a broken one is recorded, not raised) → register built-in layers →
``check_pending()``. The external provider is activated separately by
:mod:`hermes_core.providers.registry`.
"""

from __future__ import annotations

import importlib
import inspect
import logging
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any, cast

import pluggy

from hermes_core import hookspecs
from hermes_core.markers import PROJECT_NAME

log = logging.getLogger(__name__)

BUILTIN_PLUGINS: tuple[str, ...] = (
    "hermes_core.layers.memory.plugin",
    "hermes_core.layers.sessions.plugin",
    "hermes_core.layers.skills.plugin",
    "hermes_core.layers.compression.plugin",
    "hermes_core.layers.review.plugin",
)
"""Module paths of the built-in layers; each module exposes ``create_plugin()``."""

ESSENTIAL_PLUGINS = frozenset({"hermes_core.layers.memory.plugin"})
"""Built-ins that ``HERMES_DISABLE_PLUGINS`` cannot block."""

GENERAL_ENTRY_POINT_GROUP = "hermes"


@dataclass
class PluginLoadReport:
    """What happened while building the manager; shown by ``hermes-memory plugins``."""

    blocked: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)


def _disabled_from_env() -> set[str]:
    raw = os.environ.get("HERMES_DISABLE_PLUGINS", "")
    return {part.strip() for part in raw.split(",") if part.strip()}


def create_plugin_manager(
    *,
    load_entrypoints: bool = True,
    builtins: tuple[str, ...] = BUILTIN_PLUGINS,
) -> pluggy.PluginManager:
    """A fresh manager with every hookspec and the built-in layers registered.

    ``load_entrypoints=False`` (tests) skips third-party ``hermes`` entry points. Plugins
    named in ``HERMES_DISABLE_PLUGINS`` (comma list of plugin names) are blocked, except the
    essential memory layer. The report is attached as ``pm.hermes_report``.
    """
    pm = pluggy.PluginManager(PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
    report = PluginLoadReport()
    disabled = _disabled_from_env()
    for name in sorted(disabled):
        if name in ESSENTIAL_PLUGINS:
            log.warning("plugin %s is essential and cannot be disabled", name)
            continue
        pm.set_blocked(name)
        report.blocked.append(name)
    if load_entrypoints:
        for ep in entry_points(group=GENERAL_ENTRY_POINT_GROUP):
            if pm.is_blocked(ep.name):
                continue
            try:
                pm.register(ep.load(), name=ep.name)
            except Exception as exc:  # a broken plugin must not break the CLI
                log.warning("plugin %s failed to load: %s", ep.name, exc)
                report.failed[ep.name] = f"{type(exc).__name__}: {exc}"
    for module_path in builtins:
        if pm.is_blocked(module_path):
            continue
        module = importlib.import_module(module_path)
        factory = cast(Callable[[], Any], module.create_plugin)
        pm.register(factory(), name=module_path)
    pm.check_pending()
    for problem in defaulted_hook_arguments(pm):
        log.warning("hook argument with a default is never passed by pluggy: %s", problem)
    pm.hermes_report = report  # type: ignore[attr-defined]
    return pm


def defaulted_hook_arguments(pm: pluggy.PluginManager, plugin: object | None = None) -> list[str]:
    """Hook arguments an implementation gave a default value, e.g. ``reason: str = "exit"``.

    pluggy passes only arguments *without* defaults, so such an argument silently keeps its
    default forever. Returns ``"<plugin>.<hook>(<arg>)"`` descriptions (empty when clean).
    """
    problems: list[str] = []
    for caller in pm.hook.__dict__.values():
        if not isinstance(caller, pluggy.HookCaller) or caller.spec is None:
            continue
        spec_args = set(caller.spec.argnames)
        for impl in caller.get_hookimpls():
            if plugin is not None and impl.plugin is not plugin:
                continue
            for name in impl.kwargnames:
                if name in spec_args:
                    problems.append(f"{impl.plugin_name}.{caller.name}({name})")
    return sorted(problems)


_BAD_ARGS = re.compile(
    r"for hook '(?P<hook>[^']+)'.*?Argument\(s\) \{(?P<args>[^}]*)\} are declared", re.DOTALL
)
_UNKNOWN_HOOK = re.compile(r"unknown hook '(?P<hook>[^']+)'")


def describe_hook_error(exc: BaseException) -> str:
    """One plain sentence for pluggy's validation errors, which name the fix indirectly.

    ``Argument(s) {'x'} are declared in the hookimpl but can not be found in the hookspec``
    becomes ``unknown argument(s) x for hook on_memory_write (it takes: session, write)``;
    a misspelled hook name becomes ``unknown hook on_memry_write``. Anything else is
    returned as pluggy wrote it.
    """
    text = str(exc)
    bad = _BAD_ARGS.search(text)
    if bad:
        hook = bad["hook"]
        args = ", ".join(sorted(a.strip().strip("'\"") for a in bad["args"].split(",")))
        spec = getattr(hookspecs, hook, None)
        takes = ""
        if spec is not None:
            takes = f" (it takes: {', '.join(inspect.signature(spec).parameters)})"
        return f"unknown argument(s) {args} for hook {hook}{takes}"
    unknown = _UNKNOWN_HOOK.search(text)
    if unknown:
        return f"unknown hook {unknown['hook']} (the hooks are listed in docs/hooks.md)"
    return text


def plugin_report(pm: pluggy.PluginManager) -> PluginLoadReport:
    """The :class:`PluginLoadReport` of a manager built by :func:`create_plugin_manager`."""
    report = getattr(pm, "hermes_report", None)
    return report if isinstance(report, PluginLoadReport) else PluginLoadReport()


def plugin_rows() -> list[dict[str, Any]]:
    """Every plugin of a fresh plugin manager as ``hermes-memory plugins`` lists it: loaded
    plugins (``builtin`` or ``plugin``, version, hooks), blocked and failed ones, then every
    installed memory provider (not imported: ``hooks`` is None; ``active`` when it is
    ``memory.provider``)."""
    from importlib.metadata import PackageNotFoundError, version

    from hermes_core import __version__
    from hermes_core.hooks import iter_plugin_hooks
    from hermes_core.providers.discovery import list_installed
    from hermes_core.providers.registry import PROVIDER_PLUGIN_PREFIX
    from hermes_core.settings.base import load_settings

    pm = create_plugin_manager()
    report = plugin_report(pm)
    settings = load_settings()
    rows: list[dict[str, Any]] = []
    for name, hooks in iter_plugin_hooks(pm):
        builtin = name in BUILTIN_PLUGINS
        try:
            plugin_version = __version__ if builtin else version(name)
        except PackageNotFoundError:
            plugin_version = None
        rows.append(
            {
                "name": name,
                "kind": "builtin" if builtin else "plugin",
                "version": plugin_version,
                "hooks": hooks,
                "active": True,
                "blocked": False,
            }
        )
    for name in report.blocked:
        rows.append({"name": name, "kind": "plugin", "active": False, "blocked": True})
    for name, error in report.failed.items():
        rows.append({"name": name, "kind": "plugin", "active": False, "error": error})
    for provider in list_installed():
        rows.append(
            {
                "name": PROVIDER_PLUGIN_PREFIX + provider.name,
                "kind": "memory-provider",
                "distribution": provider.distribution,
                "version": provider.version,
                "hooks": None,  # not imported unless active: see `hermes-memory memory status`
                "active": provider.name == settings.memory.provider,
                "blocked": False,
            }
        )
    return rows


__all__ = [
    "BUILTIN_PLUGINS",
    "ESSENTIAL_PLUGINS",
    "PluginLoadReport",
    "create_plugin_manager",
    "defaulted_hook_arguments",
    "describe_hook_error",
    "plugin_report",
    "plugin_rows",
]
