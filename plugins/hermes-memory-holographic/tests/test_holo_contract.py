"""The shared provider contract, run against the holographic fact store.

Holographic memory is curated, not transcribed: per the spec its per-turn ``sync`` is a
no-op, so the contract's round trips store facts through the provider's write path (the
built-in memory mirror, ``on_memory_write``) with the same facts and queries in English and
Chinese.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from hermes_memory_holographic.provider import HolographicProvider

from hermes_core.testing.contract import ProviderContract
from hermes_core.testing.harness import ProviderHarness


class TestHolographicContract(ProviderContract):
    provider_class = HolographicProvider
    settings: ClassVar[dict[str, Any]] = {}
    remember_via: ClassVar[Literal["sync", "memory_write"]] = "memory_write"

    def test_sync_is_a_no_op(self, harness: ProviderHarness) -> None:
        assert not harness.implements("sync")
        harness.sync(self.roundtrip_user, "Got it.")
        assert harness.prefetch(self.roundtrip_query) is None

    def test_repeated_writes_store_one_fact(self, harness: ProviderHarness) -> None:
        for _ in range(3):
            self.remember(harness, self.roundtrip_user)
        result = harness.prefetch(self.roundtrip_query)
        assert result is not None and result.text.count(self.roundtrip_expect) == 1
