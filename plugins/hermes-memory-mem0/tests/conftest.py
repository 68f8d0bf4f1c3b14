"""Fixtures: a tmp HERMES_HOME, sessions, providers, and a guard that refuses any socket
connection that is not loopback (the suite must run offline)."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

# mem0 reads these at import time: set them before anything imports mem0.
os.environ["MEM0_TELEMETRY"] = "False"
os.environ.setdefault("MEM0_DIR", tempfile.mkdtemp(prefix="mem0dir-"))

from hermes_memory_mem0 import Mem0Provider

from hermes_core.testing.properties import load_ci_profile
from hermes_core.testing.service_suite import ProviderSuite

pytest_plugins = ["hermes_core.testing.service_suite"]

load_ci_profile()  # CI replays the same hypothesis examples every run


provider_suite = ProviderSuite(
    Mem0Provider,
    env_names=("MEM0_API_KEY", "MEM0_HOST", "MEM0_MODE", "MEM0_USER_ID", "MEM0_AGENT_ID"),
).fixture()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Hermes home (``HERMES_HOME``); mem0 keeps the process's ``MEM0_DIR``."""
    made = tmp_path / "hermes"
    made.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(made))
    return made


@pytest.fixture
def provider_home(home: Path) -> Path:
    return home
