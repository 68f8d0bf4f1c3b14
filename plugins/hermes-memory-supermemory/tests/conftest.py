"""Supermemory's suite (hermes_core.testing.service_suite): the double of its v3/v4 API on
127.0.0.1 and the settings each test starts from."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from hermes_memory_supermemory import SupermemoryProvider
from supermemory_double import SupermemoryDouble

from hermes_core.testing.service_suite import ProviderSuite

pytest_plugins = ["hermes_core.testing.service_suite"]

SUITE = ProviderSuite(
    SupermemoryProvider,
    double=SupermemoryDouble,
    settings={"api_key": "test-key", "api_timeout": 3.0, "retries": 0},
    timeout_setting="api_timeout",
    key_env="SUPERMEMORY_API_KEY",
)

provider_suite = SUITE.fixture()
