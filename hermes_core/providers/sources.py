"""Where ``hermes-memory install NAME`` gets a package: this checkout's own providers, else the
registry.

The core's distribution is :data:`CORE_DISTRIBUTION` (``hermes-memory-core``; the import
package is ``hermes_core``, the command ``hermes-memory``). Our providers are the distributions
``hermes-memory-<name>`` in ``plugins/`` of a hermes-core checkout (and the template
``hermes-memory-example`` in ``contrib/provider-template``); each requires
``hermes-memory-core>=0.1,<0.2``, never a path, so its wheel is publishable.

Contract:

* :func:`checkout_root` is the checkout ``hermes_core`` was imported from (an editable or
  path install of this repository), or ``None`` for an install from a wheel.
* :func:`resolve` maps each requested name (``chroma``, ``hermes-memory-chroma``, a path, a
  registry requirement) to what pip should install: one of our providers resolves to its
  directory in the checkout when there is one, anything else is passed on unchanged.
* :func:`install_hint` is the command that installs a provider name, and only names things
  that exist: a directory of this checkout, or ``hermes-memory install`` of a name we ship.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from hermes_core.fsutil import read_regular_text

CORE_DISTRIBUTION = "hermes-memory-core"
PROVIDER_PREFIX = "hermes-memory-"
OUR_PROVIDERS = (
    "byterover",
    "chroma",
    "hindsight",
    "holographic",
    "honcho",
    "mem0",
    "openviking",
    "retaindb",
    "supermemory",
)
"""The providers this repository ships under ``plugins/hermes-memory-<name>``."""
TEMPLATE = ("example", "contrib/provider-template")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9_,.-]+\])?$")


def checkout_root() -> Path | None:
    """The repository checkout ``hermes_core`` runs from, or ``None``."""
    root = Path(__file__).resolve().parent.parent.parent
    project = root / "pyproject.toml"
    if not project.is_file() or not (root / "plugins").is_dir():
        return None
    try:
        text = read_regular_text(project, max_bytes=1 << 20, what="pyproject.toml")
    except (OSError, UnicodeDecodeError):
        return None
    return root if f'name = "{CORE_DISTRIBUTION}"' in text else None


def _split_extras(spec: str) -> tuple[str, str]:
    if spec.endswith("]") and "[" in spec:
        base, _, extras = spec.partition("[")
        return base, "[" + extras
    return spec, ""


def provider_dir(name: str, root: Path | None = None) -> Path | None:
    """``plugins/hermes-memory-<name>`` (or the template) in the checkout, if it is there."""
    root = root if root is not None else checkout_root()
    if root is None:
        return None
    short = name.removeprefix(PROVIDER_PREFIX)
    if short == TEMPLATE[0]:
        path = root / TEMPLATE[1]
    else:
        path = root / "plugins" / f"{PROVIDER_PREFIX}{short}"
    return path if (path / "pyproject.toml").is_file() else None


@dataclass(frozen=True, slots=True)
class Resolved:
    """One requested name and what pip installs for it (``origin``: checkout/registry/path)."""

    requested: str
    target: str
    origin: str


def resolve(names: tuple[str, ...] | list[str], root: Path | None = None) -> list[Resolved]:
    """What pip should install for each requested name (see the module contract)."""
    root = root if root is not None else checkout_root()
    out: list[Resolved] = []
    for spec in names:
        if Path(spec).expanduser().exists() or "/" in spec or spec.startswith("."):
            out.append(Resolved(spec, spec, "path"))
            continue
        base, extras = _split_extras(spec)
        local = provider_dir(base, root) if _NAME.match(spec) else None
        if local is not None:
            out.append(Resolved(spec, f"{local}{extras}", "checkout"))
        else:
            out.append(Resolved(spec, spec, "registry"))
    return out


def install_hint(name: str) -> str:
    """One sentence saying how to install provider ``name``; it names only things that exist
    (a directory of this checkout, or a provider this repository ships)."""
    short = name.removeprefix(PROVIDER_PREFIX)
    if provider_dir(short) is not None:
        return (
            f"Install it with `hermes-memory install {PROVIDER_PREFIX}{short}` "
            "(from this checkout)."
        )
    if short in OUR_PROVIDERS:
        return (
            f"Install it with `hermes-memory install {PROVIDER_PREFIX}{short}` run from a "
            f"checkout of "
            f"the hermes-core repository (plugins/{PROVIDER_PREFIX}{short})."
        )
    return (
        f"No provider called '{short}' ships with hermes-core (ours: {', '.join(OUR_PROVIDERS)}); "
        "install the package that provides it with `hermes-memory install <package>`."
    )


__all__ = [
    "CORE_DISTRIBUTION",
    "OUR_PROVIDERS",
    "PROVIDER_PREFIX",
    "Resolved",
    "checkout_root",
    "install_hint",
    "provider_dir",
    "resolve",
]
