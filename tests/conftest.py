"""Shared test helpers. The hermes test kit fixtures come from the pytest11 plugin."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

# CI replays the same hypothesis examples every run (CI=true): a failure there is a real,
# reproducible one, never a lucky draw; local runs keep exploring new examples.
if os.environ.get("CI"):
    from hypothesis import settings as _hypothesis_settings

    _hypothesis_settings.register_profile("ci", derandomize=True, print_blob=True)
    _hypothesis_settings.load_profile("ci")


@pytest.fixture
def fake_distribution(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[..., Path]]:
    """``fake_distribution(name, providers={"ep": "module:Class"}, modules={"mod": "source"})``

    Writes a real ``*.dist-info`` (METADATA + entry_points.txt) and optional modules into a
    directory on ``sys.path``, so ``importlib.metadata`` discovers the entry points exactly as
    it would for an installed package.
    """
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    created_modules: list[str] = []

    def make(
        name: str,
        version: str = "1.0",
        providers: dict[str, str] | None = None,
        modules: dict[str, str] | None = None,
    ) -> Path:
        info = root / f"{name.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8"
        )
        lines = ["[hermes.memory_providers]"]
        lines += [f"{ep} = {target}" for ep, target in (providers or {}).items()]
        (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        for module, source in (modules or {}).items():
            (root / f"{module}.py").write_text(source, encoding="utf-8")
            created_modules.append(module)
        return info

    yield make
    for module in created_modules:
        sys.modules.pop(module, None)
