"""The shared provider contract, run against the holographic fact store.

Holographic memory is curated, not transcribed: per the spec its per-turn ``sync`` is a
no-op, so the contract's sync→prefetch round trips are run through the provider's write
path instead (the built-in memory mirror, ``on_memory_write``), with the same facts and
queries in English and Chinese.
"""

from __future__ import annotations

from typing import Any, ClassVar

from hermes_memory_holographic.provider import HolographicProvider

from hermes_core import MemoryWrite
from hermes_core.testing.contract import ProviderContract
from hermes_core.testing.harness import ProviderHarness


def _remember(harness: ProviderHarness, text: str) -> None:
    harness.call("on_memory_write", write=MemoryWrite(action="add", target="user", content=text))


class TestHolographicContract(ProviderContract):
    provider_class = HolographicProvider
    settings: ClassVar[dict[str, Any]] = {}

    def test_sync_is_a_no_op(self, harness: ProviderHarness) -> None:
        assert not harness.implements("sync")
        harness.sync(self.roundtrip_user, "Got it.")
        assert harness.prefetch(self.roundtrip_query) is None

    def test_sync_then_prefetch_round_trips(self, harness: ProviderHarness) -> None:
        _remember(harness, self.roundtrip_user)
        result = harness.prefetch(self.roundtrip_query)
        assert result is not None and self.roundtrip_expect in result.text

    def test_sync_then_prefetch_round_trips_in_chinese(self, harness: ProviderHarness) -> None:
        _remember(harness, self.roundtrip_user_zh)
        result = harness.prefetch(self.roundtrip_query_zh)
        assert result is not None and self.roundtrip_expect_zh in result.text

    def test_repeated_sync_is_harmless(self, harness: ProviderHarness) -> None:
        for _ in range(3):
            _remember(harness, self.roundtrip_user)
        result = harness.prefetch(self.roundtrip_query)
        assert result is not None and result.text.count(self.roundtrip_expect) == 1
