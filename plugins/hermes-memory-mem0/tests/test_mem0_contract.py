"""The shared provider contract, run against mem0 in oss mode (real mem0ai, offline), and the
service frame's checks against modes host and platform (the loopback mem0 server)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from fake_mem0 import FakeMem0Server
from hermes_memory_mem0.provider import Mem0Provider

from hermes_core.testing.contract import ProviderContract
from hermes_core.testing.harness import ProviderHarness
from hermes_core.testing.service_frame import ServiceFrameChecks


class TestMem0Contract(ProviderContract):
    provider_class = Mem0Provider
    settings: ClassVar[dict[str, Any]] = {"mode": "oss"}


class TestMem0RemoteFrame(ServiceFrameChecks):
    """Modes host and platform are built on the service frame."""

    provider_class = Mem0Provider
    probe_tool = ("mem0_search", {"query": "build server"})
    breaker_threshold = 5  # mem0's breaker opens after 5 consecutive failures

    @pytest.fixture(params=["host", "platform"])
    def service(self, request: pytest.FixtureRequest) -> Iterator[FakeMem0Server]:
        with FakeMem0Server(request.param, api_key="m0-key") as server:
            yield server

    @pytest.fixture
    def service_harness(
        self, hermes_home: Path, service: FakeMem0Server
    ) -> Iterator[ProviderHarness]:
        where = "host" if service.flavor == "host" else "platform_url"
        settings = {"mode": service.flavor, where: service.url, "api_key": "m0-key"}
        made = ProviderHarness(Mem0Provider, hermes_home, settings)
        yield made
        made.close()

    def fail_service(self, harness: ProviderHarness, request: pytest.FixtureRequest) -> None:
        request.getfixturevalue("service").fail_next(1000, 503)
