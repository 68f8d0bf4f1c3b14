"""Install one of our providers into a Hermes Agent environment as a Hermes Agent plugin.

``hermes-memory memory export-to-hermes-agent NAME`` writes ``$HERMES_HOME/plugins/<plugin>/``:

- ``vendor/``: our core and the provider, installed with ``pip install --no-deps --target``.
  pip puts a ``--target`` install's console scripts into ``vendor/bin``, never into the
  environment's ``bin/``, so **Hermes Agent's own ``hermes`` command cannot be replaced**;
- their third-party requirements (pydantic-settings, pluggy, chromadb, …) installed into the
  Hermes Agent environment with its own pip (none of them ships a ``hermes`` script);
- ``plugin.yaml`` (marked ``hermes_core_export``) and ``__init__.py`` whose ``register(ctx)``
  puts ``vendor/`` first on ``sys.path`` and registers
  :func:`hermes_core.compat.bridge_outbound.agent_provider`.

The environment's ``hermes`` script is fingerprinted before and after; a change is reported
as an error. The plugin is named ``hermes-core-<name>`` by default: Hermes Agent's bundled
providers (holographic, mem0, honcho, …) win over a user plugin of the same name.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import unicodedata
from dataclasses import dataclass, field
from email.parser import Parser
from pathlib import Path
from typing import Any

import yaml

from hermes_core.compat.bridge_discovery import EXPORT_MARKER
from hermes_core.compat.bridge_outbound import CORE_HOME_DIR
from hermes_core.errors import HermesError
from hermes_core.fsutil import atomic_write_text, read_regular_bytes, read_regular_text
from hermes_core.providers.sources import (
    CORE_DISTRIBUTION,
    PROVIDER_PREFIX,
    checkout_root,
    provider_dir,
)
from hermes_core.settings.base import read_config_file
from hermes_core.settings.files import LINE_SEPARATORS, set_config_value

PLUGIN_PREFIX = "hermes-core-"
CORE_PACKAGE_NAMES = frozenset({CORE_DISTRIBUTION, "hermes-core"})


class ExportError(HermesError):
    """The export could not complete; the message says what to fix."""


@dataclass
class ExportReport:
    """What :func:`export_provider` did."""

    provider: str
    plugin_name: str
    plugin_dir: Path
    python: str
    vendored: list[str] = field(default_factory=list)
    requirements: list[str] = field(default_factory=list)
    hermes_script: str | None = None
    hermes_script_unchanged: bool = True

    def as_dict(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "plugin_name": self.plugin_name,
            "plugin_dir": str(self.plugin_dir),
            "python": self.python,
            "vendored": self.vendored,
            "requirements": self.requirements,
            "hermes_script": self.hermes_script,
            "hermes_script_unchanged": self.hermes_script_unchanged,
        }


def provider_source(name: str, root: Path | None) -> str:
    """The checkout's ``plugins/hermes-memory-<name>``, else the registry name."""
    found = provider_dir(name, root)
    return str(found) if found is not None else f"{PROVIDER_PREFIX}{name}"


def core_source(root: Path | None) -> str:
    """The checkout, else the core's distribution name on the registry."""
    return str(root) if root is not None else CORE_DISTRIBUTION


def _run(cmd: list[str], what: str) -> str:
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-12:])
        raise ExportError(f"{what} failed (exit {proc.returncode}): {' '.join(cmd)}\n{tail}")
    return proc.stdout


def scripts_dir(python: str) -> Path:
    """The ``bin/`` (``Scripts\\``) directory of the environment of ``python``."""
    out = _run([python, "-c", "import sysconfig; print(sysconfig.get_path('scripts'))"], "probe")
    return Path(out.strip())


def fingerprint(path: Path) -> str | None:
    """sha256 of a file, ``None`` when absent."""
    try:
        return hashlib.sha256(read_regular_bytes(path, max_bytes=256 << 20)).hexdigest()
    except OSError:
        return None


def vendored_requirements(vendor: Path) -> tuple[list[str], list[str]]:
    """(distributions in ``vendor``, their requirements that are not among them), extras and
    markers for extras dropped."""
    names: list[str] = []
    reqs: list[str] = []
    for meta in sorted(vendor.glob("*.dist-info/METADATA")):
        msg = Parser().parsestr(read_regular_text(meta, max_bytes=4 << 20, what="METADATA"))
        names.append(str(msg["Name"]))
        for req in msg.get_all("Requires-Dist") or []:
            if "extra ==" in req.replace('"', "'").replace("extra=='", "extra == '"):
                continue
            reqs.append(req.strip())
    own = {_canonical(n) for n in names} | CORE_PACKAGE_NAMES
    keep = []
    for req in reqs:
        head = req.split(";")[0].split("@")[0]
        for sep in "<>=!~[ (":
            head = head.split(sep)[0]
        if _canonical(head) not in own and req not in keep:
            keep.append(req)
    return names, keep


def _vendored_version(vendor: Path, distribution: str) -> str:
    """The version of ``distribution`` as installed in ``vendor`` (``"0"`` if absent)."""
    for meta in vendor.glob("*.dist-info/METADATA"):
        msg = Parser().parsestr(read_regular_text(meta, max_bytes=4 << 20, what="METADATA"))
        if _canonical(str(msg["Name"])) == _canonical(distribution):
            return str(msg["Version"])
    return "0"


def _canonical(name: str) -> str:
    return name.strip().lower().replace("_", "-").replace(".", "-")


def plugin_init(provider: str, plugin_name: str) -> str:
    return f'''"""Hermes Agent memory provider plugin: hermes-core's {provider!r} provider.

Written by `hermes-memory memory export-to-hermes-agent {provider}`; do not edit (re-run it).
register(ctx) calls ctx.register_memory_provider with an adapter implementing Hermes Agent's
MemoryProvider over the hermes-core provider. hermes-core itself lives in ./vendor (pip
--target: no console script of ours reached this environment's bin/).
"""

import sys
from pathlib import Path

_VENDOR = str(Path(__file__).resolve().parent / "vendor")
if _VENDOR not in sys.path:
    sys.path.insert(0, _VENDOR)


def register(ctx):
    from hermes_core.compat.bridge_outbound import agent_provider

    ctx.register_memory_provider(agent_provider({provider!r}, {plugin_name!r}))
'''


_PLUGIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
_SETTING_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


def check_export_settings(settings: dict[str, Any]) -> None:
    """Raise ExportError naming the fix for a ``--set`` key that is not an identifier or a
    value holding a line break or another control character (a setting is one line), before
    the export writes anything."""
    for key, value in settings.items():
        if not isinstance(key, str) or not _SETTING_KEY.fullmatch(key):
            raise ExportError(
                f"--set {str(key)[:40]!r}: a setting name is letters, digits and '_' "
                "(e.g. --set top_k=8)"
            )
        stack: list[Any] = [value]
        while stack:
            item = stack.pop()
            if isinstance(item, dict):
                stack.extend(item.keys())
                stack.extend(item.values())
            elif isinstance(item, list):
                stack.extend(item)
            elif isinstance(item, str) and any(
                ch in LINE_SEPARATORS or unicodedata.category(ch) == "Cc" for ch in item
            ):
                raise ExportError(
                    f"--set {key}: the value holds a line break or control character; give "
                    f"it on one line (e.g. --set {key}=value); nothing was written"
                )
            elif item is not None and not isinstance(item, str | int | float | bool | dict | list):
                raise ExportError(f"--set {key}: unsupported value type {type(item).__name__}")


def check_export_paths(hermes_home: Path, plugins: Path, target: Path) -> None:
    """Raise ExportError naming the fix when the home, its ``plugins`` directory, the
    target plugin directory or ``hermes-core/`` is a symlink or not a directory."""
    for path in (hermes_home, plugins, target, hermes_home / CORE_HOME_DIR):
        if path.is_symlink():
            raise ExportError(
                f"{path} is a symlink; the export never writes through one. Remove it "
                f"(rm {path}) or pass --hermes-home with the real directory; nothing was written"
            )
        if path.exists() and not path.is_dir():
            raise ExportError(
                f"{path} exists and is not a directory; move it aside (mv {path} {path}.bad) "
                "and retry; nothing was written"
            )


def _swap_in(staging: Path, target: Path) -> None:
    """Replace ``target`` by ``staging`` so that a failure leaves the old directory."""
    if not target.exists():
        staging.rename(target)
        return
    old = target.with_name(f".{target.name}.old-{os.getpid()}")
    target.rename(old)
    try:
        staging.rename(target)
    except OSError:
        old.rename(target)
        raise
    shutil.rmtree(old, ignore_errors=True)


def export_provider(
    name: str,
    *,
    hermes_home: Path,
    python: str,
    plugin_name: str | None = None,
    settings: dict[str, Any] | None = None,
    install_requirements: bool = True,
    source: str | None = None,
    offline: bool = False,
    checkout: Path | None = None,
) -> ExportReport:
    """Write ``$HERMES_HOME/plugins/<plugin>/`` for our provider ``name`` (see the module
    docstring). Replaces an earlier export of the same plugin; raises ExportError.
    ``checkout``: a hermes-core checkout to take the core and the provider from (default:
    the one this code runs from, if any; else the registry). ``offline``: no package index
    and no build isolation (the build backend, hatchling, and every requirement must already
    be installed in that environment)."""
    no_net = ["--no-index", "--no-build-isolation"] if offline else []
    plugin = plugin_name or f"{PLUGIN_PREFIX}{name}"
    if not _PLUGIN_NAME.fullmatch(plugin):
        raise ExportError(
            f"invalid plugin name {plugin[:80]!r}: use 1-64 letters, digits, '-' or '_', "
            "starting with a letter or digit (e.g. --plugin-name hermes-core-chroma)"
        )
    check_export_settings(settings or {})  # every check runs before anything is written
    plugins = hermes_home / "plugins"
    target = plugins / plugin
    check_export_paths(hermes_home, plugins, target)
    read_config_file(hermes_home / CORE_HOME_DIR)  # a broken config.yaml is named now
    report = ExportReport(name, plugin, target, python)
    bin_dir = scripts_dir(python)
    script = bin_dir / "hermes"
    before = fingerprint(script)
    report.hermes_script = str(script) if before else None
    root = checkout if checkout is not None else checkout_root()
    if root is not None and not (root / "pyproject.toml").is_file():
        raise ExportError(f"{root} is not a hermes-core checkout (no pyproject.toml)")
    plugins.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{plugin}-", dir=plugins))
    try:
        vendor = staging / "vendor"
        _run(
            [
                python,
                "-m",
                "pip",
                "install",
                "-q",
                "--no-deps",
                "--no-compile",
                *no_net,
                "--target",
                str(vendor),
                core_source(root),
                source or provider_source(name, root),
            ],
            f"installing hermes-core and provider {name!r} into {vendor}",
        )
        report.vendored, report.requirements = vendored_requirements(vendor)
        if install_requirements and report.requirements:
            _run(
                [python, "-m", "pip", "install", "-q", *no_net, *report.requirements],
                "installing their requirements into the Hermes Agent environment",
            )
        version = _vendored_version(vendor, f"{PROVIDER_PREFIX}{name}")
        manifest = {
            "name": plugin,
            "version": version,
            "description": f"hermes-core memory provider '{name}' (exported from hermes-core)",
            "kind": "exclusive",
            EXPORT_MARKER: {"provider": name, "vendored": report.vendored},
        }
        atomic_write_text(staging / "plugin.yaml", yaml.safe_dump(manifest, sort_keys=False))
        atomic_write_text(staging / "__init__.py", plugin_init(name, plugin))
        _swap_in(staging, target)
    except OSError as exc:
        raise ExportError(
            f"could not write {target}: {exc.strerror or exc} — check that {plugins} is a "
            "writable directory (not a symlink) and retry; nothing was changed"
        ) from exc
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    home = hermes_home / CORE_HOME_DIR
    home.mkdir(parents=True, exist_ok=True)
    for key, value in (settings or {}).items():
        set_config_value(home, f"memory.providers.{name}.{key}", value)
    set_config_value(home, "memory.provider", name)
    after = fingerprint(script)
    report.hermes_script_unchanged = before == after
    if not report.hermes_script_unchanged:
        raise ExportError(
            f"{script} changed during the export: {json.dumps(report.as_dict())}. "
            "Reinstall Hermes Agent's command with `pip install --force-reinstall --no-deps "
            "hermes-agent` and report this."
        )
    return report


__all__ = [
    "PLUGIN_PREFIX",
    "ExportError",
    "ExportReport",
    "check_export_paths",
    "check_export_settings",
    "export_provider",
    "plugin_init",
    "vendored_requirements",
]
