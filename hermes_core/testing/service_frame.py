"""``ServiceFrameChecks``: what every provider built on
:class:`~hermes_core.providers.service.ServiceProvider` must show, whatever its API.

Mixed into :class:`~hermes_core.testing.service_faults.ServiceProviderContract` (so every
service plugin's suite runs it); a provider without a loopback double (a CLI) subclasses it
with its own ``service_harness`` fixture and sets ``breaker_fault`` to None. The checks:

* the provider is a ``ServiceProvider`` and builds its client lazily (constructing it,
  ``is_available`` and ``health_check`` make no call);
* a write while the service fails never raises, and what the provider could not deliver is
  counted by ``unsent_writes()``;
* after ``shutdown`` (twice) ``api()`` raises ``ServiceError``, ``sync`` and ``prefetch``
  neither raise nor call the service, and every tool answers a failure in the one shape
  (``"success": false``);
* an open circuit breaker shows in ``health_check`` (a failing check named
  ``"<name> circuit breaker"``, its fix naming :attr:`breaker_fix_names` when set), and the
  breaker blocks further calls;
* ``hermes-memory memory setup <name>`` asks exactly :attr:`setup_asks`, in that order
  (skipped while it is empty), and every environment variable a field names as its
  ``env_var`` and accepts (Hermes Agent's ``HONCHO_API_KEY``…; :func:`env_fields`) fills that
  field, no secret in the settings' ``repr``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, get_args

import pytest
from pydantic import SecretStr

from hermes_core.providers.base import ProviderSettings, load_provider_settings
from hermes_core.providers.service import ServiceError, ServiceProvider
from hermes_core.testing.harness import ProviderHarness
from hermes_core.tool_results import check_result_shape, reports_failure
from hermes_core.types import HealthCheck, ToolContext, ToolSpec


class ServiceFrameChecks:
    """Frame checks; needs a ``service_harness`` fixture and a ``probe_tool``."""

    provider_class: ClassVar[type[Any]]
    probe_tool: ClassVar[tuple[str, dict[str, Any]]]
    breaker_threshold: ClassVar[int] = 3
    breaker_fix_names: ClassVar[str] = ""
    """Text the open breaker's health fix must contain (e.g. the key's env var)."""
    setup_asks: ClassVar[tuple[str, ...]] = ()
    """The fields ``hermes-memory memory setup`` asks, in order."""

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

    def requests_seen(self, request: pytest.FixtureRequest) -> int | None:
        """Requests the double has answered so far (None without a double that counts)."""
        try:
            service = request.getfixturevalue("service")
        except pytest.FixtureLookupError:
            return None
        seen = getattr(service, "requests", None)
        return len(seen) if seen is not None else None

    def test_shutdown_is_final(
        self, service_harness: ProviderHarness, request: pytest.FixtureRequest
    ) -> None:
        provider = self.provider_of(service_harness)
        specs: list[ToolSpec] = list(service_harness.call("register_tools") or [])
        provider.shutdown()
        provider.shutdown()
        with pytest.raises(ServiceError):
            provider.api()
        before = self.requests_seen(request)
        service_harness.sync("after shutdown", "ok")  # never raises, never calls
        assert service_harness.prefetch("anything") is None
        assert self.requests_seen(request) == before, "a shut-down provider called the service"
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
        breaker_checks = [c for c in checks if c.name == f"{provider.name} circuit breaker"]
        assert breaker_checks and not breaker_checks[0].ok, [c.name for c in checks]
        assert self.breaker_fix_names in breaker_checks[0].fix, breaker_checks[0].fix

    def test_setup_asks_its_fields(self) -> None:
        if not self.setup_asks:
            pytest.skip("setup_asks not declared")
        from hermes_core.cli.prompts import setup_fields

        asked = [name for name, _ in setup_fields(self.provider_class.Settings)]
        assert asked == list(self.setup_asks)

    def test_environment_variables_fill_the_settings(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        cls = self.provider_class
        fields = env_fields(cls.Settings)
        if not fields:
            pytest.skip("no field takes another program's environment variable")
        for env, (value, _, _) in fields.items():
            monkeypatch.setenv(env, value)
        loaded = load_provider_settings(cls.Settings, cls.name, tmp_path, {})
        for env, (value, field, expected) in fields.items():
            got = getattr(loaded, field)
            if isinstance(got, SecretStr):
                assert value not in repr(loaded), f"{field} shows in repr"
                got = got.get_secret_value()
            assert got == expected, f"{env}={value!r} gave {field}={got!r}"


def env_fields(settings: type[ProviderSettings]) -> dict[str, tuple[str, str, str]]:
    """``{ENV_VAR: (value to set, field, value expected)}`` for every text field whose
    ``env_var`` (e.g. ``HONCHO_API_KEY``, Hermes Agent's name) is also one of its
    ``validation_alias`` choices; a URL field gets a URL with a trailing slash (expected
    without it)."""
    out: dict[str, tuple[str, str, str]] = {}
    for name, info in settings.model_fields.items():
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, Mapping) else {}
        env = extra.get("env_var")
        choices = getattr(info.validation_alias, "choices", ())
        kinds = set(get_args(info.annotation) or (info.annotation,)) - {type(None)}
        if not isinstance(env, str) or env not in choices or not kinds <= {str, SecretStr}:
            continue
        if SecretStr in kinds:
            out[env] = ("env-secret-4417", name, "env-secret-4417")
        elif name.endswith("url"):
            out[env] = ("http://127.0.0.1:9/", name, "http://127.0.0.1:9")
        else:
            out[env] = ("envvalue1", name, "envvalue1")
    return out


__all__ = ["ServiceFrameChecks", "env_fields"]
