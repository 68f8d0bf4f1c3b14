"""Honcho's suite: its double serves the Honcho v3 API on 127.0.0.1; the settings every test
starts from use a session per Hermes session (hermes_core.testing.service_suite)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from hermes_memory_honcho import HonchoProvider
from honcho_double import HonchoDouble

from hermes_core.testing.service_suite import ProviderSuite

pytest_plugins = ["hermes_core.testing.service_suite"]

SUITE = ProviderSuite(
    HonchoProvider,
    double=HonchoDouble,
    settings={
        "api_key": "test-key",
        "timeout": 3.0,
        "retries": 0,
        "session_strategy": "per-session",
    },
    timeout_setting="timeout",
    key_env="HONCHO_API_KEY",
)

provider_suite = SUITE.fixture()
