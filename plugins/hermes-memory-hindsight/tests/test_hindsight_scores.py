"""The recall block carries each fact's ``scores.final`` (MemoryContext.scores) when the API
returned one for every fact shown, so the recall trace shows it per memory."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from hermes_memory_hindsight import HindsightProvider
from hermes_memory_hindsight.api import Fact
from hindsight_double import HindsightDouble

from hermes_core.testing.harness import ProviderHarness, traced_source

KEY = "hs-test-key"


def test_the_trace_gets_the_api_scores(hermes_home: Path, double: HindsightDouble) -> None:
    settings = {
        "api_url": double.server.base_url,
        "api_key": KEY,
        "recall_types": "world,experience,observation",
        "retries": 0,
        "retain_async": False,
        "recall_sync": True,
    }
    harness = ProviderHarness(HindsightProvider, hermes_home, settings)
    try:
        harness.sync("My favourite editor is Helix, I use Helix every day.")
        harness.sync("I drink oolong tea, 我喜欢乌龙茶 while I use the editor.")
        source = traced_source(harness, "which editor do I use every day?")
    finally:
        harness.close()
    assert source.count == 2 and len(source.scores) == 2
    best, second = source.scores
    assert 0 < second < best <= 1  # the double's share of the query's words, best first
    assert "Helix" in source.text.splitlines()[1]


def test_scores_follow_the_lines(make_provider: Callable[..., HindsightProvider]) -> None:
    provider = make_provider(api_url="http://127.0.0.1:9", api_key=KEY)
    items = [
        Fact("a", "Alice likes tea", score=0.91),
        Fact("b", "  ", score=0.5),
        Fact("c", "Alice 喜欢乌龙茶", score=0.42),
    ]
    block = provider.format_context(items)
    assert block is not None and block.count == 2
    assert block.scores == (0.91, 0.42)  # the blank fact is not shown, nor its score
    assert [line for line in block.text.splitlines() if line.startswith("- ")] == [
        "- Alice likes tea",
        "- Alice 喜欢乌龙茶",
    ]


def test_no_scores_when_one_is_missing(make_provider: Callable[..., HindsightProvider]) -> None:
    provider = make_provider(api_url="http://127.0.0.1:9", api_key=KEY)
    block = provider.format_context([Fact("a", "one", score=0.9), Fact("b", "two")])
    assert block is not None and block.scores == () and block.count == 2
