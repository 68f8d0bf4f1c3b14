"""ProviderContract + the kit's service fault tests, against the loopback double."""

from __future__ import annotations

from typing import Any, ClassVar

from hermes_memory_openviking import OpenVikingProvider
from openviking_double import ROOT_KEY, OpenVikingDouble

from hermes_core.testing.loopback import LoopbackServer
from hermes_core.testing.service_faults import ServiceProviderContract


class TestOpenVikingContract(ServiceProviderContract):
    provider_class = OpenVikingProvider
    settings: ClassVar[dict[str, Any]] = {}
    key_setting = "OPENVIKING_API_KEY"
    probe_tool: ClassVar[tuple[str, dict[str, Any]]] = ("viking_search", {"query": "locker code"})
    setup_asks = ("url", "api_key", "account")

    def make_double(self) -> LoopbackServer:
        return OpenVikingDouble().server()

    def service_settings(self, base_url: str) -> dict[str, Any]:
        # commit every turn: the double's commit stands in for the server's extraction, so
        # a synced fact is recallable on the next turn (the default commits at session end)
        return {
            "url": base_url,
            "api_key": ROOT_KEY,
            "account": "acme",
            "retries": 0,
            "commit_every_turns": 1,
            "failure_threshold": self.breaker_threshold,
            "breaker_cooldown": self.breaker_cooldown,
        }
