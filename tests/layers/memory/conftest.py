"""Fixtures of the memory layer tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from memkit import MemoryKit


@pytest.fixture
def kit_factory(hermes_home: Path) -> Callable[..., MemoryKit]:
    def make(**memory: Any) -> MemoryKit:
        return MemoryKit(hermes_home, **memory)

    return make


@pytest.fixture
def kit(kit_factory: Callable[..., MemoryKit]) -> MemoryKit:
    return kit_factory()
