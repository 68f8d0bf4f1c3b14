"""chroma as an ExpiringProvider: an expiry date set for one user's memory takes it out of
prefetch once passed (and only that user's), stays listed, and leaves with the memory; the
recall reports one score per recalled memory."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from hermes_core.providers.inspect import expiring
from hermes_core.recall_pack import hits_shown

from hermes_memory_chroma.provider import ChromaProvider


def test_an_expired_memory_leaves_prefetch(
    make_provider: Callable[..., ChromaProvider], session_for: Callable[..., Any]
) -> None:
    provider = make_provider()
    assert expiring(provider) is provider
    trip = provider.store.add("alice", "Alice flies to Zanzibar in May.", type="fact").id
    provider.store.add("alice", "Alice flies a kite at the beach.", type="fact")
    provider.store.add("bob", "Bob flies to Zanzibar in June.", type="fact")
    query = "when does Alice fly to Zanzibar?"
    block = provider.prefetch(session_for("alice"), query)
    assert block is not None and "Zanzibar in May" in block.text
    # one score per recalled memory (lines under their [day] headers, after the title line)
    assert len(block.scores) == block.count == hits_shown(block.text) - 1 >= 1
    assert not provider.inspect_set_expiry("bob", trip, time.time() - 60)  # not bob's
    assert provider.inspect_set_expiry("alice", trip, time.time() - 60)
    listed = next(m for m in provider.inspect_memories("alice") if m.id == trip)
    assert listed.expires_at is not None and listed.expires_at < time.time()
    block = provider.prefetch(session_for("alice"), query)
    assert block is None or "Zanzibar in May" not in block.text
    bob = provider.prefetch(session_for("bob"), "when does Bob fly to Zanzibar?")
    assert bob is not None and "Zanzibar in June" in bob.text
    assert provider.inspect_set_expiry("alice", trip, time.time() + 86400)
    block = provider.prefetch(session_for("alice"), query)
    assert block is not None and "Zanzibar in May" in block.text
    provider.inspect_forget("alice", [trip])
    assert provider.expiry.expiries("alice") == {}
