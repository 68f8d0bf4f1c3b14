"""Offline guard and fixture helpers shared by provider test suites.

A provider's ``conftest.py`` keeps its own (autouse) fixtures and builds them from these::

    @pytest.fixture(autouse=True)
    def offline(monkeypatch: pytest.MonkeyPatch) -> None:
        block_network(monkeypatch, env_prefixes=("HINDSIGHT_",))

    @pytest.fixture
    def double() -> Iterator[HindsightDouble]:
        yield from serve_double(HindsightDouble(api_key="hs-test-key"))

    @pytest.fixture
    def make_provider(hermes_home: Path) -> Iterator[Callable[..., HindsightProvider]]:
        yield from provider_factory(
            lambda **s: HindsightProvider(HindsightSettings(**s), hermes_home)
        )
"""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol, TypeVar

import pytest

from hermes_core.testing.loopback import LoopbackServer

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex

P = TypeVar("P", bound="_Shuts")
D = TypeVar("D", bound="_HasServer")


class _Shuts(Protocol):
    def shutdown(self) -> None: ...


class _HasServer(Protocol):
    @property
    def server(self) -> LoopbackServer: ...


def is_loopback_address(address: Any) -> bool:
    """True for a socket address a test may connect to: a unix socket path (PostgreSQL),
    ``localhost``, or a loopback IP (127.0.0.0/8, ::1)."""
    if isinstance(address, str | bytes):
        return True
    host = address[0]
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def block_network(
    monkeypatch: pytest.MonkeyPatch,
    *,
    env_prefixes: Iterable[str] = (),
    env_names: Iterable[str] = (),
) -> None:
    """Make any non-loopback ``connect``/``connect_ex`` fail the test loudly
    (``AssertionError: network access attempted: ...``) and remove environment variables
    named in ``env_names`` or starting with one of ``env_prefixes`` so the outer
    environment never leaks in. Undone by ``monkeypatch`` at the end of the test."""
    prefixes = tuple(env_prefixes)
    for var in [v for v in os.environ if prefixes and v.startswith(prefixes)]:
        monkeypatch.delenv(var, raising=False)
    for var in env_names:
        monkeypatch.delenv(var, raising=False)

    def connect(self: socket.socket, address: Any) -> Any:
        if not is_loopback_address(address):
            raise AssertionError(f"network access attempted: {address!r}")
        return _real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> Any:
        if not is_loopback_address(address):
            raise AssertionError(f"network access attempted: {address!r}")
        return _real_connect_ex(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)


def serve_double(double: D) -> Iterator[D]:
    """Run ``double.server`` (a :class:`LoopbackServer`) for one test and yield ``double``;
    afterwards fail if any request or response broke the API description."""
    with double.server:
        yield double
    double.server.assert_no_violations()


def serve(server: LoopbackServer) -> Iterator[LoopbackServer]:
    """Run ``server`` for one test and yield it; afterwards fail on any API violation."""
    with server:
        yield server
    server.assert_no_violations()


def provider_factory(build: Callable[..., P]) -> Iterator[Callable[..., P]]:
    """Yield a factory that calls ``build(**settings)`` and remembers each provider; every
    provider made is shut down when the test ends."""
    made: list[P] = []

    def factory(**settings: Any) -> P:
        provider = build(**settings)
        made.append(provider)
        return provider

    yield factory
    for provider in made:
        provider.shutdown()


__all__ = ["block_network", "is_loopback_address", "provider_factory", "serve", "serve_double"]
