"""The shared provider contract, run against mem0 in oss mode (real mem0ai, offline)."""

from __future__ import annotations

from typing import Any, ClassVar

from hermes_memory_mem0.provider import Mem0Provider

from hermes_core.testing.contract import ProviderContract


class TestMem0Contract(ProviderContract):
    provider_class = Mem0Provider
    settings: ClassVar[dict[str, Any]] = {"mode": "oss"}
