"""The provider contract and the service fault tests, against the Supermemory double."""

from __future__ import annotations

from typing import Any

from conftest import settings_for
from hermes_memory_supermemory import SupermemoryProvider
from supermemory_double import supermemory_double

from hermes_core.testing.loopback import LoopbackServer
from hermes_core.testing.service_faults import ServiceProviderContract


class TestSupermemoryContract(ServiceProviderContract):
    provider_class = SupermemoryProvider
    key_setting = "SUPERMEMORY_API_KEY"
    probe_tool = ("supermemory_search", {"query": "locker code"})
    breaker_fix_names = "SUPERMEMORY_API_KEY"
    setup_asks = ("api_key", "base_url", "container_tag")

    def make_double(self) -> LoopbackServer:
        return supermemory_double()[1]

    def service_settings(self, base_url: str) -> dict[str, Any]:
        return settings_for(
            base_url,
            api_timeout=self.prefetch_timeout,
            failure_threshold=self.breaker_threshold,
            breaker_cooldown=self.breaker_cooldown,
        )
