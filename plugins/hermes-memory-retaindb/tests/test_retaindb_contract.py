"""The provider contract and the service fault tests, against the loopback double of
RetainDB's Memory API (every request and response validated against the API description
derived from RetainDB's reference, see api/build_openapi.py)."""

from __future__ import annotations

from typing import Any, ClassVar

from conftest import SUITE

from hermes_core.testing.service_faults import ServiceProviderContract


class TestRetainDBAgainstTheDouble(ServiceProviderContract):
    suite = SUITE
    probe_tool: ClassVar[tuple[str, dict[str, Any]]] = ("retaindb_search", {"query": "editor"})
    setup_asks = ("api_key", "base_url", "project")
    contract_settings: ClassVar[dict[str, Any]] = {"prefetch_wait": 0.5}
