"""Fault tests every service (HTTP) provider inherits, run against a loopback double.

Declare the suite once in the conftest (:class:`~hermes_core.testing.service_suite.ProviderSuite`:
provider, double, settings, the key's environment variable) and the class needs only
``suite``, ``probe_tool`` and ``setup_asks``; the settings then get the breaker's
threshold and cooldown (and the suite's ``timeout_setting`` the :attr:`prefetch_timeout`).

Or subclass :class:`ServiceProviderContract` (the :class:`ProviderContract` checks, the
:class:`~hermes_core.testing.service_frame.ServiceFrameChecks` of the provider frame, plus these)
or just :class:`ServiceProviderFaults`, and provide::

    class TestHonchoService(ServiceProviderContract):
        provider_class = HonchoProvider
        key_setting = "HONCHO_API_KEY"              # a 401 message must name it
        probe_tool = ("honcho_search", {"query": "editor"})   # a tool call that hits the service

        def make_double(self) -> LoopbackServer:    # routes registered, not started
            return honcho_double()

        def service_settings(self, base_url: str) -> dict[str, Any]:
            return {"base_url": base_url, "api_key": "test-key", "retries": 0,
                    "failure_threshold": self.breaker_threshold,
                    "breaker_cooldown": self.breaker_cooldown}

``probe_tool`` must be a read-only call that reaches the service and takes a ``query``
argument (the two-user test replaces it). The settings must make the provider's breaker open
after :attr:`breaker_threshold`
consecutive failures and probe again after :attr:`breaker_cooldown` seconds. Every test
ends with zero OpenAPI violations on the double. The host's ``memory.prefetch_timeout`` is
:attr:`prefetch_timeout` here.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import pytest

from hermes_core.providers.base import MemoryProvider
from hermes_core.testing.contract import ProviderContract
from hermes_core.testing.harness import ProviderHarness
from hermes_core.testing.loopback import LoopbackServer
from hermes_core.testing.service_frame import ServiceFrameChecks
from hermes_core.testing.service_suite import ProviderSuite, server_of

SLACK_SECONDS = 0.5
"""A turn with a stuck service completes within ``prefetch_timeout`` plus this."""


def _error_of(result: str) -> str:
    data = json.loads(result)
    assert isinstance(data, dict), f"tool result must be a JSON object, got {result!r}"
    return str(data.get("error") or "")


CROSSOVER_CASES = [
    ("My locker code is 4417.", "What is my locker code?", "4417"),
    ("我的储物柜密码是九三七二。", "我的储物柜密码是什么？", "九三七二"),
]
"""``(fact, query, expect)`` in English and Chinese: what one user stores and another must
never get back."""

crossover = pytest.mark.parametrize(("fact", "query", "expect"), CROSSOVER_CASES)
"""Parametrise a two-user test over :data:`CROSSOVER_CASES`."""


class ServiceProviderFaults:
    """Fault tests: hang, timeout, 500, 401, malformed JSON, breaker, two users."""

    provider_class: ClassVar[type[MemoryProvider]]
    key_setting: ClassVar[str]
    probe_tool: ClassVar[tuple[str, dict[str, Any]]]
    breaker_threshold: ClassVar[int] = 3
    breaker_cooldown: ClassVar[float] = 0.5
    prefetch_timeout: ClassVar[float] = 1.0

    crossover_fact: ClassVar[str] = "My locker code is 4417 and my cat is called Pixel."
    crossover_query: ClassVar[str] = "What is my locker code?"
    crossover_expect: ClassVar[str] = "4417"
    crossover_fact_zh: ClassVar[str] = "我的储物柜密码是九三七二，我的猫叫墨墨。"
    crossover_query_zh: ClassVar[str] = "我的储物柜密码是什么？"
    crossover_expect_zh: ClassVar[str] = "九三七二"

    suite: ClassVar[ProviderSuite[Any] | None] = None
    """The suite's declaration; sets ``provider_class``, ``key_setting`` and
    ``breaker_fix_names`` (the key's variable) unless the class sets them."""

    contract_settings: ClassVar[Mapping[str, Any]] = {}
    """Settings the contract's providers get on top of the suite's."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        suite = cls.__dict__.get("suite")
        if suite is None:
            return
        cls.provider_class = suite.provider_class
        for name in ("key_setting", "breaker_fix_names"):
            if name not in cls.__dict__ and suite.key_env:
                setattr(cls, name, suite.key_env)

    def declared_suite(self) -> ProviderSuite[Any]:
        if self.suite is None:
            raise NotImplementedError("set suite, or override make_double and service_settings")
        return self.suite

    def make_double(self) -> LoopbackServer:
        """A :class:`LoopbackServer` with the service's routes registered (not started):
        the suite's double by default."""
        build = self.declared_suite().double
        assert build is not None, "the suite declares no double"
        return server_of(build())

    def service_settings(self, base_url: str) -> dict[str, Any]:
        """Provider settings pointing at ``base_url`` (see the module docstring)."""
        suite = self.declared_suite()
        timeout = {suite.timeout_setting: self.prefetch_timeout} if suite.timeout_setting else {}
        return suite.settings_for(
            base_url,
            **self.contract_settings,
            **timeout,
            failure_threshold=self.breaker_threshold,
            breaker_cooldown=self.breaker_cooldown,
        )

    # -- fixtures

    @pytest.fixture
    def service(self) -> Iterator[LoopbackServer]:
        """The running double; the test fails if any request or response broke the API
        document."""
        server = self.make_double()
        with server:
            yield server
        server.assert_no_violations()

    @pytest.fixture
    def service_harness(
        self, hermes_home: Path, service: LoopbackServer, monkeypatch: pytest.MonkeyPatch
    ) -> Iterator[ProviderHarness]:
        monkeypatch.setenv("HERMES_MEMORY__PREFETCH_TIMEOUT", str(self.prefetch_timeout))
        made = ProviderHarness(
            self.provider_class, hermes_home, self.service_settings(service.base_url)
        )
        yield made
        service.clear_faults()
        made.close()

    # -- helpers

    def probe(self, harness: ProviderHarness) -> str:
        name, args = self.probe_tool
        return harness.session.call_tool(name, dict(args))

    def timed_turn(self, harness: ProviderHarness, text: str) -> tuple[str, float]:
        started = time.monotonic()
        block = harness.session.before_turn(text)
        return block, time.monotonic() - started

    # -- the tests

    def test_hanging_service_does_not_hold_the_turn(
        self, service_harness: ProviderHarness, service: LoopbackServer
    ) -> None:
        service.fault(hang=30)
        block, elapsed = self.timed_turn(service_harness, self.crossover_query)
        assert elapsed <= self.prefetch_timeout + SLACK_SECONDS, (
            f"before_turn took {elapsed:.2f}s with a hanging service"
        )
        assert isinstance(block, str)
        started = time.monotonic()
        service_harness.session.after_turn(self.crossover_query, "I don't know yet.")
        assert time.monotonic() - started <= self.prefetch_timeout + SLACK_SECONDS

    def test_slow_service_times_out_within_the_budget(
        self, service_harness: ProviderHarness, service: LoopbackServer
    ) -> None:
        service.fault(delay=self.prefetch_timeout * 4)
        _, elapsed = self.timed_turn(service_harness, self.crossover_query)
        assert elapsed <= self.prefetch_timeout + SLACK_SECONDS

    def test_server_error_lets_the_turn_go_on(
        self, service_harness: ProviderHarness, service: LoopbackServer
    ) -> None:
        service.fault(status=500)
        block, elapsed = self.timed_turn(service_harness, self.crossover_query)
        assert isinstance(block, str)
        assert elapsed <= self.prefetch_timeout + SLACK_SECONDS
        service_harness.session.after_turn(self.crossover_query, "Noted.")
        assert service_harness.host.flush(10)
        error = _error_of(self.probe(service_harness))
        assert error, "a tool call against a failing service must return a JSON error"

    def test_unauthorised_names_the_key_setting(
        self,
        service_harness: ProviderHarness,
        service: LoopbackServer,
        caplog: pytest.LogCaptureFixture,
    ) -> None:
        service.fault(status=401, detail="Invalid API key")
        error = _error_of(self.probe(service_harness))
        assert self.key_setting in error, f"401 error must name {self.key_setting}: {error}"
        for _ in range(self.breaker_threshold):
            self.probe(service_harness)
        before = len(service.requests)
        paused = _error_of(self.probe(service_harness))
        assert len(service.requests) == before, "breaker must stop calls after repeated 401s"
        assert paused

    def test_malformed_json_is_logged_not_raised(
        self,
        service_harness: ProviderHarness,
        service: LoopbackServer,
        caplog: pytest.LogCaptureFixture,
    ) -> None:
        service.fault(malformed=True)
        with caplog.at_level(logging.WARNING):
            block, _ = self.timed_turn(service_harness, self.crossover_query)
            error = _error_of(self.probe(service_harness))
        assert isinstance(block, str)
        assert "malformed" in error.lower(), error
        assert any(
            "malformed" in record.getMessage().lower() and record.levelno >= logging.WARNING
            for record in caplog.records
        ), "malformed JSON must be logged"

    def test_breaker_opens_after_the_configured_failures_and_closes_again(
        self,
        service_harness: ProviderHarness,
        service: LoopbackServer,
        caplog: pytest.LogCaptureFixture,
    ) -> None:
        service.fault(status=503)
        with caplog.at_level(logging.INFO):
            for _ in range(self.breaker_threshold):
                assert _error_of(self.probe(service_harness))
            before = len(service.requests)
            paused = _error_of(self.probe(service_harness))
            assert len(service.requests) == before, "an open breaker must not call the service"
            assert "pause" in paused.lower(), paused
            opened = [r for r in caplog.records if "circuit breaker open" in r.getMessage()]
            assert len(opened) == 1, [r.getMessage() for r in opened]
            service.clear_faults()
            deadline = time.monotonic() + self.breaker_cooldown + 10
            while time.monotonic() < deadline:
                time.sleep(self.breaker_cooldown / 2)
                if not _error_of(self.probe(service_harness)):
                    break
            else:
                pytest.fail("the breaker never closed after the service recovered")
        closed = [r for r in caplog.records if "circuit breaker closed" in r.getMessage()]
        assert len(closed) == 1

    @pytest.mark.parametrize("lang", ["en", "zh"])
    def test_two_users_never_share(
        self, service_harness: ProviderHarness, service: LoopbackServer, lang: str
    ) -> None:
        fact, query, expect = (
            (self.crossover_fact, self.crossover_query, self.crossover_expect)
            if lang == "en"
            else (self.crossover_fact_zh, self.crossover_query_zh, self.crossover_expect_zh)
        )
        host = service_harness.host
        owner = service_harness.session
        owner.before_turn(fact)
        owner.after_turn(fact, "Noted." if lang == "en" else "好的，记住了。")
        assert host.flush(10)
        other = host.session(source="test", user_id="someone-else")
        try:
            assert expect not in other.before_turn(query)
            name, args = self.probe_tool
            assert expect not in other.call_tool(name, {**args, "query": query})
            assert expect in owner.before_turn(query), "the owner must recall their own fact"
        finally:
            other.close()


class ServiceProviderContract(ServiceProviderFaults, ServiceFrameChecks, ProviderContract):
    """:class:`ProviderContract` with its ``harness`` pointed at the double, plus the fault
    tests and the :class:`~hermes_core.testing.service_frame.ServiceFrameChecks`."""

    @pytest.fixture
    def harness(
        self, hermes_home: Path, service: LoopbackServer, monkeypatch: pytest.MonkeyPatch
    ) -> Iterator[ProviderHarness]:
        monkeypatch.setenv("HERMES_MEMORY__PREFETCH_TIMEOUT", str(self.prefetch_timeout))
        made = ProviderHarness(
            self.provider_class, hermes_home, self.service_settings(service.base_url)
        )
        yield made
        made.close()


__all__ = [
    "CROSSOVER_CASES",
    "SLACK_SECONDS",
    "ServiceProviderContract",
    "ServiceProviderFaults",
    "crossover",
]
