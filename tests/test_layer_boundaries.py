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


OUTSIDE = ("cli", "mcp", "compat", "agent", "bench", "host.py", "hooks.py")
"""Code outside the layers that uses them: it sees each layer only through its public face."""


def past_the_face(path: Path) -> list[str]:
    """Imports in ``path`` that reach past a layer's public face: a layer module
    (``hermes_core.layers.x.y``), or a name missing from ``hermes_core.layers.x.__all__``."""
    import importlib

    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [
                alias.name
                for alias in node.names
                if alias.name.startswith("hermes_core.layers.") and alias.name.count(".") > 2
            ]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            parts = node.module.split(".")
            if parts[:2] != ["hermes_core", "layers"] or len(parts) < 3:
                continue
            if len(parts) > 3:
                found.append(node.module)
                continue
            face = set(importlib.import_module(node.module).__all__)
            found += [f"{node.module}.{a.name}" for a in node.names if a.name not in face]
    return found


def test_outside_code_imports_layers_only_through_their_face() -> None:
    package = LAYERS_ROOT.parent
    paths: list[Path] = []
    for place in OUTSIDE:
        target = package / place
        paths += [target] if target.is_file() else sorted(target.rglob("*.py"))
    assert len(paths) > 20
    offenders = {
        f"{path.relative_to(package)}: {', '.join(bad)}"
        for path in paths
        if (bad := past_the_face(path))
    }
    assert offenders == set()


@pytest.mark.parametrize("layer", LAYERS)
def test_every_face_name_resolves(layer: str) -> None:
    import importlib

    module = importlib.import_module(f"hermes_core.layers.{layer}")
    for name in module.__all__:
        value = getattr(module, name)
        assert not isinstance(value, type(module)), f"{layer}.{name} is a module"


def test_the_face_check_can_fail(tmp_path: Path) -> None:
    sample = tmp_path / "probe.py"
    sample.write_text(
        "from hermes_core.layers.memory.engine import MemoryEngine\n"
        "import hermes_core.layers.sessions.db\n"
        "from hermes_core.layers.skills import not_public\n"
        "from hermes_core.layers.memory import MemoryEngine\n",
        encoding="utf-8",
    )
    assert past_the_face(sample) == [
        "hermes_core.layers.memory.engine",
        "hermes_core.layers.sessions.db",
        "hermes_core.layers.skills.not_public",
    ]


STORAGE_DRIVERS = ("sqlite3", "psycopg", "psycopg_pool")
"""Database drivers: only the layers (and the modules they share) talk to them."""

BACKEND_NAMES = frozenset({"sqlite", "postgresql", "postgres", "files"})
"""Storage kinds a layer decides on (``sessions.backend``, ``memory.store``)."""

BACKEND_CLASSES = frozenset(
    {"SessionDB", "PostgresSessionDB", "MemoryStore", "PostgresMemoryStore", "FilesBackend"}
    | {"PostgresBackend"}
)
"""Storage implementations behind a layer's face: the CLI never asks which one it holds."""


def _is_text_of(node: ast.expr) -> bool:
    """``str(x)`` / ``repr(x)`` / ``x.args`` / ``x.message``: the text of an error."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return node.func.id in ("str", "repr")
    return isinstance(node, ast.Attribute) and node.attr in ("args", "message")


def cli_logic(path: Path) -> list[str]:
    """Layer logic in a CLI module ``path``: a storage driver imported, a comparison with a
    storage backend name, an ``isinstance`` check against a storage class, or a hint chosen
    by matching an error's text (``"x" in str(exc)``, ``str(exc).startswith(…)``,
    ``re.search(…, str(exc))``)."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
            )
            found += [f"{line}: imports {n}" for n in names if n.split(".")[0] in STORAGE_DRIVERS]
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            for side in sides:
                values = side.elts if isinstance(side, ast.Tuple | ast.List | ast.Set) else [side]
                if any(isinstance(v, ast.Constant) and v.value in BACKEND_NAMES for v in values):
                    found.append(f"{line}: compares with a backend name")
            if any(isinstance(op, ast.In | ast.NotIn) for op in node.ops) and any(
                _is_text_of(c) for c in node.comparators
            ):
                found.append(f"{line}: matches an error's text")
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id == "isinstance" and len(node.args) == 2:
                classes = node.args[1]
                members = classes.elts if isinstance(classes, ast.Tuple) else [classes]
                if any(isinstance(m, ast.Name) and m.id in BACKEND_CLASSES for m in members):
                    found.append(f"{line}: asks which storage class it holds")
            if (
                isinstance(func, ast.Attribute)
                and func.attr in ("startswith", "endswith", "find", "count")
                and _is_text_of(func.value)
            ):
                found.append(f"{line}: matches an error's text")
            if (
                isinstance(func, ast.Attribute)
                and isinstance(func.value, ast.Name)
                and func.value.id == "re"
                and any(_is_text_of(a) for a in node.args)
            ):
                found.append(f"{line}: matches an error's text")
    return found


def test_the_cli_only_parses_and_prints() -> None:
    """The CLI holds no layer logic of the kinds that crept in before: storage drivers,
    branches on a backend name or class, hints picked by matching error text (a layer raises
    a typed error whose message carries the hint)."""
    cli = LAYERS_ROOT.parent / "cli"
    paths = sorted(cli.rglob("*.py"))
    assert len(paths) > 15
    offenders = {
        f"{path.relative_to(cli)}: {finding}" for path in paths for finding in cli_logic(path)
    }
    assert offenders == set()


def test_the_cli_logic_check_can_fail(tmp_path: Path) -> None:
    samples = {
        "import sqlite3\n": "imports sqlite3",
        "from psycopg import errors\n": "imports psycopg",
        "if settings.store == 'postgresql':\n    pass\n": "backend name",
        "if backend in ('sqlite', 'x'):\n    pass\n": "backend name",
        "if isinstance(db, SessionDB):\n    pass\n": "storage class",
        "if 'locked' in str(exc):\n    pass\n": "error's text",
        "if str(exc).startswith('no such'):\n    pass\n": "error's text",
        "if re.search('disk', str(exc)):\n    pass\n": "error's text",
        "if 'x' in exc.args:\n    pass\n": "error's text",
    }
    probe = tmp_path / "probe.py"
    for source, expected in samples.items():
        probe.write_text(source, encoding="utf-8")
        found = cli_logic(probe)
        assert len(found) == 1 and expected in found[0], (source, found)
    probe.write_text("text = str(exc)\nif mode == 'full':\n    pass\n", encoding="utf-8")
    assert cli_logic(probe) == []
