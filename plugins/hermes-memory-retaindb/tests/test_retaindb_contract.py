"""The provider contract and the service fault tests, against the loopback double of
RetainDB's Memory API (every request and response validated against the API description
derived from RetainDB's reference, see api/build_openapi.py)."""

from __future__ import annotations

from typing import Any, ClassVar

from hermes_memory_retaindb import RetainDBProvider
from retaindb_double import RetainDBDouble

from hermes_core.testing.loopback import LoopbackServer
from hermes_core.testing.service_faults import ServiceProviderContract

KEY = "rdb-test-key"


class TestRetainDBAgainstTheDouble(ServiceProviderContract):
    provider_class = RetainDBProvider
    key_setting = "RETAINDB_API_KEY"
    probe_tool: ClassVar[tuple[str, dict[str, Any]]] = ("retaindb_search", {"query": "editor"})
    setup_asks = ("api_key", "base_url", "project")

    def make_double(self) -> LoopbackServer:
        return RetainDBDouble(api_key=KEY).server

    def service_settings(self, base_url: str) -> dict[str, Any]:
        return {
            "base_url": base_url,
            "api_key": KEY,
            "retries": 0,
            "prefetch_wait": 0.5,
            "failure_threshold": self.breaker_threshold,
            "breaker_cooldown": self.breaker_cooldown,
        }
