"""Activating the external memory provider: **the only place the one-provider rule lives.**

Discovery lists entry points without importing; :meth:`ProviderRegistry.activate` imports
the named one, checks it, validates its settings and registers the instance. A second,
different activation raises :class:`ProviderConflictError`; switching is an explicit
:meth:`deactivate` then :meth:`activate`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pluggy

from hermes_core.errors import (
    DuplicateProviderError,
    HermesError,
    ProviderConflictError,
    ProviderLoadError,
    UnknownProviderError,
)
from hermes_core.plugins import describe_hook_error
from hermes_core.providers.base import MemoryProvider, load_provider_settings
from hermes_core.providers.discovery import InstalledProvider, list_installed
from hermes_core.providers.sources import install_hint
from hermes_core.settings.models import HermesSettings

log = logging.getLogger(__name__)

PROVIDER_PLUGIN_PREFIX = "memory-provider:"


def provider_plugin_name(name: str) -> str:
    """The plugin-manager name of the active provider ``name``."""
    return PROVIDER_PLUGIN_PREFIX + name


def find_entry_point(name: str) -> InstalledProvider:
    """The installed provider named ``name`` (a native entry point wins over the same name
    from another origin, see :class:`InstalledProvider.precedence`).

    Raises UnknownProviderError (listing installed providers) or DuplicateProviderError
    (naming every distribution that offers it).
    """
    installed = list_installed()
    matches = [p for p in installed if p.name == name]
    if not matches:
        listing = [f"{p.name} ({p.distribution} {p.version})" for p in installed]
        raise UnknownProviderError(name, listing, hint=install_hint(name))
    best = min(p.precedence for p in matches)
    matches = [p for p in matches if p.precedence == best]  # native beats foreign origins
    if len(matches) > 1:
        raise DuplicateProviderError(name, [f"{p.distribution} {p.version}" for p in matches])
    return matches[0]


def load_provider_class(name: str) -> type[MemoryProvider]:
    """Import the provider class behind entry point ``name`` and check it.

    Raises ProviderLoadError (cause chained) when the import fails, the target is not a
    MemoryProvider subclass, or its ``name`` differs from the entry-point name.
    """
    installed = find_entry_point(name)
    where = f"{installed.origin} '{name}' in {installed.distribution} {installed.version}"
    try:
        target = installed.load()
    except Exception as exc:
        raise ProviderLoadError(
            name,
            f"{where} could not be imported ({type(exc).__name__}: {exc}). Reinstall it with "
            f"`hermes-memory install --force-reinstall {installed.distribution}`.",
            distribution=installed.distribution,
        ) from exc
    return check_provider_class(target, name, where=where, distribution=installed.distribution)


def check_provider_class(
    target: Any, name: str, *, where: str, distribution: str | None = None
) -> type[MemoryProvider]:
    """Return ``target`` if it is a MemoryProvider subclass called ``name``."""
    if not (isinstance(target, type) and issubclass(target, MemoryProvider)):
        kind = type(target).__name__ if not isinstance(target, type) else target.__name__
        raise ProviderLoadError(
            name,
            f"{where} points to {kind}, expected a MemoryProvider subclass. The entry point "
            'must name the class, e.g. `chroma = "pkg.provider:ChromaProvider"`.',
            distribution=distribution,
        )
    if target.name != name:
        raise ProviderLoadError(
            name,
            f"{where} names class {target.__name__} whose name is {target.name!r}; the entry "
            f"point name and MemoryProvider.name must both be {name!r}.",
            distribution=distribution,
        )
    return target


@dataclass(frozen=True)
class ProviderStatus:
    """The configured external provider and whether it is serving this host."""

    name: str
    active: bool
    reason: str = ""


def _redact(text: str) -> str:
    """``text`` with secrets masked; ``hermes_core.context`` (and the threat scanner it
    loads) is imported only when there is a reason to redact."""
    if not text:
        return ""
    from hermes_core.security.redaction import redact

    return redact(text)


def availability(provider: MemoryProvider) -> ProviderStatus:
    """``provider.is_available()`` (and its ``unavailable_reason()``) as a status; a raising
    check counts as unavailable, with the exception as the reason (secrets redacted: a
    provider may echo the key it was configured with)."""
    try:
        available = provider.is_available()
        reason = "" if available else provider.unavailable_reason()
    except Exception as exc:
        available, reason = False, f"is_available() raised {type(exc).__name__}: {exc}"
    return ProviderStatus(provider.name, available, _redact(str(reason or "")))


class ProviderRegistry:
    """Holds the one active external provider of a plugin manager."""

    def __init__(
        self,
        pm: pluggy.PluginManager,
        settings: HermesSettings,
        home: Path,
        *,
        register: Callable[[object, str], None] | None = None,
    ) -> None:
        self.pm = pm
        self.settings = settings
        self.home = home
        self._register = register or (lambda plugin, name: pm.register(plugin, name=name))
        self._active: MemoryProvider | None = None

    @property
    def active(self) -> MemoryProvider | None:
        return self._active

    def _admit(self, name: str, cls: type[MemoryProvider] | None = None) -> MemoryProvider | None:
        """The one-provider rule, for :meth:`activate` and :meth:`activate_class` alike.

        Returns the active instance when it already is ``name`` (and of class ``cls``, when
        given): activating it again is a no-op. Returns ``None`` when nothing is active, so
        the caller may go on. Raises ProviderConflictError when a different provider is
        active, or when a MemoryProvider was registered with the plugin manager some other
        way."""
        active = self._active
        if active is None:
            self._refuse_smuggled(name)
            return None
        if active.name == name and (cls is None or type(active) is cls):
            return active
        raise ProviderConflictError(requested=name, active=active.name)

    def activate(self, name: str) -> MemoryProvider:
        """Import, validate and register provider ``name``; returns the instance.

        Activating the active name again returns the same instance. A different name while
        one is active raises ProviderConflictError naming both (before anything is imported).
        """
        active = self._admit(name)
        if active is not None:
            return active
        return self.activate_class(load_provider_class(name))

    def activate_class(
        self, cls: type[MemoryProvider], raw_settings: dict[str, Any] | None = None
    ) -> MemoryProvider:
        """Activate an already imported provider class (tests and the test kit use this)."""
        name = cls.name
        active = self._admit(name, cls)
        if active is not None:
            return active
        raw = raw_settings if raw_settings is not None else self.settings.memory.providers.get(name)
        provider_settings = load_provider_settings(cls.Settings, name, self.home, raw)
        try:
            instance = cls(provider_settings, self.home)
        except Exception as exc:
            raise ProviderLoadError(
                name, f"memory provider '{name}' failed to start: {type(exc).__name__}: {exc}"
            ) from exc
        plugin_name = provider_plugin_name(name)
        try:
            self._register(instance, plugin_name)
            self.pm.check_pending()
        except Exception as exc:
            if self.pm.get_plugin(plugin_name) is not None:
                self.pm.unregister(name=plugin_name)
            raise ProviderLoadError(
                name,
                f"memory provider '{name}': {describe_hook_error(exc)}. "
                "Check the hook names and arguments against docs/hooks.md.",
            ) from exc
        self._active = instance
        return instance

    def activate_configured(self) -> ProviderStatus | None:
        """Activate ``memory.provider`` if one is configured, keeping it only if available.

        Never raises for a provider problem: a provider that is not installed, fails to load
        or start, or whose ``is_available()`` is false (or raises) is logged, left inactive,
        and described in the returned :class:`ProviderStatus`; the built-in layers carry on.
        ``None`` when no provider is configured."""
        name = self.settings.memory.provider
        if not name:
            return None
        try:
            provider = self.activate(name)
        except HermesError as exc:
            reason = _redact(str(exc))  # a provider failing to start may echo its key
            log.warning("memory provider %s is not active: %s", name, reason)
            return ProviderStatus(name, False, reason)
        status = availability(provider)
        if not status.active:
            log.warning("%s unavailable: %s", name, status.reason)
            self.deactivate()
        return status

    def deactivate(self) -> None:
        """Unregister and shut down the active provider (no-op when none)."""
        if self._active is None:
            return
        instance, self._active = self._active, None
        plugin_name = provider_plugin_name(instance.name)
        if self.pm.get_plugin(plugin_name) is not None:
            self.pm.unregister(name=plugin_name)
        try:
            instance.shutdown()
        except Exception:
            log.exception("provider %s failed to shut down", instance.name)

    def _refuse_smuggled(self, name: str) -> None:
        """Backstop: a MemoryProvider registered some other way counts as active."""
        for plugin_name, plugin in self.pm.list_name_plugin():
            if isinstance(plugin, MemoryProvider) and plugin is not self._active:
                raise ProviderConflictError(requested=name, active=f"{plugin.name} ({plugin_name})")


__all__ = [
    "PROVIDER_PLUGIN_PREFIX",
    "ProviderRegistry",
    "ProviderStatus",
    "availability",
    "check_provider_class",
    "find_entry_point",
    "load_provider_class",
    "provider_plugin_name",
]
