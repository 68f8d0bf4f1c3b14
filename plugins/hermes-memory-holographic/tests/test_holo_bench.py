"""The holographic bench retriever satisfies the Retriever protocol and finds the right turns."""

from __future__ import annotations

from hermes_memory_holographic.provider import HolographicProvider

from hermes_core.testing.contract import RetrieverContract


class TestHolographicRetriever(RetrieverContract):
    provider_class = HolographicProvider
