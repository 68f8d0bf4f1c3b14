"""The recall block carries each fact's ``scores.final`` (MemoryContext.scores) when the API
returned one for every fact shown, so the recall trace shows it per memory."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from conftest import KEY
from hermes_memory_hindsight import HindsightProvider
from hermes_memory_hindsight.api import Fact

from hermes_core.testing.harness import SCORE_CASES, ScoreCase, traced_source
from hermes_core.testing.service_suite import HarnessFor


def test_the_trace_gets_the_api_scores(harness_for: HarnessFor) -> None:
    harness = harness_for(retain_async=False, recall_sync=True)
    harness.sync("My favourite editor is Helix, I use Helix every day.")
    harness.sync("I drink oolong tea, 我喜欢乌龙茶 while I use the editor.")
    source = traced_source(harness, "which editor do I use every day?")
    assert source.count == 2 and len(source.scores) == 2
    best, second = source.scores
    assert 0 < second < best <= 1  # the double's share of the query's words, best first
    assert "Helix" in source.text.splitlines()[1]


@pytest.mark.parametrize("case", SCORE_CASES, ids=lambda case: case.name)
def test_scores_follow_the_lines(
    make_provider: Callable[..., HindsightProvider], case: ScoreCase
) -> None:
    provider = make_provider(api_url="http://127.0.0.1:9", api_key=KEY)
    case.check(provider.format_context, lambda id_, text, score: Fact(id_, text, score=score))
