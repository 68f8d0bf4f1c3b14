"""holographic's suite (hermes_core.testing.service_suite, no double): providers made in the
test's Hermes home and shut down after, any non-loopback socket fails the test."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from hermes_memory_holographic import HolographicProvider

from hermes_core.testing.service_suite import ProviderSuite

pytest_plugins = ["hermes_core.testing.service_suite"]

# CI replays the same hypothesis examples every run (CI=true): a failure there is a real,
# reproducible one, never a lucky draw; local runs keep exploring new examples.
if os.environ.get("CI"):
    from hypothesis import settings as _hypothesis_settings

    _hypothesis_settings.register_profile("ci", derandomize=True, print_blob=True)
    _hypothesis_settings.load_profile("ci")

provider_suite = ProviderSuite(HolographicProvider).fixture()


@pytest.fixture
def home(hermes_home: Path) -> Path:
    """The test's Hermes home (``HERMES_HOME`` points at it)."""
    return hermes_home
