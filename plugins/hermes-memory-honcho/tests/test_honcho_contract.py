"""The provider contract and the service fault tests, against the Honcho double."""

from __future__ import annotations

from typing import Any

from conftest import settings_for
from hermes_memory_honcho import HonchoProvider
from honcho_double import honcho_double

from hermes_core.testing.loopback import LoopbackServer
from hermes_core.testing.service_faults import ServiceProviderContract


class TestHonchoContract(ServiceProviderContract):
    provider_class = HonchoProvider
    key_setting = "HONCHO_API_KEY"
    probe_tool = ("honcho_search", {"query": "locker code"})
    breaker_fix_names = "HONCHO_API_KEY"
    setup_asks = ("api_key", "base_url", "workspace")

    def make_double(self) -> LoopbackServer:
        return honcho_double()[1]

    def service_settings(self, base_url: str) -> dict[str, Any]:
        return settings_for(
            base_url,
            timeout=self.prefetch_timeout,
            failure_threshold=self.breaker_threshold,
            breaker_cooldown=self.breaker_cooldown,
        )
