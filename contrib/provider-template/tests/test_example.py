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


def test_recall_and_the_tool_are_named_after_the_provider(hermes_home: Path) -> None:
    """The recall label and the search tool follow ``ExampleProvider.name`` (one rename)."""
    harness = ProviderHarness(ExampleProvider, hermes_home)
    try:
        harness.sync("I deploy on Fridays")
        found = harness.prefetch("when do I deploy?")
        assert found is not None and found.label == ExampleProvider.name
        tool = f"{ExampleProvider.name.replace('-', '_')}_search"
        reply = json.loads(harness.session.call_tool(tool, {"query": "deploy"}))
        assert reply == {"success": True, "results": ["I deploy on Fridays"]}
    finally:
        harness.close()
