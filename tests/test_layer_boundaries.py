"""House rule: no layer imports another layer (``hermes_core/layers/*``).

Shared needs go into ``types.py``, ``security/``, ``llm/``, ``fsutil.py`` or the Session; a
layer reaches another layer's tools only through the session.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import hermes_core.layers as layers_package
from hermes_core.plugins import BUILTIN_PLUGINS

LAYERS_ROOT = Path(layers_package.__file__).parent
LAYERS = sorted(p.name for p in LAYERS_ROOT.iterdir() if (p / "__init__.py").exists())


def test_every_builtin_layer_is_checked() -> None:
    assert sorted(path.split(".")[2] for path in BUILTIN_PLUGINS) == LAYERS
    assert len(LAYERS) == 5


def imported_layers(path: Path, package: str, root: Path = LAYERS_ROOT) -> set[str]:
    """Layers ``path`` imports, absolute (``hermes_core.layers.x``) or relative (``..x``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module:
                names = [node.module]
                if node.module == "hermes_core.layers":
                    names = [f"hermes_core.layers.{alias.name}" for alias in node.names]
            elif node.level >= 2:  # from ..other import x, from .. import other
                relative = path.parent
                for _ in range(node.level - 1):
                    relative = relative.parent
                base = ".".join(relative.relative_to(root.parent.parent).parts)
                if node.module:
                    names = [f"{base}.{node.module}"]
                else:
                    names = [f"{base}.{alias.name}" for alias in node.names]
        for name in names:
            parts = name.split(".")
            if parts[:2] == ["hermes_core", "layers"] and len(parts) > 2:
                found.add(parts[2])
    return found - {package}


@pytest.mark.parametrize("layer", LAYERS)
def test_layer_imports_no_other_layer(layer: str) -> None:
    offenders = {
        f"{path.relative_to(LAYERS_ROOT)}: {', '.join(sorted(other))}"
        for path in (LAYERS_ROOT / layer).rglob("*.py")
        if (other := imported_layers(path, layer))
    }
    assert offenders == set()


def test_the_checker_sees_every_import_form(tmp_path: Path) -> None:
    # the rule must be able to fail: each form of a cross-layer import is caught
    root = tmp_path / "hermes_core" / "layers"
    (root / "memory").mkdir(parents=True)
    sample = root / "memory" / "probe.py"
    forms = [
        "import hermes_core.layers.sessions.db",
        "from hermes_core.layers.skills import model",
        "from hermes_core.layers import review",
        "from ..compression import prune",
        "from .. import sessions",
    ]
    for form in forms:
        sample.write_text(form + "\n", encoding="utf-8")
        assert imported_layers(sample, "memory", root), form
    sample.write_text("from .store import MemoryStore\nfrom hermes_core import types\n")
    assert imported_layers(sample, "memory", root) == set()


def absolute_imports(path: Path) -> set[str]:
    """Modules ``path`` imports by absolute name (``from a.b import c`` gives ``a.b.c`` too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_shipped_code_imports_no_test_kit() -> None:
    """``hermes_core.testing`` is for tests: shipped code (the benchmarks too) imports what it
    needs from its real home (e.g. :mod:`hermes_core.llm.scripted_server`)."""
    package = LAYERS_ROOT.parent
    offenders = sorted(
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if "testing" not in path.relative_to(package).parts[:1]
        and any(
            name == "hermes_core.testing" or name.startswith("hermes_core.testing.")
            for name in absolute_imports(path)
        )
    )
    assert offenders == []
