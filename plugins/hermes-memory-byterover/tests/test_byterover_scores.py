"""``brv search`` reports a score per result: the recall block carries them
(MemoryContext.scores) when every result has one, so the recall trace shows them per memory.
``brv query`` answers with one synthesized text: no scores."""

from __future__ import annotations

from collections.abc import Callable

from hermes_memory_byterover import ByteRoverProvider
from hermes_memory_byterover.provider import search_text
from hermes_memory_byterover.runner import BrvAnswer

from hermes_core.testing.harness import ProviderHarness, traced_source

QUERY = "Which editor do I use every day?"


def _seeded(provider_harness: Callable[..., ProviderHarness], command: str) -> ProviderHarness:
    settings = {"curate_detach": False, "recall_command": command}
    harness = provider_harness(ByteRoverProvider, settings)
    harness.sync("Please remember that I use the Helix editor every day.", "Noted.")
    harness.sync("I drink oolong tea, 我喜欢乌龙茶, next to my editor.", "Nice.")
    return harness


def test_the_trace_gets_the_search_scores(
    provider_harness: Callable[..., ProviderHarness],
) -> None:
    source = traced_source(_seeded(provider_harness, "search"), QUERY)
    assert source.count == 2
    best, second = source.scores
    assert 0 < second < best <= 1  # the fake's share of the query's words, best first
    assert "Helix" in source.text.splitlines()[1]


def test_query_mode_has_no_scores(provider_harness: Callable[..., ProviderHarness]) -> None:
    source = traced_source(_seeded(provider_harness, "query"), QUERY)
    assert "Helix" in source.text and source.scores == ()


def test_no_scores_when_one_is_missing() -> None:
    results = [
        {"title": "a", "path": "a.md", "score": 0.9, "excerpt": "one"},
        {"title": "b", "path": "b.md", "excerpt": "两个"},
    ]
    recalled = search_text(BrvAnswer({"results": results}, (), 0))
    assert recalled.count == 2 and recalled.scores == ()
    results[1]["score"] = 0.4
    assert search_text(BrvAnswer({"results": results}, (), 0)).scores == (0.9, 0.4)
