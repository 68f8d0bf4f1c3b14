"""holographic's suite (hermes_core.testing.service_suite, no double): providers made in the
test's Hermes home and shut down after, any non-loopback socket fails the test."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from hermes_memory_holographic import HolographicProvider

from hermes_core.testing.properties import load_ci_profile
from hermes_core.testing.service_suite import ProviderSuite

pytest_plugins = ["hermes_core.testing.service_suite"]

load_ci_profile()  # CI replays the same hypothesis examples every run

provider_suite = ProviderSuite(HolographicProvider).fixture()


@pytest.fixture
def home(hermes_home: Path) -> Path:
    """The test's Hermes home (``HERMES_HOME`` points at it)."""
    return hermes_home
