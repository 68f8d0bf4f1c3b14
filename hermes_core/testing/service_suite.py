"""A provider's test suite declared once: :class:`ProviderSuite` and the fixtures built from it.

A provider's ``tests/conftest.py`` names its provider, its loopback double and the settings
every test starts from, and registers this module as a pytest plugin::

    pytest_plugins = ["hermes_core.testing.service_suite"]

    SUITE = ProviderSuite(
        HindsightProvider,
        double=lambda: HindsightDouble(api_key=KEY),
        url_setting="api_url",
        settings={"api_key": KEY, "retries": 0},
        env_prefixes=("HINDSIGHT_",),
    )


    provider_suite = SUITE.fixture()

The fixtures (none does anything until the suite's tests ask for it, except ``offline``):

* ``offline`` (autouse): any non-loopback connect fails the test; the suite's environment
  variables from the outer environment are cleared (``offline.block_network``);
* ``double``: the suite's double, serving for the test; the test fails if any request or
  response broke the API document;
* ``make_provider``: ``make_provider(**settings)`` → a provider in ``provider_home`` (the
  ``hermes_home`` unless the conftest overrides ``provider_home``), shut down after the test;
* ``provider_for``: ``provider_for(**extra)`` → ``make_provider`` with the suite's settings
  pointed at the double;
* ``harness_for``: ``harness_for(**extra)`` → a
  :class:`~hermes_core.testing.harness.ProviderHarness` on ``hermes_home`` with the suite's
  settings pointed at the double, closed after the test; ``harness``: ``harness_for()``;
* ``session_of``: ``session_of(user_id="alice", session_id="s1")`` → ``SessionInfo`` in
  ``hermes_home``; ``alice``: ``session_of()``.

:class:`~hermes_core.testing.service_faults.ServiceProviderContract` takes the same
declaration (``suite = SUITE``): the double, the settings and the key's environment
variable then come from it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

import pytest

from hermes_core.providers.base import MemoryProvider
from hermes_core.testing.fakes import make_session_info, make_turn
from hermes_core.testing.harness import ProviderHarness
from hermes_core.testing.loopback import LoopbackServer
from hermes_core.testing.offline import block_network, provider_factory
from hermes_core.types import MemoryWrite, SessionInfo, Turn

P = TypeVar("P", bound=MemoryProvider)

HarnessFor = Callable[..., ProviderHarness]
"""The type of the ``harness_for`` fixture."""


def server_of(double: Any) -> LoopbackServer:
    """The :class:`LoopbackServer` of ``double``: the double itself or its ``server``."""
    server = double if isinstance(double, LoopbackServer) else getattr(double, "server", None)
    assert isinstance(server, LoopbackServer), f"{double!r} has no LoopbackServer"
    return server


@dataclass(frozen=True)
class ProviderSuite(Generic[P]):
    """What a provider's tests share (see the module docstring)."""

    provider_class: type[P]
    double: Callable[[], Any] | None = None
    """Builds the loopback double: a ``LoopbackServer`` or an object with one as ``server``."""
    settings: Mapping[str, Any] = field(default_factory=dict)
    """Settings every provider of the suite starts from (the URL aside)."""
    url_setting: str = "base_url"
    """The settings field that takes the service's URL."""
    timeout_setting: str | None = None
    """The settings field of the request timeout (the contract sets it to its budget)."""
    key_env: str = ""
    """The API key's environment variable (a 401 error and an open breaker must name it)."""
    env_prefixes: tuple[str, ...] = ()
    env_names: tuple[str, ...] = ()
    """Environment variables cleared for every test (by prefix and by name)."""

    def settings_for(self, base_url: str, **extra: Any) -> dict[str, Any]:
        """The suite's settings pointed at ``base_url``, with ``extra`` on top."""
        return {self.url_setting: base_url, **self.settings, **extra}

    def fixture(self) -> Any:
        """The conftest's ``provider_suite`` fixture, answering this declaration:
        ``provider_suite = SUITE.fixture()``."""
        return pytest.fixture(name="provider_suite")(lambda: self)

    def build(self, home: Path, **settings: Any) -> P:
        """A provider made from ``settings`` (validated by the provider's ``Settings``)."""
        cls = self.provider_class
        return cls(cls.Settings(**settings), home)


class _Queues(Protocol):
    @property
    def pending(self) -> int: ...


class _QueuingProvider(Protocol):
    """A provider whose unsent writes wait in an ``outbox`` (the service frame's)."""

    @property
    def outbox(self) -> _Queues: ...

    def sync(self, session: SessionInfo, turn: Turn) -> None: ...

    def on_memory_write(self, session: SessionInfo, write: MemoryWrite) -> None: ...


def write_through_an_outage(
    provider: _QueuingProvider,
    session: SessionInfo,
    server: LoopbackServer,
    stored: Callable[[], Sequence[Any]],
) -> None:
    """While ``server`` answers 503: a synced turn (``s1``, turn 1) and a mirrored user fact
    wait in the provider's outbox and nothing is ``stored()``; once it is back, the next
    turn (a Chinese one) delivers all three and the outbox is empty. The caller then checks
    what was stored, in order."""
    with server.down():
        provider.sync(session, make_turn("I deploy with Ansible.", "ok", session_id="s1"))
        provider.on_memory_write(session, MemoryWrite("add", "user", "Prefers tea."))
        assert provider.outbox.pending == 2 and not stored()
    provider.sync(session, make_turn("我住在杭州。", "好的", session_id="s1", number=2))
    assert provider.outbox.pending == 0


@pytest.fixture(autouse=True)
def offline(provider_suite: ProviderSuite[Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """Any non-loopback connection attempt fails the test loudly; the suite's environment
    variables from the outer environment never leak in."""
    block_network(
        monkeypatch, env_prefixes=provider_suite.env_prefixes, env_names=provider_suite.env_names
    )


@pytest.fixture
def double(provider_suite: ProviderSuite[Any]) -> Iterator[Any]:
    """The suite's double, serving on 127.0.0.1 for the test; API violations fail it."""
    if provider_suite.double is None:
        pytest.fail("this ProviderSuite declares no double")
    made = provider_suite.double()
    server = server_of(made)
    with server:
        yield made
    server.assert_no_violations()


@pytest.fixture
def provider_home(hermes_home: Path) -> Path:
    """Where ``make_provider`` builds providers (override it in a conftest to move them)."""
    return hermes_home


@pytest.fixture
def make_provider(
    provider_suite: ProviderSuite[P], provider_home: Path
) -> Iterator[Callable[..., P]]:
    """``make_provider(**settings)``; every provider made is shut down after the test."""
    yield from provider_factory(lambda **s: provider_suite.build(provider_home, **s))


@pytest.fixture
def provider_for(
    provider_suite: ProviderSuite[P], make_provider: Callable[..., P], double: Any
) -> Callable[..., P]:
    """``provider_for(**extra)``: ``make_provider`` with the suite's settings pointed at the
    double."""
    base_url = server_of(double).base_url
    return lambda **extra: make_provider(**provider_suite.settings_for(base_url, **extra))


@pytest.fixture
def harness_for(
    provider_suite: ProviderSuite[Any],
    provider_harness: Callable[..., ProviderHarness],
    double: Any,
) -> HarnessFor:
    """``harness_for(**extra)``: a harness on ``hermes_home`` with the suite's settings
    pointed at the double; closed after the test."""
    base_url = server_of(double).base_url

    def build(**extra: Any) -> ProviderHarness:
        settings = provider_suite.settings_for(base_url, **extra)
        return provider_harness(provider_suite.provider_class, settings)

    return build


@pytest.fixture
def harness(harness_for: HarnessFor) -> ProviderHarness:
    """``harness_for()``: a harness with the suite's settings as they are."""
    return harness_for()


@pytest.fixture
def session_of(hermes_home: Path) -> Callable[..., SessionInfo]:
    """``session_of(user_id="alice", session_id="s1")``: hook arguments for that user's
    session in ``hermes_home``."""

    def made(user_id: str | None = "alice", session_id: str = "s1") -> SessionInfo:
        return make_session_info(hermes_home, session_id=session_id, user_id=user_id)

    return made


@pytest.fixture
def alice(session_of: Callable[..., SessionInfo]) -> SessionInfo:
    """Session ``s1`` of user ``alice`` (``session_of()``): the user a test acts as."""
    return session_of()


__all__ = ["HarnessFor", "ProviderSuite", "server_of", "write_through_an_outage"]
