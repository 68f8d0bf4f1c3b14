"""The memory layer never imports another layer (house rule)."""

from __future__ import annotations

import ast
from pathlib import Path

import hermes_core.layers.memory as layer


def test_no_imports_of_other_layers() -> None:
    offenders = []
    for path in Path(layer.__file__).parent.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                if name.startswith("hermes_core.layers.") and not name.startswith(
                    "hermes_core.layers.memory"
                ):
                    offenders.append(f"{path.name}: {name}")
    assert offenders == []
