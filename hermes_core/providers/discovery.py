"""List installed memory providers from entry points, **without importing them**.

Entry-point group ``hermes.memory_providers``; the entry-point name is the provider name.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points

ENTRY_POINT_GROUP = "hermes.memory_providers"


@dataclass(frozen=True, slots=True)
class InstalledProvider:
    """One entry point: provider name, the distribution offering it and its version."""

    name: str
    distribution: str
    version: str
    value: str

    def entry_point(self) -> EntryPoint:
        return EntryPoint(name=self.name, value=self.value, group=ENTRY_POINT_GROUP)


def list_installed() -> list[InstalledProvider]:
    """Every provider entry point, sorted by name. Duplicated names appear once per
    distribution (the registry refuses to activate an ambiguous name)."""
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
    return sorted(found, key=lambda p: (p.name, p.distribution))


def installed_names() -> list[str]:
    """Sorted unique provider names."""
    return sorted({p.name for p in list_installed()})


__all__ = ["ENTRY_POINT_GROUP", "InstalledProvider", "installed_names", "list_installed"]
