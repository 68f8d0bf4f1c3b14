"""``ServiceFrameChecks``: what every provider built on
:class:`~hermes_core.providers.service.ServiceProvider` must show, whatever its API.

Mixed into :class:`~hermes_core.testing.service_faults.ServiceProviderContract` (so every
service plugin's suite runs it); a provider without a loopback double (a CLI) subclasses it
with its own ``service_harness`` fixture and sets ``breaker_fault`` to None. The checks:

* the provider is a ``ServiceProvider`` and builds its client lazily (constructing it,
  ``is_available`` and ``health_check`` make no call);
* a write while the service fails never raises, and what the provider could not deliver is
  counted by ``unsent_writes()``;
* after ``shutdown`` (twice) ``api()`` raises ``ServiceError`` and every tool answers a
  failure in the one shape (``"success": false``);
* an open circuit breaker shows in ``health_check`` (a failing check named
  ``"<name> circuit breaker"``), and the breaker blocks further calls.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from hermes_core.providers.service import ServiceError, ServiceProvider
from hermes_core.testing.harness import ProviderHarness
from hermes_core.tool_results import check_result_shape, reports_failure
from hermes_core.types import HealthCheck, ToolContext, ToolSpec


class ServiceFrameChecks:
    """Frame checks; needs a ``service_harness`` fixture and a ``probe_tool``."""

    provider_class: ClassVar[type[Any]]
    probe_tool: ClassVar[tuple[str, dict[str, Any]]]
    breaker_threshold: ClassVar[int] = 3

    def provider_of(self, harness: ProviderHarness) -> ServiceProvider[Any, Any]:
        provider = harness.provider
        assert isinstance(provider, ServiceProvider), (
            f"{type(provider).__name__} is not built on hermes_core.providers.service."
            "ServiceProvider"
        )
        return provider

    def fail_service(self, harness: ProviderHarness, request: pytest.FixtureRequest) -> None:
        """Make every call fail as unavailable (default: the double answers 503)."""
        request.getfixturevalue("service").fault(status=503)

    def test_the_client_is_built_on_first_use(self, service_harness: ProviderHarness) -> None:
        provider = self.provider_of(service_harness)
        provider.is_available()
        checks = provider.health_check(service_harness.home)
        assert checks and all(isinstance(c, HealthCheck) for c in checks)
        assert checks[0].name.startswith(provider.name), checks[0].name
        assert provider.breaker is None, "no client may be built before the first call"

    def test_writes_while_down_never_raise(
        self, service_harness: ProviderHarness, request: pytest.FixtureRequest
    ) -> None:
        provider = self.provider_of(service_harness)
        self.fail_service(service_harness, request)
        service_harness.sync("Remember: my build server is called Kestrel.", "Noted.")
        service_harness.call("on_session_end", messages=[], reason="test")
        assert isinstance(provider.unsent_writes(), int)
        assert provider.unsent_writes() >= 0

    def test_shutdown_is_final(self, service_harness: ProviderHarness) -> None:
        provider = self.provider_of(service_harness)
        specs: list[ToolSpec] = list(service_harness.call("register_tools") or [])
        provider.shutdown()
        provider.shutdown()
        with pytest.raises(ServiceError):
            provider.api()
        ctx = ToolContext(session=service_harness.session.info)
        name, args = self.probe_tool
        probe = next((s for s in specs if s.name == name), None)
        assert probe is not None, f"probe tool {name} is not registered"
        result = probe.handler(dict(args), ctx)
        check_result_shape(result, tool=name)
        assert reports_failure(result), f"{name} after shutdown: {result[:200]}"

    def test_an_open_breaker_shows_in_health(
        self, service_harness: ProviderHarness, request: pytest.FixtureRequest
    ) -> None:
        provider = self.provider_of(service_harness)
        self.fail_service(service_harness, request)
        name, args = self.probe_tool
        for _ in range(self.breaker_threshold + 1):
            result = service_harness.session.call_tool(name, dict(args))
            assert reports_failure(result), result[:200]
        breaker = provider.breaker
        assert breaker is not None and breaker.state != "closed"
        checks = provider.health_check(service_harness.home)
        assert any(c.name == f"{provider.name} circuit breaker" and not c.ok for c in checks), [
            c.name for c in checks
        ]


__all__ = ["ServiceFrameChecks"]
