"""The review layer imports no other layer (it reaches tools only through the session)."""

from __future__ import annotations

import ast
from pathlib import Path

import hermes_core.layers.review as review

ROOT = Path(review.__file__).parent


def test_no_other_layer_is_imported() -> None:
    offenders = []
    for path in ROOT.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                if name.startswith("hermes_core.layers.") and not name.startswith(
                    "hermes_core.layers.review"
                ):
                    offenders.append(f"{path.name}: {name}")
    assert offenders == []
