"""Fixtures: a fake ``brv`` first on PATH for every test, and a guard that refuses any
socket connection that is not loopback (the suite must run offline)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from hermes_core.testing.offline import block_network

sys.path.insert(0, str(Path(__file__).parent))

from fake_brv import FakeBrv


@pytest.fixture(autouse=True)
def fake_brv(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> FakeBrv:
    """The fake brv, first on PATH; ``BRV_API_KEY`` cleared."""
    block_network(monkeypatch)
    fake = FakeBrv(tmp_path_factory.mktemp("brvbin"))
    monkeypatch.setenv("PATH", f"{fake.path.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    for key, value in fake.env().items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("BRV_API_KEY", raising=False)
    return fake
