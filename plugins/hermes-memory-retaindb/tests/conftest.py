"""RetainDB's suite (hermes_core.testing.service_suite): the loopback double of its Memory
API, the offline guard with RETAINDB_* cleared, providers and harnesses pointed at it."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from hermes_memory_retaindb import RetainDBProvider
from retaindb_double import RetainDBDouble

from hermes_core.testing.service_suite import ProviderSuite

pytest_plugins = ["hermes_core.testing.service_suite"]

KEY = "rdb-test-key"
SUITE = ProviderSuite(
    RetainDBProvider,
    double=lambda: RetainDBDouble(api_key=KEY),
    settings={"api_key": KEY, "retries": 0},
    key_env="RETAINDB_API_KEY",
    env_prefixes=("RETAINDB_",),
)
provider_suite = SUITE.fixture()
