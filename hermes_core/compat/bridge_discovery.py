"""Find memory providers written for Hermes Agent where Hermes Agent finds them.

Three places, listed **without importing any provider**:

- ``$HERMES_HOME/plugins/<name>/``: a directory with ``__init__.py`` (and usually
  ``plugin.yaml``) whose source mentions ``register_memory_provider`` or ``MemoryProvider``
  (Hermes Agent's own test; ``plugin.yaml`` is read as YAML, the code as text);
- entry points of group ``hermes_agent.memory_providers`` (the name is the provider name);
- entry points of group ``hermes_agent.plugins`` whose module source, read from the
  distribution's files, passes the same test (other kinds of Hermes Agent plugins are skipped).

Precedence on a name clash (lower wins): our own providers (0), a plugin directory (1), a
``hermes_agent.memory_providers`` entry point (2), a ``hermes_agent.plugins`` one (3).
Directories written by ``hermes-memory memory export-to-hermes-agent`` (our providers wrapped for
Hermes Agent, marked in ``plugin.yaml``) are skipped: they are ours already.
"""

from __future__ import annotations

import logging
import os
from importlib.metadata import Distribution, EntryPoint, entry_points
from pathlib import Path
from typing import Any

import yaml

from hermes_core.fsutil import read_regular_text
from hermes_core.providers.discovery import InstalledProvider
from hermes_core.yamlsafe import read_yaml_file

log = logging.getLogger(__name__)

SOURCE_NAME = "hermes-agent"
PLUGIN_GROUP = "hermes_agent.plugins"
MEMORY_GROUP = "hermes_agent.memory_providers"
EXPORT_MARKER = "hermes_core_export"
"""Key in the ``plugin.yaml`` of a directory we wrote for Hermes Agent."""

ORIGIN_DIR = "hermes-agent plugin dir"
ORIGIN_MEMORY_EP = "hermes-agent entry point (hermes_agent.memory_providers)"
ORIGIN_PLUGIN_EP = "hermes-agent entry point (hermes_agent.plugins)"

_SCAN_CHARS = 8192
MANIFEST_MAX_BYTES = 256 * 1024
"""A ``plugin.yaml`` larger than this is skipped unread (real ones are a few lines)."""
_MARKERS = ("register_memory_provider", "MemoryProvider")


def plugins_dir(home: Path | None = None) -> Path:
    """``$HERMES_HOME/plugins`` (``~/.hermes/plugins`` when HERMES_HOME is unset)."""
    if home is None:
        raw = os.environ.get("HERMES_HOME", "").strip()
        home = Path(raw).expanduser() if raw else Path.home() / ".hermes"
    return home / "plugins"


def looks_like_memory_provider(source: str) -> bool:
    """Hermes Agent's own test on the first 8 KiB of a plugin's ``__init__.py``."""
    head = source[:_SCAN_CHARS]
    return any(marker in head for marker in _MARKERS)


def read_manifest(directory: Path) -> dict[str, Any]:
    """``plugin.yaml`` as a dict (``{}`` when missing or unreadable)."""
    path = directory / "plugin.yaml"
    try:
        data = read_yaml_file(path, max_bytes=MANIFEST_MAX_BYTES, what="plugin manifest")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError, ValueError, RecursionError) as exc:
        log.warning("%s skipped: %s", path, exc)
        return {}
    return data if isinstance(data, dict) else {}


def _plugin_dirs(root: Path) -> list[InstalledProvider]:
    if not root.is_dir():
        return []
    found: list[InstalledProvider] = []
    for child in sorted(root.iterdir()):
        if not child.is_dir() or child.name.startswith(("_", ".")):
            continue
        init = child / "__init__.py"
        try:
            source = read_regular_text(
                init, max_bytes=_SCAN_CHARS * 4, what="plugin module", errors="replace", head=True
            )
        except FileNotFoundError:
            continue
        except OSError as exc:
            log.warning("%s skipped: %s", init, exc)
            continue
        if not looks_like_memory_provider(source):
            continue
        manifest = read_manifest(child)
        if manifest.get(EXPORT_MARKER):
            continue
        version = str(manifest.get("version") or "?")
        found.append(
            InstalledProvider(
                name=child.name,
                distribution=str(child),
                version=version,
                value=str(child),
                origin=ORIGIN_DIR,
                source=SOURCE_NAME,
                precedence=1,
            )
        )
    return found


def _module_source(dist: Distribution | None, module: str) -> str | None:
    """The text of ``module`` (package ``__init__.py`` or ``.py`` file) from ``dist``'s
    files, without importing it; ``None`` when it cannot be located."""
    if dist is None:
        return None
    parts = module.split(".")
    wanted = {"/".join(parts) + "/__init__.py", "/".join(parts) + ".py"}
    for file in dist.files or ():
        if str(file).replace("\\", "/") in wanted:
            try:
                return read_regular_text(
                    Path(str(file.locate())),
                    max_bytes=_SCAN_CHARS * 4,
                    what="plugin module",
                    errors="replace",
                    head=True,
                )
            except OSError:
                return None
    return None


def _entry_point_offer(ep: EntryPoint, origin: str, precedence: int) -> InstalledProvider:
    dist = ep.dist
    return InstalledProvider(
        name=ep.name,
        distribution=dist.metadata["Name"] if dist is not None else "unknown",
        version=dist.version if dist is not None else "?",
        value=f"{ep.group}={ep.value}",
        origin=origin,
        source=SOURCE_NAME,
        precedence=precedence,
    )


def _entry_points() -> list[InstalledProvider]:
    found: list[InstalledProvider] = []
    for ep in entry_points(group=MEMORY_GROUP):
        found.append(_entry_point_offer(ep, ORIGIN_MEMORY_EP, 2))
    for ep in entry_points(group=PLUGIN_GROUP):
        text = _module_source(ep.dist, ep.module)
        if text is None or not looks_like_memory_provider(text):
            continue  # a Hermes Agent plugin of another kind (tools, hooks, platforms)
        found.append(_entry_point_offer(ep, ORIGIN_PLUGIN_EP, 3))
    return found


def list_hermes_agent_providers(home: Path | None = None) -> list[InstalledProvider]:
    """Every Hermes Agent memory provider found, unimported, deduplicated per place."""
    found = _plugin_dirs(plugins_dir(home)) + _entry_points()
    unique: dict[tuple[str, str, str], InstalledProvider] = {}
    for offer in found:
        unique.setdefault((offer.name, offer.distribution, offer.origin), offer)
    return list(unique.values())


def entry_point_of(provider: InstalledProvider) -> EntryPoint:
    """The entry point behind an entry-point offer (``value`` is ``group=target``)."""
    group, _, value = provider.value.partition("=")
    return EntryPoint(name=provider.name, value=value, group=group)


__all__ = [
    "EXPORT_MARKER",
    "MEMORY_GROUP",
    "ORIGIN_DIR",
    "ORIGIN_MEMORY_EP",
    "ORIGIN_PLUGIN_EP",
    "PLUGIN_GROUP",
    "SOURCE_NAME",
    "entry_point_of",
    "list_hermes_agent_providers",
    "looks_like_memory_provider",
    "plugins_dir",
    "read_manifest",
]
