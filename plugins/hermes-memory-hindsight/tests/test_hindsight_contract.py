"""The provider contract and the service fault tests: against the loopback double (validated
against Hindsight's OpenAPI document) and, in `tox -e providers-hindsight-server`, against
Hindsight's own server."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from conftest import SUITE
from hermes_memory_hindsight import HindsightProvider

from hermes_core.testing.contract import ProviderContract
from hermes_core.testing.harness import ProviderHarness
from hermes_core.testing.service_faults import ServiceProviderContract

ALL_TYPES = "world,experience,observation"


class TestHindsightAgainstTheDouble(ServiceProviderContract):
    suite = SUITE
    probe_tool: ClassVar[tuple[str, dict[str, Any]]] = ("hindsight_recall", {"query": "editor"})
    setup_asks = ("api_key", "api_url", "bank_id")
    contract_settings: ClassVar[dict[str, Any]] = {"prefetch_wait": 0.5}


class TestHindsightAgainstTheRealServer(ProviderContract):
    """Hindsight 1.1.0's own server (chunks mode, no LLM); skipped unless
    HERMES_TEST_HINDSIGHT_SERVER=1."""

    provider_class = HindsightProvider

    @pytest.fixture
    def harness(self, hermes_home: Path, real_server: str) -> Iterator[ProviderHarness]:
        settings = {
            "api_url": real_server,
            "bank_id": f"contract-{uuid.uuid4().hex[:8]}",
            "recall_types": ALL_TYPES,
            "retain_async": False,
            "prefetch_wait": 10.0,
            "recall_sync": True,
        }
        made = ProviderHarness(self.provider_class, hermes_home, settings)
        yield made
        made.close()
