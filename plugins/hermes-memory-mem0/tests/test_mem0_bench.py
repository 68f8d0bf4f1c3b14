"""The mem0 OSS bench retriever satisfies the Retriever protocol and finds the right turns."""

from __future__ import annotations

from hermes_memory_mem0 import Mem0Provider

from hermes_core.testing.contract import RetrieverContract


class TestMem0Retriever(RetrieverContract):
    provider_class = Mem0Provider
