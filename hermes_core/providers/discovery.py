"""List installed memory providers, **without importing them**.

Native providers are entry points of group ``hermes.memory_providers`` (the entry-point name
is the provider name). Other *provider sources* (entry-point group
``hermes.provider_sources``, e.g. the Hermes Agent bridge in :mod:`hermes_core.compat`) add
providers found elsewhere; each listed provider carries its ``origin``. A source is our own
light module: listing it reads files and metadata, never a provider's code.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Protocol

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "hermes.memory_providers"
SOURCE_GROUP = "hermes.provider_sources"
NATIVE_ORIGIN = "entry point"


@dataclass(frozen=True, slots=True)
class InstalledProvider:
    """One installed provider: name, the distribution (or directory) offering it, its
    version, the import target, where it was found (``origin``) and the provider source that
    loads it (``""`` for native entry points). ``precedence``: lower wins on a name clash."""

    name: str
    distribution: str
    version: str
    value: str
    origin: str = NATIVE_ORIGIN
    source: str = ""
    precedence: int = 0

    def entry_point(self) -> EntryPoint:
        return EntryPoint(name=self.name, value=self.value, group=ENTRY_POINT_GROUP)

    def load(self) -> Any:
        """Import the provider: the entry point's target, or what its source builds (a
        MemoryProvider subclass). Import errors propagate."""
        if not self.source:
            return self.entry_point().load()
        return _load_source(self.source).load(self)


class ProviderSource(Protocol):
    """What a ``hermes.provider_sources`` entry point names (an object, not a class)."""

    def list(self) -> list[InstalledProvider]:
        """Providers found, without importing any of them."""
        ...

    def load(self, provider: InstalledProvider) -> Any:
        """A MemoryProvider subclass named ``provider.name``."""
        ...


def _source_entry_points() -> dict[str, EntryPoint]:
    return {ep.name: ep for ep in entry_points(group=SOURCE_GROUP)}


def _load_source(name: str) -> ProviderSource:
    ep = _source_entry_points().get(name)
    if ep is None:
        raise LookupError(f"provider source '{name}' is not installed")
    source: ProviderSource = ep.load()
    return source


def _native() -> list[InstalledProvider]:
    found: list[InstalledProvider] = []
    seen: set[tuple[str, str]] = set()
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        dist = ep.dist
        dist_name = dist.metadata["Name"] if dist is not None else "unknown"
        version = dist.version if dist is not None else "?"
        key = (ep.name, dist_name)
        if key in seen:  # the same dist can be visible twice on odd sys.paths
            continue
        seen.add(key)
        found.append(InstalledProvider(ep.name, dist_name, version, ep.value))
    return found


def _from_sources() -> list[InstalledProvider]:
    found: list[InstalledProvider] = []
    for name, ep in sorted(_source_entry_points().items()):
        try:
            source: ProviderSource = ep.load()
            listed = source.list()
        except Exception:  # a broken source must not hide the native providers
            log.warning("provider source %s failed to list its providers", name, exc_info=True)
            continue
        found.extend(listed)
    return found


def list_installed() -> list[InstalledProvider]:
    """Every provider, native and from provider sources, sorted by name then precedence.
    Duplicated names appear once per offer (the registry picks by precedence and refuses an
    ambiguous tie)."""
    found = _native() + _from_sources()
    return sorted(found, key=lambda p: (p.name, p.precedence, p.distribution))


def installed_names() -> list[str]:
    """Sorted unique provider names."""
    return sorted({p.name for p in list_installed()})


__all__ = [
    "ENTRY_POINT_GROUP",
    "NATIVE_ORIGIN",
    "SOURCE_GROUP",
    "InstalledProvider",
    "ProviderSource",
    "installed_names",
    "list_installed",
]
