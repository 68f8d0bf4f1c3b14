"""Behaviour of the example provider beyond the contract."""

import json
from pathlib import Path

from hermes_core.testing.harness import ProviderHarness

from hermes_memory_example.provider import ExampleProvider


def test_users_are_isolated(hermes_home: Path) -> None:
    harness = ProviderHarness(ExampleProvider, hermes_home)
    try:
        provider = harness.provider
        assert isinstance(provider, ExampleProvider)
        provider.remember("alice", "Alice drinks oolong tea")
        provider.remember("bob", "Bob drinks espresso")
        assert provider.recall("alice", "What does Alice drink?") == ["Alice drinks oolong tea"]
    finally:
        harness.close()


def test_search_tool_rejects_missing_query(hermes_home: Path) -> None:
    harness = ProviderHarness(ExampleProvider, hermes_home)
    try:
        reply = json.loads(harness.session.call_tool("example_search", {}))
        assert reply["success"] is False and "query" in reply["error"]
    finally:
        harness.close()
