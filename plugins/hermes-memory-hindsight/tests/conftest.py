"""Hindsight's suite (hermes_core.testing.service_suite: offline guard, HINDSIGHT_* cleared,
the loopback double, providers and harnesses on it) and, in `tox -e providers-hindsight-server`,
Hindsight's real server."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_core.testing.service_suite import ProviderSuite

sys.path.insert(0, str(Path(__file__).parent))

from hermes_memory_hindsight import HindsightProvider
from hindsight_double import HindsightDouble

REAL_SERVER_ENV = "HERMES_TEST_HINDSIGHT_SERVER"
"""Set to 1 to run the real-server tests; they then fail (never skip) if it cannot start."""


pytest_plugins = ["hermes_core.testing.service_suite"]

KEY = "hs-test-key"
SUITE = ProviderSuite(
    HindsightProvider,
    double=lambda: HindsightDouble(api_key=KEY),
    url_setting="api_url",
    settings={"api_key": KEY, "recall_types": "world,experience,observation", "retries": 0},
    key_env="HINDSIGHT_API_KEY",
    env_prefixes=("HINDSIGHT_",),
)
provider_suite = SUITE.fixture()


@pytest.fixture(scope="session")
def real_server() -> Iterator[str]:
    """The URL of Hindsight's own server (started once per test run)."""
    if os.environ.get(REAL_SERVER_ENV) != "1":
        pytest.skip(
            f"real Hindsight server tests run with {REAL_SERVER_ENV}=1 "
            "(tox -e providers-hindsight-server)"
        )
    from hindsight_server import start_server

    server = start_server()
    try:
        yield server.url
    finally:
        server.stop()
