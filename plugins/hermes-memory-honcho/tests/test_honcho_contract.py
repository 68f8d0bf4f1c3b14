"""The provider contract and the service fault tests, against the Honcho double."""

from __future__ import annotations

from conftest import SUITE

from hermes_core.testing.service_faults import ServiceProviderContract


class TestHonchoContract(ServiceProviderContract):
    suite = SUITE
    probe_tool = ("honcho_search", {"query": "locker code"})
    setup_asks = ("api_key", "base_url", "workspace")
