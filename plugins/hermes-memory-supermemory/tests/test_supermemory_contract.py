"""The provider contract and the service fault tests, against the Supermemory double."""

from __future__ import annotations

from conftest import SUITE

from hermes_core.testing.service_faults import ServiceProviderContract


class TestSupermemoryContract(ServiceProviderContract):
    suite = SUITE
    probe_tool = ("supermemory_search", {"query": "locker code"})
    setup_asks = ("api_key", "base_url", "container_tag")
