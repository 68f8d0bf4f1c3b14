"""A package's public names loaded on first use (PEP 562 module ``__getattr__``).

Each layer's ``__init__`` declares its face as ``__all__`` plus a map of public name ->
defining module, and sets ``__getattr__ = lazy_names(__name__, homes)``: importing the package
imports nothing else, and a name is imported (then cached on the package) when first used.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(
    package: str, homes: Mapping[str, str], aliases: Mapping[str, str] | None = None
) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: ``homes[name]`` is the submodule defining
    ``name`` (under the name ``aliases.get(name, name)`` there); other names raise
    ``AttributeError``."""
    renamed = dict(aliases or {})

    def __getattr__(name: str) -> Any:
        module = homes.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{module}", package), renamed.get(name, name))
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__


__all__ = ["lazy_names"]
